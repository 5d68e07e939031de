// SPDX-License-Identifier: GPL-2.0
/*
 * remote_watch: the life of the client's remote watch, seen from outside
 * the signal: listed in /proc/fs/cifs/DebugData while it exists, followed
 * by the smb3_notify_watch_* tracepoints, absent on a noremotenotify mount
 * (which behaves like an unpatched kernel), kept armed for a one-shot
 * watcher that sets its watch again, and reopened after the server drops
 * the connection, with one event for what may have been missed, where the
 * directory now is; DebugData can be read while its watches reopen.
 * Every case fails on a kernel without remote notification.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	10.0	/* seconds: a remote change, under TCG */
#define SILENCE_WAIT	3.0	/* seconds without a signal that counts as none */
#define RECONNECT_WAIT	45.0	/* seconds: reconnect, reopen and re-arm */
#define DEBUGDATA	"/proc/fs/cifs/DebugData"
#define TRACEFS		"/sys/kernel/tracing"
#define LOCAL_MNT	"/mnt/share-local"

static const char * const watch_events[] = {
	"smb3_notify_watch_request", "smb3_notify_watch_done",
	"smb3_notify_watch_rearm", "smb3_notify_watch_cancel",
};

FIXTURE(remote) {
	struct tb_dir d;	/* the watched directory */
	int fd;
	sigset_t set;
};

FIXTURE_SETUP(remote)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "rw"));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(remote)
{
	if (self->fd >= 0)
		close(self->fd);
	umount2(LOCAL_MNT, MNT_DETACH);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/* 1 when a signal for @fd came within @seconds, 0 when none did. */
static int got_signal(struct __test_metadata *_metadata, sigset_t *set,
		      int fd, double seconds)
{
	siginfo_t si;
	int sig = tb_wait_sig(set, seconds, &si);

	if (sig < 0)
		return 0;
	EXPECT_EQ(NOTIFY_SIG, sig);
	EXPECT_EQ(fd, si.si_fd);
	return 1;
}

/* Poll until no line of @path holds @a and @b, for at most @seconds. */
static int wait_gone(const char *path, const char *a, const char *b,
		     double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (tb_file_has_line(path, a, b) == 0)
			return 1;
		usleep(100 * 1000);
	} while (tb_now() < end);
	return 0;
}

/* Turn the watch tracepoints on or off; 0 or -errno. */
static int trace_watch_events(int on)
{
	char file[160];
	unsigned int i;
	int rc;

	if (access(TRACEFS "/events", F_OK) &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL))
		return -errno;
	for (i = 0; i < sizeof(watch_events) / sizeof(watch_events[0]); i++) {
		snprintf(file, sizeof(file), TRACEFS "/events/cifs/%s/enable",
			 watch_events[i]);
		rc = tb_write_file(file, on ? "1" : "0");
		if (rc)
			return rc;
	}
	return 0;
}

TEST_F(remote, debugdata_lists_the_watch_while_it_exists)
{
	ASSERT_EQ(0, tb_file_has_line(DEBUGDATA, "Notify:", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	EXPECT_EQ(1, tb_file_has_line(DEBUGDATA, "Notify:", self->d.name))
		TH_LOG("no 'Notify:' line for %s in " DEBUGDATA, self->d.name);
	EXPECT_EQ(1, tb_file_has_line(DEBUGDATA, self->d.name, "armed"));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, 0));
	/* the watch ends without making F_NOTIFY 0 wait for the server */
	EXPECT_EQ(1, wait_gone(DEBUGDATA, "Notify:", self->d.name, SIGNAL_WAIT))
		TH_LOG("the watch is still listed after F_NOTIFY 0");
}

