// SPDX-License-Identifier: GPL-2.0
/*
 * multiuser_cifs: on a multiuser mount each user reaches the server with
 * a session of their own, and a remote watch must be opened with the
 * credentials of the watcher that asked for it.  A second Samba user
 * (SMB_USER2 of testbed.conf), with a key of their own in a session
 * keyring as cifscreds would add it, watches with inotify two directories
 * that the share's user made: one they may list, one they may only
 * traverse (mode 0711).  They hear of a server-side create in the first
 * and of nothing in the second, which their own session may not list.
 * Before the fix the watch used the mount's credentials (the share's
 * user), and the second user heard of changes in a directory the server
 * would not let them list.  The same holds beside the share user's mark
 * on the whole filesystem, whose watch sees every directory.  And a child
 * that the report looks up for its event is looked up with the watcher's
 * session, not with the mount's.
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/keyctl.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define MU_MNT		"/mnt/multiuser"
#define TB_CONF		"/mnt/testbed/testbed.conf"
#define WATCHER_ID	2000	/* a local uid/gid with no other use */
#define EVENT_WAIT	10.0
#define SILENCE_WAIT	3.0
#define TRACEFS		"/sys/kernel/tracing"
#define MU_HELD_MNT	"/mnt/multiuser-held"
#define STALL_MARK	".tb-stall-setup" /* in the share: tb-sigproxy's */
#define STALL_WAIT	4.0	/* F_NOTIFY still waiting after this long */
#define LEAVE_WAIT	2.0	/* for a killed process to be gone */
#define QUERY_EVENT	TRACEFS "/events/cifs/smb3_query_info_compound_enter/enable"

FIXTURE(mu) {
	struct tb_dir listable;	/* mode 0755: the second user may list it */
	struct tb_dir closed;	/* mode 0711: they may only traverse it */
	char user[64], pass[64], server_ip[32];
};

FIXTURE_SETUP(mu)
{
	ASSERT_EQ(0, tb_conf_value(TB_CONF, "SMB_USER2", self->user,
				   sizeof(self->user)));
	ASSERT_EQ(0, tb_conf_value(TB_CONF, "SMB_PASS2", self->pass,
				   sizeof(self->pass)));
	ASSERT_EQ(0, tb_conf_value(TB_ENV_FILE, "SERVER_IP", self->server_ip,
				   sizeof(self->server_ip)));
	ASSERT_EQ(0, tb_server_dir(&self->listable, "mu-list"));
	ASSERT_EQ(0, tb_server_dir(&self->closed, "mu-closed"));
	ASSERT_EQ(0, tb_server(NULL, "chmod %s 755", self->listable.name));
	ASSERT_EQ(0, tb_server(NULL, "chmod %s 711", self->closed.name));
	ASSERT_EQ(0, system("mkdir -p " MU_MNT " && mount -t cifs "
			    "//server/share " MU_MNT " -o vers=3.1.1,multiuser,"
			    "sec=ntlmssp,remoteinotify,nosharesock,"
			    "credentials=/etc/testbed/cifs.cred"));
}

FIXTURE_TEARDOWN(mu)
{
	tb_server(NULL, "unlink " STALL_MARK);	/* if a case left it */
	umount2(MU_HELD_MNT, MNT_DETACH);
	umount2(MU_MNT, MNT_DETACH);
	tb_remove_tree(self->listable.path);
	tb_remove_tree(self->closed.path);
}

/*
 * Become the watcher (uid/gid WATCHER_ID) with a session keyring holding
 * @user's password for the server, as `cifscreds add` leaves it; 0 or -1.
 */
