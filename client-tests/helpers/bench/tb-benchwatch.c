// SPDX-License-Identifier: GPL-2.0
/*
 * tb-benchwatch: one watcher of orchestrate.py bench's latency measure.
 * It watches DIR the way its kind of program does and marks every new name
 * it learns of on the wire ("TBMARK deliver WATCHER name=NAME"), so that
 * the host's capture times delivery against the server's "change" marker
 * on one clock.  It runs until SIGTERM, then prints its own CPU time:
 * "cpu WATCHER USER_US SYS_US".
 *
 *   tb-benchwatch WATCHER DIR
 *
 * WATCHER is one of
 *   dnotify    F_NOTIFY (DN_CREATE, multishot, a real-time signal), then a
 *              listing of DIR for the new names, as a dnotify program must
 *   inotify    IN_CREATE
 *   fanotify   FAN_CREATE with FAN_REPORT_DFID_NAME | FAN_REPORT_REMOTE
 *   ioctl      mainline's CIFS_IOC_NOTIFY_INFO, issued again after each return
 *   poll100    stat() and a listing of DIR every 100 ms (chokidar's default)
 *   poll1000   the same every second (Python watchdog's polling observer)
 *   smbclient  Samba's smbclient "notify DIR" in a session of its own
 *              (SMBCLIENT_ARGS: "//server/share -U user%pass"), read on a pty
 * Exit status: 0; 2 on bad usage; 1 when the watch cannot be set (one line
 * on stderr says why, and "unavailable WATCHER" on stdout).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/mark.h"
#include "lib/events.h"

#define MAX_NAMES	65536
#define CIFS_IOCTL_MAGIC	0xCF
#define FILE_NOTIFY_CHANGE_FILE_NAME	0x001
#define FILE_NOTIFY_CHANGE_DIR_NAME	0x002

struct smb3_notify_info {
	uint32_t completion_filter;
	bool watch_tree;
	uint32_t data_len;
	uint8_t notify_data[];
} __attribute__((packed));

#define CIFS_IOC_NOTIFY_INFO _IOWR(CIFS_IOCTL_MAGIC, 11, struct smb3_notify_info)

static volatile sig_atomic_t stop;
static const char *watcher;
static char *seen[MAX_NAMES];
static int nseen;

static void on_term(int sig)
{
	stop = 1;
}

/* Mark @name delivered, once: a repeat (a second listing) is not new. */
static void deliver(const char *name)
{
	int i;

	for (i = 0; i < nseen; i++)
		if (!strcmp(seen[i], name))
			return;
	if (nseen < MAX_NAMES)
		seen[nseen++] = strdup(name);
	tb_mark("deliver", watcher, "name=%s", name);
}

/* The names of @dir not yet delivered, delivered; what a rescan finds. */
static void rescan(const char *dir, bool mark)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (mark) {
			deliver(de->d_name);
		} else if (nseen < MAX_NAMES) {
			seen[nseen++] = strdup(de->d_name);
		}
	}
	closedir(d);
}

static int unavailable(const char *why)
{
	fprintf(stderr, "tb-benchwatch %s: %s: %s\n", watcher, why, strerror(errno));
	printf("unavailable %s\n", watcher);
	return 1;
}

static int watch_dnotify(const char *dir)
{
	int sig = SIGRTMIN + 1, fd = open(dir, O_RDONLY | O_DIRECTORY);
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rescan(dir, false);
	if (fd < 0 || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
		return unavailable("F_NOTIFY");
	printf("armed %s\n", watcher);
	fflush(stdout);
	while (!stop)
		if (sigtimedwait(&set, &si, &ts) == sig)
			rescan(dir, true);
	return 0;
}

/* Deliver the named events read from @fd (inotify, or fanotify with @fan). */
static int read_events(int fd, bool fan)
{
	char buf[4096] __attribute__((aligned(8)));	/* <= TB_EVENTS_MAX events */
	struct pollfd p = { .fd = fd, .events = POLLIN };
	static struct tb_events evs;

	printf("armed %s\n", watcher);
	fflush(stdout);
	while (!stop) {
		ssize_t n;
		int i;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		evs.n = 0;
		if (fan)
			tb_parse_fanotify(&evs, buf, n);
		else
			tb_parse_inotify(&evs, buf, n);
		for (i = 0; i < evs.n; i++)
			if (evs.ev[i].name[0])
				deliver(evs.ev[i].name);
	}
	return 0;
}

static int watch_inotify(const char *dir)
{
	int fd = inotify_init1(IN_CLOEXEC);

	if (fd < 0 || inotify_add_watch(fd, dir, IN_CREATE) < 0)
		return unavailable("inotify_add_watch");
	return read_events(fd, false);
}

static int watch_fanotify(const char *dir)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
			       FAN_REPORT_REMOTE, O_RDONLY);

	if (fd < 0)
		return unavailable("fanotify_init(FAN_REPORT_REMOTE)");
	if (fanotify_mark(fd, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, AT_FDCWD,
			  dir))
		return unavailable("fanotify_mark");
	return read_events(fd, true);
}