TEST_F(remote, tracepoints_follow_request_rearm_and_cancel)
{
	const char *trace = TRACEFS "/trace";

	ASSERT_EQ(0, trace_watch_events(1))
		TH_LOG("cannot enable the smb3_notify_watch_* events");
	ASSERT_EQ(0, tb_write_file(trace, ""));	/* O_TRUNC empties it */
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/traced", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, 0));

	EXPECT_EQ(1, tb_wait_line(trace, "smb3_notify_watch_request", self->d.name, 1));
	EXPECT_EQ(1, tb_wait_line(trace, "smb3_notify_watch_done", "status=0x0 ", 1))
		TH_LOG("no successful completion traced");
	EXPECT_EQ(1, tb_wait_line(trace, "smb3_notify_watch_rearm", self->d.name, 1));
	EXPECT_EQ(1, tb_wait_line(trace, "smb3_notify_watch_cancel", self->d.name,
			          SIGNAL_WAIT));
	/* closing the handle ends the last request with NOTIFY_CLEANUP */
	EXPECT_EQ(1, tb_wait_line(trace, "smb3_notify_watch_done",
			          "status=0x10b ", SIGNAL_WAIT))
		TH_LOG("the cancelled request did not complete with STATUS_NOTIFY_CLEANUP");
	EXPECT_EQ(0, trace_watch_events(0));
}

TEST_F(remote, noremotenotify_mount_sees_local_changes_only)
{
	char dir[160], file[192];
	long long opens = -1;
	int fd;

	ASSERT_EQ(0, system("mkdir -p " LOCAL_MNT " && mount -t cifs //server/share "
			    LOCAL_MNT " -o vers=3.1.1,credentials=/etc/testbed/cifs.cred,"
			    "noremotenotify"))
		TH_LOG("mount with noremotenotify refused");
	/* its own superblock: the option is not lost to /mnt/share's */
	EXPECT_EQ(1, tb_file_has_line("/proc/mounts", " " LOCAL_MNT " ",
				      "noremotenotify"));
	EXPECT_EQ(0, tb_file_has_line("/proc/mounts", " " TB_SHARE_MNT " ",
				      "noremotenotify"));

	snprintf(dir, sizeof(dir), LOCAL_MNT "/%s", self->d.name);
	fd = tb_open_watchable(dir, NOTIFY_SIG);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(&opens, "opens %s", self->d.name));
	EXPECT_EQ(0, opens) TH_LOG("%lld handle(s) open on the server", opens);
	EXPECT_EQ(0, tb_file_has_line(DEBUGDATA, "Notify:", self->d.name));

	ASSERT_EQ(0, tb_server(NULL, "create %s/remote", self->d.name));
	EXPECT_EQ(0, got_signal(_metadata, &self->set, fd, SILENCE_WAIT))
		TH_LOG("a server-side change was signalled");

	snprintf(file, sizeof(file), "%s/local", dir);
	ASSERT_EQ(0, close(open(file, O_CREAT | O_EXCL | O_WRONLY, 0644)));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, fd, SIGNAL_WAIT))
		TH_LOG("a change through the mount itself was not signalled");
	/*
	 * Without O_EXCL too: the server's CreateAction says the open made
	 * the file (before the series, cifs_atomic_open() reported no create).
	 */
	snprintf(file, sizeof(file), "%s/local-no-excl", dir);
	ASSERT_EQ(0, close(open(file, O_CREAT | O_WRONLY, 0644)));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, fd, SIGNAL_WAIT))
		TH_LOG("a create without O_EXCL was not signalled");
	/* opening it again creates nothing */
	ASSERT_EQ(0, close(open(file, O_CREAT | O_WRONLY, 0644)));
	EXPECT_EQ(0, got_signal(_metadata, &self->set, fd, SILENCE_WAIT))
		TH_LOG("an open of an existing file was signalled as a create");
	close(fd);
	EXPECT_EQ(0, umount(LOCAL_MNT));
}

/* SMB2 CREATEs this client sent on all its tree connections, or -1. */
static long long creates_sent(void)
{
	char line[256];
	long long n, sum = -1;
	FILE *f = fopen("/proc/fs/cifs/Stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Creates: %lld", &n) == 1)
			sum = (sum < 0 ? 0 : sum) + n;
	fclose(f);
	return sum;
}