static int become_watcher(const char *user, const char *pass,
			  const char *server_ip)
{
	char desc[64], payload[160];

	snprintf(desc, sizeof(desc), "cifs:a:%s", server_ip);
	snprintf(payload, sizeof(payload), "%s:%s", user, pass);
	if (setgroups(0, NULL) || setresgid(WATCHER_ID, WATCHER_ID, WATCHER_ID) ||
	    setresuid(WATCHER_ID, WATCHER_ID, WATCHER_ID) ||
	    syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 ||
	    syscall(SYS_add_key, "logon", desc, payload, strlen(payload),
		    KEY_SPEC_SESSION_KEYRING) < 0)
		return -1;
	return 0;
}

/*
 * In a child: become the watcher, and watch @a for IN_CREATE and
 * IN_MODIFY, @b for IN_CREATE.  Writes "ready" once both
 * watches are set (or "err N" and exits), then one line "a NAME" or
 * "b NAME" per event, for @seconds.
 */
static void watcher(int out, const char *user, const char *pass,
		    const char *server_ip, const char *a, const char *b,
		    double seconds)
{
	char buf[4096];
	double end;
	int fd, wa, wb;

	if (become_watcher(user, pass, server_ip)) {
		dprintf(out, "err %d setting up the watcher\n", errno);
		_exit(1);
	}
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	wa = fd < 0 ? -1 : inotify_add_watch(fd, a, IN_CREATE | IN_MODIFY);
	wb = wa < 0 ? -1 : inotify_add_watch(fd, b, IN_CREATE);
	if (wb < 0) {
		dprintf(out, "err %d watching as uid %d\n", errno, WATCHER_ID);
		_exit(1);
	}
	dprintf(out, "ready\n");
	end = tb_now() + seconds;
	while (tb_now() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *q;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		for (q = buf; n > 0 && q < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)q;

			dprintf(out, "%c %s\n", ev->wd == wa ? 'a' : 'b',
				ev->len ? ev->name : "");
			q += sizeof(*ev) + ev->len;
		}
	}
	_exit(0);
}

/* Read lines from @fd until one starts with @want or @seconds pass. */
static int read_until(int fd, const char *want, char *line, size_t len,
		      double seconds)
{
	double end = tb_now() + seconds;
	size_t used = 0;

	while (tb_now() < end && used < len - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read(fd, &c, 1) != 1)
			return -1;
		if (c != '\n') {
			line[used++] = c;
			continue;
		}
		line[used] = '\0';
		if (!strncmp(line, want, strlen(want)))
			return 0;
		if (!strncmp(line, "err", 3))
			return -1;
		used = 0;
	}
	line[used] = '\0';
	return -1;
}

/*
 * Start watcher() as the second user on the two directories for @seconds:
 * its pid, with the read end of its pipe in *@rfd, once it is ready and
 * the server holds its request on the directory it may list; -1 when not
 * (what it said last in @line).
 */
static pid_t start_watcher(const FIXTURE_DATA(mu) *self, double seconds,
			   int *rfd, char *line, size_t len)
{
	char a[192], b[192];
	int pfd[2], status;
	pid_t pid;

	snprintf(a, sizeof(a), MU_MNT "/%s", self->listable.name);
	snprintf(b, sizeof(b), MU_MNT "/%s", self->closed.name);
	snprintf(line, len, "no pipe or process");
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		watcher(pfd[1], self->user, self->pass, self->server_ip, a, b,
			seconds);
	}
	close(pfd[1]);
	if (pid > 0 &&
	    !read_until(pfd[0], "ready", line, len, EVENT_WAIT) &&
	    tb_wait_remote_watch(self->listable.name, EVENT_WAIT)) {
		*rfd = pfd[0];
		return pid;
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(pfd[0]);
	return -1;
}

