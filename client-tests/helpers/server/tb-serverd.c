// SPDX-License-Identifier: GPL-2.0
/*
 * tb-serverd: changes files on the server guest's own disk for the client
 * tests. Runs on the server, listens on the private segment only, and does
 * one small file operation per request line, inside the share's directory:
 *
 *   create PATH | write PATH NBYTES | truncate PATH SIZE | unlink PATH |
 *   rename OLD NEW | mkdir PATH | rmdir PATH | chmod PATH OCTAL |
 *   touch PATH | stat PATH | exists PATH | opens PATH | notifies PATH |
 *   watched PATH | opens-nonotify PATH | disconnect |
 *   mkdirs PREFIX N | touchall PREFIX N NAME | creates DIR N | count DIR |
 *   rmtree DIR
 *
 * (the last five for the load cases: N directories PREFIX-0..N-1, a file
 * NAME in each, N files DIR/f-0..N-1 as fast as the disk takes them, the
 * number of entries of DIR, DIR removed with all it holds: far faster on
 * the server's disk than through the client's mount)
 * ("opens" counts the handles smbd holds open on PATH, from its processes'
 * open files; "notifies" the change-notify requests it has registered on
 * PATH, from smbstatus; "watched" is 1 when smbd watches PATH on its disk
 * for a client's change-notify request; "opens-nonotify" counts the
 * handles of the second smbd, which refuses notification;
 * "disconnect" ends the smbd processes serving the requesting client, whose
 * SMB connection drops and reconnects) and answers "ok [value]" or
 * "err ERRNO message". Paths are relative to the share root; absolute paths
 * and ".." are refused. A test on the client thereby makes a change the
 * client's mount can only learn of from Samba.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/fsuid.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lib/testbed.h"

#define MAX_LINE 4096

static const char *share_root = "/srv/share";

static int safe_path(const char *p)
{
	if (!p || !*p || p[0] == '/')
		return 0;
	return !strstr(p, "..");
}

static int do_write(const char *path, long n)
{
	char buf[4096];
	int fd;

	memset(buf, 'x', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0664);
	if (fd < 0)
		return -1;
	while (n > 0) {
		ssize_t w = write(fd, buf, n < (long)sizeof(buf) ? n : (long)sizeof(buf));

		if (w < 0) {
			close(fd);
			return -1;
		}
		n -= w;
	}
	return close(fd);
}

/*
 * Whether process @pid is an smbd of the instance run with config file @conf
 * (NULL: the main one, started without --configfile). smbd forks its
 * connection and notifyd processes without exec: they keep its command line.
 */
static int smbd_of(const char *pid, const char *conf)
{
	char path[64], cmd[1024], *arg, *end, *found = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	cmd[n] = '\0';
	end = cmd + n;
	arg = strrchr(cmd, '/');
	if (strcmp(arg ? arg + 1 : cmd, "smbd"))
		return 0;
	for (arg = cmd; arg < end; arg += strlen(arg) + 1)
		if (!strncmp(arg, "--configfile=", 13))
			found = arg + 13;
	return conf ? found && !strcmp(found, conf) : !found;
}

/*
 * Call @fn on each open file (process @pid's file descriptor @fd) of the smbd
 * processes of the instance @conf (see smbd_of()); the sum of what it
 * returns, or -1. Read from /proc rather than from smbstatus: smbstatus
 * loads some hundred of Samba's libraries, which costs the server guest
 * 2-5 s of CPU under TCG on each call, and the tests poll. Read as root:
 * the share user's fsuid (see main()) may not list a root process's fds.
 */
static long long each_smbd_fd(const char *conf,
			      long long (*fn)(const char *pid, const char *fd,
					      const void *arg),
			      const void *arg)
{
	int fsuid = setfsuid(0), fsgid = setfsgid(0);
	char dir[64];
	struct dirent *p, *f;
	long long n = 0;
	DIR *procs, *fds;

	procs = opendir("/proc");
	if (!procs) {
		n = -1;
		goto out;
	}
	while ((p = readdir(procs))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    !smbd_of(p->d_name, conf))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/fd", p->d_name);
		fds = opendir(dir);
		if (!fds)
			continue;	/* gone meanwhile */
		while ((f = readdir(fds))) {
			if (f->d_name[0] != '.')
				n += fn(p->d_name, f->d_name, arg);
		}
		closedir(fds);
	}
	closedir(procs);
out:
	setfsgid(fsgid);
	setfsuid(fsuid);
	return n;
}