/*
 * A one-shot watch that its handler sets again, right after its signal,
 * finds the remote watch still armed: no new handle, no request to wait
 * for, and a change made after it is signalled.  Before the fix the fired
 * watch closed the handle, and setting it again cost a CREATE, a
 * CHANGE_NOTIFY and a QUERY_INFO, during which changes were lost.
 */
TEST_F(remote, oneshot_watch_set_again_keeps_the_handle)
{
	long long before, after, n = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, tb_server(NULL, "create %s/first", self->d.name));
	ASSERT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT));
	before = creates_sent();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	after = creates_sent();
	EXPECT_EQ(before, after)
		TH_LOG("setting the watch again opened %lld handle(s)",
		       after - before);
	ASSERT_EQ(0, tb_server(NULL, "create %s/second", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT));
	n = tb_wait_opens(self->d.name, 0, SIGNAL_WAIT);
	EXPECT_EQ(0, n) TH_LOG("%lld handle(s) left once the one-shot fired", n);
}

#define DEEP_LEVELS	14	/* directories of NAME_LEN characters, nested */
#define DEEP_WATCHED	8	/* the deepest of them watched */
#define NAME_LEN	200
#define CHURN_SECONDS	45.0	/* of filter changes, bounded */
#define CHURN_MIN	100	/* filter changes that make the case count */
#define NARROW_USEC	300000	/* for the narrower filter's reopens */

/*
 * A reader of DebugData for at most @seconds, in a child: each pass
 * prints every watch's path, which a reopen replaces.
 */