TEST_F(mu, watch_is_opened_with_the_watchers_credentials)
{
	char line[256];
	int rfd, status;
	pid_t pid;

	/* the listable directory's watch is armed under the watcher's session */
	pid = start_watcher(self, 3 * EVENT_WAIT, &rfd, line, sizeof(line));
	ASSERT_LT(0, pid) TH_LOG("watcher: %s", line);
	/* the watcher's own session may not list the other: no request there */
	EXPECT_EQ(0, tb_wait_remote_watch(self->closed.name, SILENCE_WAIT))
		TH_LOG("the server holds a request on %s for the watcher, who may "
		       "not list it: opened with other credentials",
		       self->closed.name);
	snprintf(line, sizeof(line), "%s filter", self->closed.name);
	EXPECT_EQ(1, tb_file_has_line("/proc/fs/cifs/DebugData", line,
				      " refused "))
		TH_LOG("the watch of %s is not listed as refused",
		       self->closed.name);
	ASSERT_EQ(0, tb_server(NULL, "create %s/secret", self->closed.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/visible", self->listable.name));
	EXPECT_EQ(0, read_until(rfd, "a visible", line, sizeof(line),
				EVENT_WAIT))
		TH_LOG("no event for the directory the watcher may list");
	EXPECT_NE(0, read_until(rfd, "b secret", line, sizeof(line),
				SILENCE_WAIT))
		TH_LOG("the watcher heard of a change in a directory its own "
		       "session may not list");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(rfd);
}

/*
 * The share's user (root's session here) marks the whole filesystem: the
 * watch of the whole share then runs with their session, which may list
 * every directory.  What it hears goes to the filesystem's marks only: the
 * second user's watch of the directory they may not list stays silent,
 * while root's mark hears the change there.  Before the fix the tree watch
 * reported to every mark, and the second user heard of it.
 */
TEST_F(mu, filesystem_mark_does_not_reach_other_users_watches)
{
	struct tb_events evs = { 0 };
	int rfd, status, fan;
	char line[256];
	pid_t pid;

	pid = start_watcher(self, 4 * EVENT_WAIT, &rfd, line, sizeof(line));
	ASSERT_LT(0, pid) TH_LOG("watcher: %s", line);
	fan = tb_remote_fan_group(0);
	ASSERT_LE(0, fan);
	ASSERT_EQ(0, fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				   FAN_CREATE, AT_FDCWD, MU_MNT));
	ASSERT_EQ(1, tb_wait_notifies(".", 1, EVENT_WAIT))
		TH_LOG("smbd holds no request on the share's root");
	/* through SMB: Samba's tree watch hears those anywhere */
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/secret",
				       self->closed.name));
	tb_read_events(fan, 1, &evs, EVENT_WAIT, SILENCE_WAIT);
	ASSERT_LE(1, tb_count(&evs, FAN_CREATE, "secret"))
		TH_LOG("the filesystem mark did not hear of it: the case "
		       "shows nothing");
	EXPECT_NE(0, read_until(rfd, "b secret", line, sizeof(line),
				SILENCE_WAIT))
		TH_LOG("the second user heard, through the share user's watch "
		       "of the whole share, of a change in a directory they "
		       "may not list");
	close(fan);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(rfd);
}

/*
 * How many queries of @path the trace has with the session @sid
 * ("sid=0x..."; "" for any); with @first, the session of the first of
 * them is left there ("" when none).
 */
