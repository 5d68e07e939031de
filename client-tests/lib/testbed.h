/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the client tests: where the share is mounted, how to
 * ask the server guest (tb-serverd) to change its own disk, and bounded
 * waits. Header-only so each test stays one static binary.
 */
#ifndef TESTBED_H
#define TESTBED_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mark.h"

#define TB_SHARE_MNT	"/mnt/share"
#define TB_ENV_FILE	"/mnt/testbed/testbed.env"
#define TB_SERVER_PORT	7070

/*
 * Where the share is mounted: /mnt/share, or TB_SHARE_MNT's value in the
 * environment (the mount variants run the same cases on mounts of their
 * own, side by side).
 */
static inline const char *tb_share_mnt(void)
{
	const char *mnt = getenv("TB_SHARE_MNT");

	return mnt && *mnt ? mnt : TB_SHARE_MNT;
}

static inline double tb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A name unique to this process and call, for files the test creates. */
static inline void tb_unique(char *buf, size_t len, const char *prefix)
{
	static unsigned int seq;

	snprintf(buf, len, "%s-%d-%u", prefix, (int)getpid(), seq++);
}

/* The value of @key in the KEY=value file @path, into @val; 0 or -errno. */
static inline int tb_conf_value(const char *path, const char *key, char *val,
				size_t len)
{
	char line[256];
	size_t klen = strlen(key);
	FILE *f = fopen(path, "r");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != '=')
			continue;
		line[strcspn(line, "\n")] = '\0';
		rc = strlen(line + klen + 1) < len ? 0 : -EOVERFLOW;
		if (!rc)
			strcpy(val, line + klen + 1);
		break;
	}
	fclose(f);
	return rc;
}

/* The server's address, from the staging folder's testbed.env. */
static inline int tb_server_addr(struct sockaddr_in *sa)
{
	char ip[32];
	int rc = tb_conf_value(TB_ENV_FILE, "SERVER_IP", ip, sizeof(ip));

	if (rc)
		return rc;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(TB_SERVER_PORT);
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

/*
 * Send one request line to tb-serverd on the server guest; return 0 and
 * the value it answered (or -1), or -errno from the server or the network.
 */
static inline int tb_server(long long *val, const char *fmt, ...)
{
	struct sockaddr_in sa;
	char req[1024], reply[256];
	va_list ap;
	ssize_t n;
	int s, rc, err;

	va_start(ap, fmt);
	n = vsnprintf(req, sizeof(req) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (ssize_t)sizeof(req) - 1)
		return -EINVAL;
	req[n++] = '\n';
	rc = tb_server_addr(&sa);
	if (rc)
		return rc;
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		close(s);
		return rc;
	}
	if (write(s, req, n) != n) {
		close(s);
		return -EIO;
	}
	/* a watched change may signal us before the reply comes */
	do
		n = read(s, reply, sizeof(reply) - 1);
	while (n < 0 && errno == EINTR);
	close(s);
	if (n <= 0)
		return -EIO;
	reply[n] = '\0';
	if (!strncmp(reply, "ok", 2)) {
		if (val)
			*val = reply[2] == ' ' ? atoll(reply + 3) : -1;
		return 0;
	}
	err = 0;
	if (sscanf(reply, "err %d", &err) != 1 || err <= 0)
		err = EIO;
	return -err;
}

/*
 * Ask tb-serverd "@op @name" every @poll_ms until it answers @want or
 * @seconds pass; the count it last answered, or -1.
 */
static inline long long tb_wait_count(const char *op, const char *name,
				      long long want, double seconds,
				      int poll_ms)
{
	double end = tb_now() + seconds;
	long long n = -1;

	do {
		if (tb_server(&n, "%s %s", op, name))
			n = -1;
		if (n == want)
			break;
		usleep(poll_ms * 1000);
	} while (tb_now() < end);
	return n;
}

/*
 * Wait until smbd holds @want handles on share/@name: a watch ends without
 * making its closer wait for the server, so its handle goes shortly after.
 * The count it last had, or -1.
 */
static inline long long tb_wait_opens(const char *name, long long want,
				      double seconds)
{
	return tb_wait_count("opens", name, want, seconds, 250);
}

/*
 * Wait until smbd holds @want change-notify requests registered on
 * share/@name ("." for the share's root); the count it last had, or -1.
 */
static inline long long tb_wait_notifies(const char *name, long long want,
					 double seconds)
{
	return tb_wait_count("notifies", name, want, seconds, 200);
}

/*
 * How many remote watches /proc/fs/cifs/DebugData lists now, on every
 * mount: its "Notify: PATH filter ..." lines, not its other Notify lines
 * (the directories left without one); -1 when it cannot be read.
 */
static inline int tb_listed_watches(void)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen("/proc/fs/cifs/DebugData", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "Notify: ") && strstr(line, " filter ");
	fclose(f);
	return n;
}

/* Wait until @path exists; 1 when it does. */
static inline int tb_wait_file(const char *path, double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (!access(path, F_OK))
			return 1;
		usleep(200 * 1000);
	} while (tb_now() < end);
	return 0;
}

/*
 * A change through a second, independent SMB session (smbclient running
 * @fmt's commands on //server/share); smbclient's exit status.
 */