static pid_t start_debugdata_reader(double seconds)
{
	static char buf[1 << 16];
	pid_t pid = fork();
	double end;
	int fd;

	if (pid)
		return pid;
	end = tb_now() + seconds;
	while (tb_now() < end) {
		fd = open(DEBUGDATA, O_RDONLY);
		if (fd < 0)
			_exit(1);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	_exit(0);
}

/* The kernel log from now on; -1 when there is none to read. */
static int kmsg_from_now(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* 1 when a record of @fd since kmsg_from_now() holds @what, else 0. */
static int kmsg_has(int fd, const char *what)
{
	char rec[2048];
	ssize_t n;
	int found = 0;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten: read on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		found |= strstr(rec, what) != NULL;
	}
	return found;
}

/*
 * DebugData read in a loop while the watches it lists reopen: a second
 * watcher of each directory comes and goes, each time the filter widens
 * or narrows the watch closes its handle and opens a new one, and the
 * reopen replaces the watch's path.  Long paths, a reader on the other
 * CPU: the reader must never print a path the reopen has freed (KASAN
 * says slab-use-after-free in cifs_dir_watches_show() on a kernel where
 * the reader does not take the watch's lock).
 */
TEST_F_TIMEOUT(remote, debugdata_read_while_watches_reopen, 150)
{
	char path[DEEP_LEVELS * (NAME_LEN + 1) + 160], name[NAME_LEN + 1];
	int fds[DEEP_WATCHED], wide[DEEP_WATCHED], i, k, kmsg, status, rc;
	int changes = 0;
	size_t len;
	double end;
	pid_t reader;

	memset(name, 'n', NAME_LEN);
	name[NAME_LEN] = '\0';
	len = snprintf(path, sizeof(path), "%s", self->d.path);
	for (i = 0; i < DEEP_LEVELS; i++) {
		name[0] = 'a' + i;
		len += snprintf(path + len, sizeof(path) - len, "/%s", name);
		ASSERT_EQ(0, mkdir(path, 0755)) TH_LOG("mkdir level %d: %s",
						       i, strerror(errno));
		k = i - (DEEP_LEVELS - DEEP_WATCHED);
		if (k < 0)
			continue;
		fds[k] = tb_open_watchable(path, NOTIFY_SIG);
		ASSERT_LE(0, fds[k]);
		ASSERT_EQ(0, fcntl(fds[k], F_NOTIFY, DN_CREATE | DN_MULTISHOT));
		wide[k] = tb_open_watchable(path, NOTIFY_SIG);
		ASSERT_LE(0, wide[k]);
	}
	kmsg = kmsg_from_now();
	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	reader = start_debugdata_reader(CHURN_SECONDS + 30);
	ASSERT_LT(0, reader);
	end = tb_now() + CHURN_SECONDS;
	for (rc = 0; !rc && tb_now() < end && changes < 20 * CHURN_MIN; ) {
		/* wider: a new handle, which F_NOTIFY waits for */
		for (k = 0; !rc && k < DEEP_WATCHED; k++, changes++)
			rc = fcntl(wide[k], F_NOTIFY, DN_MODIFY | DN_MULTISHOT);
		/* narrower again: the watch reopens without waiting */
		for (k = 0; !rc && k < DEEP_WATCHED; k++, changes++)
			rc = fcntl(wide[k], F_NOTIFY, 0);
		usleep(NARROW_USEC);
	}
	kill(reader, SIGKILL);
	ASSERT_EQ(reader, waitpid(reader, &status, 0));
	ASSERT_EQ(0, rc) TH_LOG("F_NOTIFY: %s", strerror(errno));
	TH_LOG("%d filter changes while DebugData was read", changes);
	EXPECT_LE(CHURN_MIN, changes);
	EXPECT_EQ(0, kmsg_has(kmsg, "KASAN"))
		TH_LOG("KASAN spoke while DebugData was read");
	close(kmsg);
	for (k = 0; k < DEEP_WATCHED; k++) {
		close(wide[k]);
		close(fds[k]);
	}
}

/* Last: the whole mount reconnects, which the other cases need not see. */
TEST_F(remote, reconnect_reopens_the_watch_and_reports_once)
{
	long long n = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(&n, "disconnect"));
	TH_LOG("ended %lld smbd process(es) serving this client", n);
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, RECONNECT_WAIT))
		TH_LOG("no event after the reconnect");
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, self->d.name, "reopens 1", SIGNAL_WAIT))
		TH_LOG("the watch was not reopened once");
	EXPECT_EQ(0, got_signal(_metadata, &self->set, self->fd, 1.0))
		TH_LOG("more than one event for the reconnect");
	ASSERT_EQ(0, tb_server(NULL, "create %s/after", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT))
		TH_LOG("no signal for a change after the reconnect");
	ASSERT_EQ(0, tb_server(&n, "opens %s", self->d.name));
	EXPECT_EQ(1, n) TH_LOG("%lld handle(s) on the server, not one", n);
}

/*
 * The server drops the connection right after it sent a completion, while
 * the client re-arms: whichever way the re-arm ends (sent before the drop
 * and lost with it, or refused because the connection is down), the watch
 * is reopened, armed, and signals the next change, with one handle on the
 * server; it neither dies silently nor keeps saying "reopening".
 */
TEST_F(remote, drop_between_completion_and_rearm_reopens)
{
	long long n = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/before", self->d.name));
	ASSERT_EQ(0, tb_server(&n, "disconnect"));
	/* the create's signal, and one for the reconnect */
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT));
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, self->d.name, " armed ", RECONNECT_WAIT))
		TH_LOG("the watch was not armed again after the drop");
	while (got_signal(_metadata, &self->set, self->fd, 1.0))
		;
	ASSERT_EQ(0, tb_server(NULL, "create %s/after", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT))
		TH_LOG("no signal for a change after the drop");
	n = tb_wait_opens(self->d.name, 1, SIGNAL_WAIT);
	EXPECT_EQ(1, n) TH_LOG("%lld handle(s) on the server, not one", n);
}

#define FAIL_FUNCTION	"/sys/kernel/debug/fail_function"