static int traced_queries(const char *path, const char *sid, char *first,
			  size_t len)
{
	char line[512], want[256], with[64];
	FILE *f = fopen(TRACEFS "/trace", "r");
	int n = 0;

	snprintf(want, sizeof(want), "%s\n", path);	/* after "path=" or "\\" */
	snprintf(with, sizeof(with), " %s ", sid);
	if (first)
		*first = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " sid=");

		if (!strstr(line, "smb3_query_info_compound_enter") || !p ||
		    !strstr(line, want) || (*sid && !strstr(line, with)))
			continue;
		if (first && !n)
			snprintf(first, len, "%.*s",
				 (int)strcspn(p + 1, " "), p + 1);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * The server changes a file in the directory the second user watches for
 * IN_MODIFY: the report looks the file up to give the event its inode,
 * from the watch's work, and must do so with the watcher's session.  The
 * session of this process (root, the mount's) is learnt from a lookup of
 * a name of its own; none of the file's queries may use it.  Before the
 * fix the work looked up as root, with the mount's session.  Alone: it
 * reads the global trace, which another case may empty.
 */
TEST_F(mu, child_of_a_report_is_looked_up_with_the_watchers_session)
{
	char line[256], probe[128], probe_path[160], path[192], root_sid[40];
	struct stat st;
	int rfd, status;
	pid_t pid;

	pid = start_watcher(self, 3 * EVENT_WAIT, &rfd, line, sizeof(line));
	ASSERT_LT(0, pid) TH_LOG("watcher: %s", line);
	if (access(TRACEFS "/events", F_OK))
		ASSERT_EQ(0, mount("nodev", TRACEFS, "tracefs", 0, NULL));
	ASSERT_EQ(0, tb_write_file(QUERY_EVENT, "1"));
	ASSERT_EQ(0, tb_write_file(TRACEFS "/trace", ""));
	snprintf(probe, sizeof(probe), "tb-root-probe-%d", getpid());
	snprintf(probe_path, sizeof(probe_path), MU_MNT "/%s", probe);
	EXPECT_NE(0, stat(probe_path, &st));
	ASSERT_LT(0, traced_queries(probe, "", root_sid, sizeof(root_sid)))
		TH_LOG("no query of %s traced: root's session unknown", probe);

	ASSERT_EQ(0, tb_server(NULL, "write %s/changed 10",
			       self->listable.name));
	EXPECT_EQ(0, read_until(rfd, "a changed", line, sizeof(line),
				EVENT_WAIT))
		TH_LOG("no event for the file the server wrote");
	/* the modification's event, if it comes separately */
	read_until(rfd, "none", line, sizeof(line), SILENCE_WAIT);
	tb_write_file(QUERY_EVENT, "0");
	snprintf(path, sizeof(path), "%s\\changed", self->listable.name);
	EXPECT_LT(0, traced_queries(path, "", NULL, 0))
		TH_LOG("no query of %s traced: the case shows nothing", path);
	EXPECT_EQ(0, traced_queries(path, root_sid, NULL, 0))
		TH_LOG("%s was queried with root's session (%s), not the "
		       "watcher's", path, root_sid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(rfd);
}

/*
 * Mount the share on MU_HELD_MNT through tb-sigproxy's hold port as a
 * multiuser mount, open the directory the second user may list there as
 * root (in *@fd), have the relay sit on SESSION_SETUP requests, and start
 * a child that becomes the second user, who has no session on the mount
 * yet, and sets F_NOTIFY on that descriptor: its pid once it says it is
 * calling, with the read end of its pipe in *@rfd ("returned" follows if
 * F_NOTIFY returns); -1, with what failed in @line.
 */
static pid_t held_f_notify(const FIXTURE_DATA(mu) *self, int *fd, int *rfd,
			   char *line, size_t len)
{
	char path[192];
	int pfd[2];
	pid_t pid;

	*fd = -1;
	if (tb_mount_port(MU_HELD_MNT, TB_HOLD_PORT,
			  "multiuser,sec=ntlmssp,remoteinotify", line, len))
		return -1;
	snprintf(path, sizeof(path), MU_HELD_MNT "/%s", self->listable.name);
	*fd = open(path, O_RDONLY | O_DIRECTORY);
	snprintf(line, len, "open %s, a pipe, the mark or a fork failed",
		 path);
	if (*fd < 0 || pipe(pfd))
		return -1;
	if (tb_server(NULL, "create " STALL_MARK)) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (become_watcher(self->user, self->pass, self->server_ip))
			_exit(2);
		dprintf(pfd[1], "calling\n");
		if (fcntl(*fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
			_exit(3);
		dprintf(pfd[1], "returned\n");
		_exit(0);
	}
	close(pfd[1]);
	*rfd = pfd[0];
	if (pid > 0 && !read_until(pfd[0], "calling", line, len, EVENT_WAIT))
		return pid;
	snprintf(line, len, "the child did not become the second user");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close(pfd[0]);
	return -1;
}

/*
 * Wait up to 30 s for @pid to end: how long it took, or -1; its status in
 * *@status.  The relay lets session setups through after that, and the
 * child is then waited for.
 */
static double held_wait(pid_t pid, int *status)
{
	double t0 = tb_now(), took = -1;
	pid_t done = 0;

	while (tb_now() - t0 < 30.0 && !done) {
		done = waitpid(pid, status, WNOHANG);
		if (!done)
			usleep(50000);
	}
	if (done == pid)
		took = tb_now() - t0;
	tb_server(NULL, "unlink " STALL_MARK);
	if (!done)
		waitpid(pid, status, 0);
	return took;
}

/*
 * F_NOTIFY by a user with no session yet on a multiuser mount (the
 * descriptor was opened by root) makes the watch set that user's session
 * up.  The server sits on the session setup (tb-sigproxy holds it while
 * the share has STALL_MARK), and the caller is killed meanwhile: it must
 * be gone at once, as a killed process always leaves, not once the
 * server answers.  Before the fix F_NOTIFY waited, uninterruptibly, for
 * the reconcile work that was setting the session up.
 */
TEST_F_TIMEOUT(mu, killed_f_notify_leaves_while_a_session_is_set_up, 150)
{
	char line[320];
	int fd, rfd, status = 0;
	double took;
	pid_t pid;

	pid = held_f_notify(self, &fd, &rfd, line, sizeof(line));
	ASSERT_LT(0, pid) TH_LOG("%s", line);
	/* the case shows something only if F_NOTIFY is still waiting */
	EXPECT_NE(0, read_until(rfd, "returned", line, sizeof(line),
				STALL_WAIT))
		TH_LOG("F_NOTIFY returned while the session setup was held");
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG))
		TH_LOG("F_NOTIFY's caller ended before it was killed (0x%x)",
		       status);
	kill(pid, SIGKILL);
	took = held_wait(pid, &status);
	close(rfd);
	close(fd);
	if (took >= 0)
		TH_LOG("the killed F_NOTIFY caller was gone after %.2f s", took);
	else
		TH_LOG("the killed F_NOTIFY caller was still there after 30 s");
	EXPECT_LE(0, took);
	EXPECT_GT(LEAVE_WAIT, took)
		TH_LOG("a killed F_NOTIFY waited for the server's session setup");
}

/*
 * The same session setup, held by the server, and then the F_NOTIFY
 * caller killed and the directory closed: a umount(2) of the mount must
 * not wait for the server either.  Its eviction of the directory waits
 * for the directory's reconcile work: before the fix that work was the
 * one setting the session up, and umount waited for the server to answer.
 */
TEST_F_TIMEOUT(mu, umount_does_not_wait_for_a_watchers_session_setup, 150)
{
	char line[320];
	int fd, rfd, status = 0;
	double took;
	pid_t pid, um;

	pid = held_f_notify(self, &fd, &rfd, line, sizeof(line));
	ASSERT_LT(0, pid) TH_LOG("%s", line);
	usleep(STALL_WAIT * 1e6);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(rfd);
	close(fd);

	um = fork();
	if (um == 0)
		_exit(umount2(MU_HELD_MNT, 0) ? errno : 0);
	ASSERT_LT(0, um);
	took = held_wait(um, &status);
	if (took >= 0)
		TH_LOG("umount(2) returned after %.2f s (%d)", took,
		       WEXITSTATUS(status));
	else
		TH_LOG("umount(2) was still waiting after 30 s");
	EXPECT_LE(0, took);
	EXPECT_GT(LEAVE_WAIT, took)
		TH_LOG("umount waited for the server's session setup");
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("umount failed: %s", strerror(WEXITSTATUS(status)));
}

TEST_HARNESS_MAIN