/* The target of process @pid's file descriptor @fd, or "" (gone). */
static const char *fd_target(const char *pid, const char *fd, char *buf,
			     size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%s/fd/%s", pid, fd);
	n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 * 1 when the open file is in the share and its path holds @arg (as
 * smbstatus -L's lines end with the share path, then the name in it).
 */
static long long fd_in_share(const char *pid, const char *fd, const void *arg)
{
	char target[4096];
	size_t len = strlen(share_root);

	if (!*fd_target(pid, fd, target, sizeof(target)))
		return 0;
	return !strncmp(target, share_root, len) && target[len] == '/' &&
	       strstr(target + len, (const char *)arg);
}

/*
 * How many handles smbd holds open on share/PATH (or below it); those of
 * the smbd run with config file @conf when it is not NULL. Every handle
 * of a client's open is an open file of the smbd serving it (Samba keeps
 * a file descriptor for each open, directories and attribute-only opens
 * included), and no other file of smbd's is under the share but the
 * share's root, which holds no PATH.
 */
static long long count_opens(const char *path, const char *conf)
{
	return each_smbd_fd(conf, fd_in_share, path);
}

/*
 * 1 when the open file is an inotify instance with a watch on the inode
 * @arg points to ("ino:%lx sdev:%x" in its fdinfo; sdev is the kernel's
 * dev_t, major << 20 | minor).
 */
static long long fd_watches(const char *pid, const char *fd, const void *arg)
{
	const struct stat *st = arg;
	char target[64], info[96], line[512], want[96];
	long long found = 0;
	FILE *f;

	if (strcmp(fd_target(pid, fd, target, sizeof(target)),
		   "anon_inode:inotify"))
		return 0;
	snprintf(info, sizeof(info), "/proc/%s/fdinfo/%s", pid, fd);
	snprintf(want, sizeof(want), " ino:%lx sdev:%x ", (unsigned long)st->st_ino,
		 (unsigned int)(major(st->st_dev) << 20 | minor(st->st_dev)));
	f = fopen(info, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "inotify ", 8) && strstr(line, want);
	fclose(f);
	return found;
}

/*
 * 1 when smbd watches share/PATH on its own disk, 0 when not: its notifyd
 * sets one inotify watch on a directory for all the change-notify requests
 * registered on it, from the first to the last, so that a change made there
 * from now on reaches the clients that asked. smbstatus -N tells the same,
 * and how many requests, at the cost of seconds (see each_smbd_fd()).
 */
static long long watched(const char *path)
{
	struct stat st;
	long long n;

	if (stat(path, &st))
		return -1;
	n = each_smbd_fd(NULL, fd_watches, &st);
	return n < 0 ? -1 : n > 0;
}

/*
 * How many change-notify requests smbd holds registered on share/PATH:
 * smbstatus -N prints a line "DIR\PID\FILTER\RECURSIVE" for each.
 */
static long long count_notifies(const char *path)
{
	char line[1024], want[4200];
	long long n = 0;
	FILE *p;

	/* "." is the share's root, which smbstatus names without a slash */
	if (!strcmp(path, "."))
		snprintf(want, sizeof(want), "%s\\", share_root);
	else
		snprintf(want, sizeof(want), "%s/%s\\", share_root, path);
	p = popen("smbstatus -N 2>/dev/null", "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		n += !strncmp(line, want, strlen(want));
	pclose(p);
	return n;
}

/*
 * End the smbd processes serving connections from @peer (smbstatus -p
 * prints "ipv4:ADDR:PORT"), and wait up to 10 s for them to go; the number
 * of processes, or -1 with errno set.
 */
static long long disconnect_peer(const char *peer)
{
	char line[1024], needle[64];
	pid_t pids[64];
	int i, n = 0;
	double end;
	FILE *p;

	snprintf(needle, sizeof(needle), "ipv4:%s:", peer);
	p = popen("smbstatus -p 2>/dev/null", "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p) && n < 64) {
		long pid = strtol(line, NULL, 10);

		if (pid > 1 && strstr(line, needle))
			pids[n++] = pid;
	}
	pclose(p);
	if (!n) {
		errno = ESRCH;
		return -1;
	}
	for (i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	end = time(NULL) + 10;
	for (i = 0; i < n; i++)
		while (kill(pids[i], 0) == 0 && time(NULL) < end)
			usleep(50 * 1000);
	return n;
}

/* The bulk operations of the load cases; the count done, or -1. */
static long long bulk(const char *op, const char *a, long n, const char *b)
{
	char path[4096];
	long i;
	int fd;

	for (i = 0; i < n; i++) {
		if (!strcmp(op, "mkdirs")) {
			snprintf(path, sizeof(path), "%s-%ld", a, i);
			if (mkdir(path, 0775))
				return -1;
		} else if (!strcmp(op, "touchall")) {
			snprintf(path, sizeof(path), "%s-%ld/%s", a, i, b);
			fd = open(path, O_WRONLY | O_CREAT, 0664);
			if (fd < 0 || close(fd))
				return -1;
		} else {
			snprintf(path, sizeof(path), "%s/f-%ld", a, i);
			fd = open(path, O_WRONLY | O_CREAT, 0664);
			if (fd < 0 || close(fd))
				return -1;
		}
	}
	return n;
}

/* nftw() callback of "rmtree": children first, links not followed. */
static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	return remove(path);
}

/*
 * One request from @peer: returns 0 or -1 with errno set; *val for
 * stat/exists/opens/disconnect.
 */
static int handle(char *line, const char *peer, long long *val)
{
	char *save, *op = strtok_r(line, " \t\r\n", &save);
	char *a = strtok_r(NULL, " \t\r\n", &save);
	char *b = strtok_r(NULL, " \t\r\n", &save);
	char *c = strtok_r(NULL, " \t\r\n", &save);
	struct stat st;
	int fd;

	*val = -1;
	if (op && !strcmp(op, "disconnect")) {
		*val = disconnect_peer(peer);
		return *val < 0 ? -1 : 0;
	}
	if (!op || !safe_path(a)) {
		errno = EINVAL;
		return -1;
	}
	if (!strcmp(op, "create")) {
		fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0664);
		return fd < 0 ? -1 : close(fd);
	}
	if (!strcmp(op, "write") && b)
		return do_write(a, atol(b));
	if (!strcmp(op, "truncate") && b)
		return truncate(a, atoll(b));
	if (!strcmp(op, "unlink"))
		return unlink(a);
	if (!strcmp(op, "rename") && safe_path(b))
		return rename(a, b);
	if (!strcmp(op, "link") && safe_path(b))
		return link(a, b);
	if (!strcmp(op, "mkdir"))
		return mkdir(a, 0775);
	if (!strcmp(op, "rmdir"))
		return rmdir(a);
	if (!strcmp(op, "chmod") && b)
		return chmod(a, strtol(b, NULL, 8));
	if (!strcmp(op, "touch"))
		return utimes(a, NULL);
	if ((!strcmp(op, "mkdirs") || !strcmp(op, "creates")) && b) {
		*val = bulk(op, a, atol(b), NULL);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "touchall") && b && c && !strchr(c, '/')) {
		*val = bulk(op, a, atol(b), c);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "rmtree"))
		return nftw(a, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (!strcmp(op, "count")) {
		*val = tb_count_entries(a);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "notifies")) {
		*val = count_notifies(a);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "watched")) {
		*val = watched(a);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "opens")) {
		*val = count_opens(a, NULL);
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "opens-nonotify")) {
		*val = count_opens(a, "/mnt/testbed/smb-nonotify.conf");
		return *val < 0 ? -1 : 0;
	}
	if (!strcmp(op, "stat") || !strcmp(op, "exists")) {
		if (stat(a, &st))
			return -1;
		*val = st.st_size;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

/*
 * A change about to be made on the server's disk, marked on the wire
 * ("TBMARK change - op=OP path=PATH") just before it is made: the capture
 * then times the server's CHANGE_NOTIFY response from the change that
 * caused it (marked after, the marker could trail the response). Queries
 * are not marked.
 */
static void mark_change(const char *asked)
{
	static const char * const changes[] = {
		"create", "write", "truncate", "unlink", "rename", "link",
		"mkdir", "rmdir", "chmod", "touch", "mkdirs", "touchall",
		"creates", "rmtree",
	};
	char op[32], path[256];
	size_t i;

	if (sscanf(asked, "%31s %255s", op, path) != 2)
		return;
	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		if (!strcmp(op, changes[i])) {
			tb_mark("change", NULL, "op=%s path=%s", op, path);
			return;
		}
}

static void serve(int c)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	char line[MAX_LINE], peer[INET_ADDRSTRLEN] = "";
	FILE *in = fdopen(c, "r");

	if (!getpeername(c, (struct sockaddr *)&sa, &salen))
		inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer));
	if (!in) {
		close(c);
		return;
	}
	while (fgets(line, sizeof(line), in)) {
		char reply[256], asked[MAX_LINE];
		long long val;
		int n;

		snprintf(asked, sizeof(asked), "%s", line);
		mark_change(asked);
		if (handle(line, peer, &val) == 0)
			n = val >= 0 ? snprintf(reply, sizeof(reply), "ok %lld\n", val)
				     : snprintf(reply, sizeof(reply), "ok\n");
		else
			n = snprintf(reply, sizeof(reply), "err %d %s\n", errno,
				     strerror(errno));
		if (write(c, reply, n) != n)
			break;
	}
	fclose(in);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET }, mark;
	int one = 1, s;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LISTEN-ADDR PORT UID\n", argv[0]);
		return 2;
	}
	/*
	 * Files are made as the share's user (fsuid), so that the client,
	 * mounted as that user, may change and remove them; smbstatus still
	 * runs as root (exec resets the fsuid to the euid).
	 */
	setfsgid(atoi(argv[3]));
	setfsuid(atoi(argv[3]));
	if (chdir(share_root)) {
		perror(share_root);
		return 1;
	}
	umask(002);
	signal(SIGCHLD, SIG_IGN);
	/* the marker address read once, here: not on the way to a change */
	if (tb_mark_addr(&mark))
		fprintf(stderr, "tb-serverd: no marker address, no markers\n");
	sa.sin_port = htons(atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", argv[1]);
		return 2;
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 16)) {
		perror("tb-serverd: listen");
		return 1;
	}
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		if (fork() == 0) {
			/* popen()/pclose() need their child's exit status */
			signal(SIGCHLD, SIG_DFL);
			close(s);
			serve(c);
			_exit(0);
		}
		close(c);
	}
}