/* Make the next @times calls of the kernel's @func return @err; 0 or -errno. */
static int fail_next_calls(const char *func, int err, int times)
{
	char path[160], val[32];
	int rc;

	if (access(FAIL_FUNCTION, F_OK) &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	rc = tb_write_file(FAIL_FUNCTION "/inject", func);
	snprintf(path, sizeof(path), FAIL_FUNCTION "/%s/retval", func);
	snprintf(val, sizeof(val), "%#lx", (unsigned long)(long)err);
	if (!rc)
		rc = tb_write_file(path, val);
	snprintf(val, sizeof(val), "%d", times);
	if (!rc)
		rc = tb_write_file(FAIL_FUNCTION "/times", val);
	if (!rc)
		rc = tb_write_file(FAIL_FUNCTION "/probability", "100");
	if (!rc)
		rc = tb_write_file(FAIL_FUNCTION "/interval", "1");
	return rc;
}

/*
 * The re-arm after a completion fails (fail_function makes the next
 * SMB2_notify_async() return -ENOMEM): the watch closes its handle, opens
 * a new one, reports one event for what it may have missed, and signals
 * the next change, with one handle on the server.  A watch whose re-arm
 * failed must neither die silently nor keep its old handle open.
 */
TEST_F(remote, failed_rearm_reopens_with_one_handle)
{
	long long n = -1;
	int rc;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	rc = fail_next_calls("SMB2_notify_async", -ENOMEM, 1);
	ASSERT_EQ(0, rc) TH_LOG("fail_function: %s", strerror(-rc));
	ASSERT_EQ(0, tb_server(NULL, "create %s/before", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT));
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, self->d.name, "reopens 1", SIGNAL_WAIT))
		TH_LOG("the watch was not reopened after its re-arm failed");
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, self->d.name, " armed ", SIGNAL_WAIT));
	tb_write_file(FAIL_FUNCTION "/inject", "!SMB2_notify_async");
	while (got_signal(_metadata, &self->set, self->fd, 1.0))
		;
	ASSERT_EQ(0, tb_server(NULL, "create %s/after", self->d.name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT))
		TH_LOG("no signal for a change after the failed re-arm");
	n = tb_wait_opens(self->d.name, 1, SIGNAL_WAIT);
	EXPECT_EQ(1, n) TH_LOG("%lld handle(s) on the server, not one", n);
}

/*
 * A watched directory renamed through this mount, then a reconnect: the
 * watch reopens the directory under its new name, and a directory made
 * under the old one is not watched in its place.  Before the fix the
 * reopen used the path the watch started with.
 */
TEST_F(remote, reconnect_after_a_local_rename_follows_the_directory)
{
	char name[96], path[160];
	long long n = -1;

	snprintf(name, sizeof(name), "%s-moved", self->d.name);
	snprintf(path, sizeof(path), TB_SHARE_MNT "/%s", name);
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, rename(self->d.path, path));
	/* our own rename is not a change inside the watched directory */
	EXPECT_EQ(0, got_signal(_metadata, &self->set, self->fd, 1.0));
	ASSERT_EQ(0, tb_server(&n, "disconnect"));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, RECONNECT_WAIT))
		TH_LOG("no event after the reconnect: the watch was not reopened");
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, name, "reopens 1", SIGNAL_WAIT))
		TH_LOG("the watch was not reopened under %s", name);

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/decoy", self->d.name));
	EXPECT_EQ(0, got_signal(_metadata, &self->set, self->fd, SILENCE_WAIT))
		TH_LOG("a change in the directory that took the old name signalled");
	ASSERT_EQ(0, tb_server(NULL, "create %s/real", name));
	EXPECT_EQ(1, got_signal(_metadata, &self->set, self->fd, SIGNAL_WAIT))
		TH_LOG("no signal for a change in the renamed directory");
	close(self->fd);
	self->fd = -1;
	if (tb_remove_tree(path))
		TH_LOG("could not remove %s", path);
}

TEST_HARNESS_MAIN