static inline int tb_second_session(const char *fmt, ...)
{
	char cmds[512], line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmds, sizeof(cmds), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line),
		 "smbclient -m SMB3 -A /etc/testbed/cifs.cred //server/share -c '%s' >/dev/null 2>&1",
		 cmds);
	return system(line);
}

/* Whether a directory lists `name` now. */
static inline int tb_dir_lists(const char *dir, const char *name)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strcmp(de->d_name, name)) {
			found = 1;
			break;
		}
	closedir(d);
	return found;
}

/* Entries of @dir, but "." and ".."; -1 when it cannot be read. */
static inline long long tb_count_entries(const char *dir)
{
	struct dirent *de;
	long long n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Poll tb_dir_lists() for at most `seconds`; 1 when seen. */
static inline int tb_wait_listed(const char *dir, const char *name, double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (tb_dir_lists(dir, name))
			return 1;
		usleep(100 * 1000);
	} while (tb_now() < end);
	return 0;
}

/*
 * Wait at most `seconds` for a signal of `set` (blocked by the caller, so
 * none is lost between the change and the wait); its number, or -1. A
 * signal received is marked on the wire, for the capture's latencies.
 */
static inline int tb_wait_sig(const sigset_t *set, double seconds, siginfo_t *si)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};
	int sig = sigtimedwait(set, si, &ts);

	if (sig > 0)
		tb_mark("signal", tb_test_id(), "sig=%d fd=%d", sig, si->si_fd);
	return sig;
}

/*
 * Whether a line of the file at `path` (a /proc or tracefs file, read
 * whole) holds both `a` and `b` (b may be NULL); -errno if unreadable.
 */
static inline int tb_file_has_line(const char *path, const char *a,
				   const char *b)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, a) && (!b || strstr(line, b)))
			found = 1;
	fclose(f);
	return found;
}

/* Poll until a line of @path holds @a and @b, for at most @seconds. */
static inline int tb_wait_line(const char *path, const char *a, const char *b,
			       double seconds)
{
	double end = tb_now() + seconds;
	int rc;

	do {
		rc = tb_file_has_line(path, a, b);
		if (rc)
			return rc;
		usleep(100 * 1000);
	} while (tb_now() < end);
	return 0;
}

/* Write a short string to a /proc, /sys or tracefs file; 0 or -errno. */
static inline int tb_write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

/*
 * The directory a test watches: made on the server's own disk, so the
 * client's cache knows nothing of it yet, with its name relative to the
 * share and its path on the client.
 */
struct tb_dir {
	char name[64];
	char path[128];
};

/* Make a fresh tb_dir on the server and wait until the client lists it. */
static inline int tb_server_dir(struct tb_dir *d, const char *prefix)
{
	tb_unique(d->name, sizeof(d->name), prefix);
	if (snprintf(d->path, sizeof(d->path), "%s/%s", tb_share_mnt(),
		     d->name) >= (int)sizeof(d->path))
		return -1;
	if (tb_server(NULL, "mkdir %s", d->name))
		return -1;
	return tb_wait_listed(tb_share_mnt(), d->name, 10) ? 0 : -1;
}

/* nftw() callback of tb_remove_tree(): children first, links not followed. */
static inline int tb_remove_entry(const char *path, const struct stat *st,
				  int type, struct FTW *ftw)
{
	return remove(path);
}

/*
 * Remove a test's tree through the client's mount; 0 or -1. In the test's
 * own process: a shell and rm(1) would cost a fork and two execs, a good
 * part of a second in the emulated guest, at the end of every case.
 */
static inline int tb_remove_tree(const char *path)
{
	if (access(path, F_OK) && errno == ENOENT)
		return 0;
	return nftw(path, tb_remove_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

/*
 * Block `sig` and make `set` hold it alone, for tb_wait_sig(): blocked
 * before the watch is set, a signal that comes early is kept, not lost.
 * The marker address is read now too, so that marking a signal later
 * costs a datagram, not a file read.
 */
static inline int tb_block_signal(sigset_t *set, int sig)
{
	struct sockaddr_in sa;

	tb_mark_addr(&sa);
	sigemptyset(set);
	sigaddset(set, sig);
	return sigprocmask(SIG_BLOCK, set, NULL);
}

/* tb-sigproxy's hold port (testbed/common/addresses.py) */
#define TB_HOLD_PORT	4449

/*
 * Mount the share on @mnt through @port of the server (a tb-sigproxy
 * relay), on a connection of its own (SMB 3.1.1), with @opts added; 0, or
 * -1 with the command left in @cmd for the log.
 */
static inline int tb_mount_port(const char *mnt, int port, const char *opts,
				char *cmd, size_t len)
{
	snprintf(cmd, len, "mkdir -p %s && mount -t cifs //server/share %s "
		 "-o vers=3.1.1,port=%d,nosharesock,"
		 "credentials=/etc/testbed/cifs.cred%s%s", mnt, mnt, port,
		 *opts ? "," : "", opts);
	return system(cmd) ? -1 : 0;
}

/* Open a directory for F_NOTIFY with its signal set to `sig`; fd or -1. */
static inline int tb_open_watchable(const char *path, int sig)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);

	if (fd >= 0 && fcntl(fd, F_SETSIG, sig)) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif /* TESTBED_H */