/* FILE_NOTIFY_INFORMATION entries (UTF-16LE names, ASCII here). */
static void deliver_notify_info(const uint8_t *p, uint32_t len)
{
	uint32_t off = 0, next, nlen, i;
	char name[NAME_MAX + 1];

	while (off + 12 <= len) {
		next = p[off] | p[off + 1] << 8 | p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
		nlen = p[off + 8] | p[off + 9] << 8 | p[off + 10] << 16 | (uint32_t)p[off + 11] << 24;
		if (off + 12 + nlen > len)
			return;
		for (i = 0; i < nlen / 2 && i < NAME_MAX; i++)
			name[i] = p[off + 12 + 2 * i];
		name[i] = '\0';
		deliver(name);
		if (!next)
			return;
		off += next;
	}
}

static int watch_ioctl(const char *dir)
{
	size_t size = sizeof(struct smb3_notify_info) + 16384;
	struct smb3_notify_info *ni = malloc(size);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	bool armed = false;

	if (fd < 0 || !ni)
		return unavailable("open");
	while (!stop) {
		memset(ni, 0, size);
		ni->completion_filter = FILE_NOTIFY_CHANGE_FILE_NAME |
					FILE_NOTIFY_CHANGE_DIR_NAME;
		ni->data_len = 16384;
		if (!armed) {
			/* the first call blocks: say armed just before it */
			printf("armed %s\n", watcher);
			fflush(stdout);
			armed = true;
		}
		if (ioctl(fd, CIFS_IOC_NOTIFY_INFO, ni)) {
			if (errno == EINTR)
				continue;
			if (errno == ENOTTY || errno == EOPNOTSUPP)
				return unavailable("CIFS_IOC_NOTIFY_INFO");
			usleep(100 * 1000);
			continue;
		}
		deliver_notify_info(ni->notify_data, ni->data_len);
	}
	return 0;
}

static int watch_poll(const char *dir, int ms)
{
	struct stat st;

	if (stat(dir, &st))
		return unavailable("stat");
	rescan(dir, false);
	printf("armed %s\n", watcher);
	fflush(stdout);
	while (!stop) {
		usleep(ms * 1000);
		if (!stat(dir, &st))
			rescan(dir, true);
	}
	return 0;
}

/* smbclient's "notify" prints "%04x NAME" per change; a pty keeps it unbuffered. */
static int watch_smbclient(const char *dir)
{
	const char *args = getenv("SMBCLIENT_ARGS");
	char cmd[1024], line[1024];
	size_t len = 0;
	pid_t pid;
	int fd;

	if (!args)
		return errno = EINVAL, unavailable("SMBCLIENT_ARGS unset");
	snprintf(cmd, sizeof(cmd), "exec smbclient %s -c 'notify %s'", args, dir);
	pid = forkpty(&fd, NULL, NULL, NULL);
	if (pid < 0)
		return unavailable("forkpty");
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	printf("armed %s\n", watcher);
	fflush(stdout);
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *nl;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(fd, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		line[len] = '\0';
		while ((nl = strpbrk(line, "\r\n"))) {
			unsigned int action;
			char name[NAME_MAX + 1];

			*nl = '\0';
			if (sscanf(line, "%4x %255s", &action, name) == 2 &&
			    action == 1) {
				const char *base = strrchr(name, '\\');

				deliver(base ? base + 1 : name);
			}
			len -= nl + 1 - line;
			memmove(line, nl + 1, len + 1);
		}
		if (len >= sizeof(line) - 1)
			len = 0;
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct rusage ru;
	const char *dir;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: tb-benchwatch dnotify|inotify|fanotify|ioctl|poll100|poll1000|smbclient DIR\n");
		return 2;
	}
	watcher = argv[1];
	dir = argv[2];
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (!strcmp(watcher, "dnotify"))
		rc = watch_dnotify(dir);
	else if (!strcmp(watcher, "inotify"))
		rc = watch_inotify(dir);
	else if (!strcmp(watcher, "fanotify"))
		rc = watch_fanotify(dir);
	else if (!strcmp(watcher, "ioctl"))
		rc = watch_ioctl(dir);
	else if (!strcmp(watcher, "poll100"))
		rc = watch_poll(dir, 100);
	else if (!strcmp(watcher, "poll1000"))
		rc = watch_poll(dir, 1000);
	else if (!strcmp(watcher, "smbclient"))
		rc = watch_smbclient(dir);
	else {
		fprintf(stderr, "tb-benchwatch: unknown watcher %s\n", watcher);
		return 2;
	}
	getrusage(RUSAGE_SELF, &ru);
	if (!rc) {
		struct rusage ch;

		getrusage(RUSAGE_CHILDREN, &ch);
		printf("cpu %s %lld %lld\n", watcher,
		       (long long)(ru.ru_utime.tv_sec + ch.ru_utime.tv_sec) * 1000000 +
		       ru.ru_utime.tv_usec + ch.ru_utime.tv_usec,
		       (long long)(ru.ru_stime.tv_sec + ch.ru_stime.tv_sec) * 1000000 +
		       ru.ru_stime.tv_usec + ch.ru_stime.tv_usec);
	}
	return rc;
}
