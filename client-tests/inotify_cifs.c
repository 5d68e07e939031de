// SPDX-License-Identifier: GPL-2.0
/*
 * inotify_cifs: inotify and fanotify watchers of a CIFS directory hear of
 * changes made on the server (its own disk, or a second SMB session), with
 * no F_NOTIFY anywhere: one event per change, with the child's name and
 * IN_ISDIR/FAN_ONDIR where the child is a directory, as a local change
 * gives.  /mnt/share is mounted with remoteinotify (every watcher hears the
 * server); a second mount without it shows that a watcher which did not
 * opt in sees only local changes, and that a fanotify group opts in with
 * FAN_REPORT_REMOTE.  Local changes with remote watching on give exactly
 * the events tmpfs gives for the same operations: the server's echo of
 * them is not reported a second time.  inotify, fanotify and dnotify on
 * one directory share one server handle, which goes with the last of them.
 *
 * On a kernel without the series, or with v1, each case fails: no remote
 * event reaches inotify or fanotify without F_NOTIFY (v1: with one, echoes
 * and nameless or doubled events).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define WAIT		15.0	/* for an event that must come */
#define QUIET		2.5	/* after it, for a repeat (echo window 2 s) */
#define SILENCE		4.0	/* for an event that must not come */
#define LOCAL_MNT	"/mnt/share-local"	/* without remoteinotify */
#define LOCAL_OPTS	"vers=3.1.1,credentials=/etc/testbed/cifs.cred"
#define IN_CHANGES	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_MODIFY | IN_ATTRIB)

/* Whether /proc/mounts lists the cifs mount on @mnt with @opt. */
static int mounted_with(const char *mnt, const char *opt)
{
	char needle[160];

	snprintf(needle, sizeof(needle), " %s cifs ", mnt);
	return tb_file_has_line("/proc/mounts", needle, opt);
}


FIXTURE(inotify) {
	struct tb_dir d;
	int in;			/* inotify instance, watching d */
	struct tb_events evs;
	char log[2048];
};

FIXTURE_SETUP(inotify)
{
	ASSERT_EQ(1, mounted_with(tb_share_mnt(), "remoteinotify"))
		TH_LOG("%s is not mounted with remoteinotify", tb_share_mnt());
	ASSERT_EQ(0, tb_server_dir(&self->d, "ino"));
	self->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, self->in);
	ASSERT_LE(0, inotify_add_watch(self->in, self->d.path, IN_CHANGES));
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT))
		TH_LOG("smbd holds no notify request on %s", self->d.name);
	memset(&self->evs, 0, sizeof(self->evs));
}

FIXTURE_TEARDOWN(inotify)
{
	close(self->in);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/* Make a change on the server's disk: "op d/name [arg]". */
#define SERVER(self, fmt, ...) \
	ASSERT_EQ(0, tb_server(NULL, fmt, ##__VA_ARGS__))

/* Read what the watcher gets for one change, and forget what came before. */
#define COLLECT(self) do { \
	memset(&(self)->evs, 0, sizeof((self)->evs)); \
	tb_read_events((self)->in, 0, &(self)->evs, WAIT, QUIET); \
	TH_LOG("events: %s", tb_events_str(&(self)->evs, (self)->log, \
					     sizeof((self)->log))); \
} while (0)

TEST_F_TIMEOUT(inotify, server_disk_create_once_with_name, 60)
{
	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE, "f"));
	EXPECT_EQ(0, tb_count(&self->evs, IN_CREATE | IN_ISDIR, "f"));
	EXPECT_EQ(0, tb_count(&self->evs, IN_CREATE, ""));
}

TEST_F_TIMEOUT(inotify, server_disk_mkdir_is_create_isdir, 60)
{
	SERVER(self, "mkdir %s/sub", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE | IN_ISDIR, "sub"));
}

TEST_F_TIMEOUT(inotify, server_disk_rmdir_is_delete_isdir, 90)
{
	SERVER(self, "mkdir %s/sub", self->d.name);
	COLLECT(self);
	SERVER(self, "rmdir %s/sub", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE | IN_ISDIR, "sub"));
}

/*
 * An rmdir made here fails (the directory is not empty), and the server
 * removes the directory right after, within the 2 s in which the client
 * drops the echo of its own changes: the watcher hears of the removal.
 * Before the fix the failed rmdir left its echo expected, and the real
 * removal was dropped as that echo.
 */
TEST_F_TIMEOUT(inotify, failed_local_rmdir_hides_no_server_rmdir, 90)
{
	char sub[192];
	double t0;

	SERVER(self, "mkdir %s/sub", self->d.name);
	SERVER(self, "create %s/sub/f", self->d.name);
	COLLECT(self);
	snprintf(sub, sizeof(sub), "%s/sub", self->d.path);
	ASSERT_EQ(1, tb_wait_file(sub, WAIT));
	t0 = tb_now();
	ASSERT_EQ(-1, rmdir(sub));
	ASSERT_EQ(ENOTEMPTY, errno);
	SERVER(self, "rmtree %s/sub", self->d.name);
	TH_LOG("the server removed sub %.2f s after the failed rmdir",
	       tb_now() - t0);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE | IN_ISDIR, "sub"));
}

/* The path of @name in the watched directory. */
static const char *in_dir(const struct tb_dir *d, const char *name,
			  char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", d->path, name);
	return buf;
}

/*
 * An open with O_CREAT of a file that the server has and the client never
 * looked up creates nothing: the server writes to the file right after,
 * within the 2 s in which the client drops the echoes of its own changes,
 * and the watcher hears of the write.  Before the fix the open left the
 * echo of a create expected, and the write was dropped as its echo.
 */
TEST_F_TIMEOUT(inotify, open_of_an_existing_file_hides_no_server_write, 90)
{
	char f[192];
	int fd;

	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	ASSERT_EQ(1, tb_count(&self->evs, IN_CREATE, "f"));
	/*
	 * The report asked the server what the name is; the dcache has no
	 * entry for it, and the open asks the server to create it.
	 */
	fd = open(in_dir(&self->d, "f", f, sizeof(f)), O_RDONLY | O_CREAT,
		  0644);
	ASSERT_LE(0, fd);
	close(fd);
	SERVER(self, "write %s/f 100", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, "f"));
}

/*
 * The same for an exclusive create that fails (the file is there): the
 * server removes the file and makes it again right after, and the watcher
 * hears of both.  Before the fix the new file was dropped as the echo of
 * the create that failed.
 */
TEST_F_TIMEOUT(inotify, failed_exclusive_create_hides_no_server_create, 90)
{
	char f[192];

	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	ASSERT_EQ(1, tb_count(&self->evs, IN_CREATE, "f"));
	ASSERT_EQ(-1, open(in_dir(&self->d, "f", f, sizeof(f)),
			   O_WRONLY | O_CREAT | O_EXCL, 0644));
	ASSERT_EQ(EEXIST, errno);
	SERVER(self, "unlink %s/f", self->d.name);
	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE, "f"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE, "f"));
}

/*
 * A file removed here is made again and written by the server right
 * after: the watcher hears the removal, the new file and its write.  Before
 * the fix what was left of the removal's expected echo (a MODIFIED) took
 * the write for ours.
 */
TEST_F_TIMEOUT(inotify, local_unlink_hides_no_server_recreate_and_write, 90)
{
	char f[192];

	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	ASSERT_EQ(1, tb_wait_file(in_dir(&self->d, "f", f, sizeof(f)), WAIT));
	ASSERT_EQ(0, unlink(f));
	SERVER(self, "write %s/f 100", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE, "f"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE, "f"));
	EXPECT_LE(1, tb_count(&self->evs, IN_MODIFY, "f"));
}

/*
 * A file renamed here to a new name, which the server removes right after:
 * the watcher hears the move and the removal.  Before the fix the rename
 * expected the removal of a target it did not have, and took the server's
 * for ours.
 */
TEST_F_TIMEOUT(inotify, local_rename_hides_no_server_removal_of_the_new_name, 90)
{
	char a[192], b[192];

	SERVER(self, "create %s/a", self->d.name);
	COLLECT(self);
	ASSERT_EQ(1, tb_wait_file(in_dir(&self->d, "a", a, sizeof(a)), WAIT));
	ASSERT_EQ(0, rename(a, in_dir(&self->d, "b", b, sizeof(b))));
	SERVER(self, "unlink %s/b", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_FROM, "a"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_TO, "b"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE, "b"));
}

/* The operations of local_links_and_copies_look_like_tmpfs that may fail */
#define OP_FALLOCATE	0x1
#define OP_XATTR	0x2

/*
 * Through the filesystem under test, in @dir, which holds the files f, g,
 * x and c (one byte each): a hard link, an allocation, an extended
 * attribute and a copy, each on a file of its own.  Of the operations in
 * @may_fail, those that fail are left out of @done.
 */
static int local_link_ops(const char *dir, int may_fail, int *done)
{
	char a[256], b[256];
	int in, out, rc = 0;

	*done = 0;
	snprintf(a, sizeof(a), "%s/f", dir);
	snprintf(b, sizeof(b), "%s/h", dir);
	if (link(a, b))
		return -1;
	snprintf(a, sizeof(a), "%s/g", dir);
	out = open(a, O_WRONLY);
	if (out < 0)
		return -1;
	if (may_fail & OP_FALLOCATE && !fallocate(out, 0, 0, 8192))
		*done |= OP_FALLOCATE;
	close(out);
	snprintf(a, sizeof(a), "%s/x", dir);
	if (may_fail & OP_XATTR && !setxattr(a, "user.tb", "1", 1, 0))
		*done |= OP_XATTR;
	snprintf(a, sizeof(a), "%s/f", dir);
	snprintf(b, sizeof(b), "%s/c", dir);
	in = open(a, O_RDONLY);
	out = open(b, O_WRONLY);
	if (in < 0 || out < 0 || copy_file_range(in, NULL, out, NULL, 1, 0) != 1)
		rc = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/*
 * A hard link, fallocate(2), setxattr(2) and copy_file_range(2) made here
 * give the events tmpfs gives, once: the server's echo of each is not
 * reported again (on files the server made more than 2 s before, whose
 * own echoes are over).  Before the fix every one of them was heard twice,
 * the link as a second IN_CREATE.  What the share does not support is
 * left out on both.  (A symbolic link is not tried: without mfsymlinks the
 * client asks for a reparse point, which Samba refuses after it made the
 * name, and the watcher hears the server make and remove it.)
 */
TEST_F_TIMEOUT(inotify, local_links_and_copies_look_like_tmpfs, 120)
{
	static const char *const files[] = { "f", "g", "x", "c" };
	char tmp[] = "/tmp/ino-XXXXXX", ref_log[2048], path[256];
	struct tb_events ref = { 0 };
	int in, i, done, ref_done;

	for (i = 0; i < 4; i++)
		SERVER(self, "write %s/%s 1", self->d.name, files[i]);
	COLLECT(self);
	ASSERT_EQ(1, tb_wait_file(in_dir(&self->d, "c", path, sizeof(path)),
				  WAIT));
	memset(&self->evs, 0, sizeof(self->evs));
	ASSERT_EQ(0, local_link_ops(self->d.path, OP_FALLOCATE | OP_XATTR,
				    &done));
	/* then the server's echoes would come, within the window */
	tb_read_events(self->in, 0, &self->evs, 6.0, 4.0);
	TH_LOG("cifs (ops 0x%x): %s", done,
	       tb_events_str(&self->evs, self->log, sizeof(self->log)));

	/* the same operations on tmpfs: what a local filesystem reports */
	ASSERT_NE(NULL, mkdtemp(tmp));
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, files[i]);
		ASSERT_EQ(0, tb_write_file(path, "x"));
	}
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, tmp, IN_CHANGES));
	ASSERT_EQ(0, local_link_ops(tmp, done, &ref_done));
	tb_read_events(in, 0, &ref, 1.0, 0.5);
	close(in);
	tb_remove_tree(tmp);
	TH_LOG("tmpfs: %s", tb_events_str(&ref, ref_log, sizeof(ref_log)));
	ASSERT_EQ(done, ref_done);

	ASSERT_EQ(ref.n, self->evs.n);
	for (i = 0; i < ref.n; i++) {
		EXPECT_EQ(ref.ev[i].mask, self->evs.ev[i].mask);
		EXPECT_STREQ(ref.ev[i].name, self->evs.ev[i].name);
	}
}

#define NCREATES	100	/* files the server creates, one after another */

/*
 * While the server creates files one after another, a second watcher of
 * the directory asks for attribute changes, then for nothing, again and
 * again: each change of what the directory's watch asks the server for
 * takes a new handle (the server keeps a handle's first filter).  The
 * first watcher, which asks for creates only, hears each create once.
 * Before the fix the old handle was closed before the new one was armed:
 * the creates in between, and those the old request had completed with
 * meanwhile, were lost.
 */
TEST_F_TIMEOUT(inotify, filter_change_during_creates_loses_none, 150)
{
	int other, changes = 0, missing = 0, doubled = 0, status, i;
	char name[32];
	pid_t pid;

	/* the fixture's watcher narrowed to creates: the filter changes */
	ASSERT_LE(0, inotify_add_watch(self->in, self->d.path, IN_CREATE));
	usleep(1500 * 1000);
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT));
	other = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, other);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		for (i = 0; i < NCREATES; i++) {
			if (tb_server(NULL, "create %s/c-%d", self->d.name, i))
				_exit(1);
			usleep(20 * 1000);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		int wd = inotify_add_watch(other, self->d.path, IN_ATTRIB);

		usleep(300 * 1000);
		if (wd >= 0)
			inotify_rm_watch(other, wd);
		changes += 2;
		usleep(300 * 1000);
	}
	close(other);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the server's creates failed");
	tb_read_events(self->in, 0, &self->evs, WAIT, QUIET);
	for (i = 0; i < NCREATES; i++) {
		int n;

		snprintf(name, sizeof(name), "c-%d", i);
		n = tb_count(&self->evs, IN_CREATE, name);
		if (n == 0 && missing++ < 8)
			TH_LOG("no IN_CREATE for %s", name);
		if (n > 1)
			doubled++;
	}
	TH_LOG("%d creates, %d filter changes: %d not heard, %d heard twice, "
	       "%d overflows", NCREATES, changes, missing, doubled,
	       tb_count(&self->evs, IN_Q_OVERFLOW, ""));
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, doubled);
	EXPECT_EQ(0, tb_count(&self->evs, IN_Q_OVERFLOW, ""));
}

TEST_F_TIMEOUT(inotify, server_disk_write_is_one_modify, 90)
{
	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	SERVER(self, "write %s/f 4096", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, "f"));
	EXPECT_EQ(0, tb_count(&self->evs, IN_CREATE, "f"));
}

TEST_F_TIMEOUT(inotify, server_disk_chmod_is_one_event, 90)
{
	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	SERVER(self, "chmod %s/f 600", self->d.name);
	COLLECT(self);
	/* FILE_ACTION_MODIFIED does not tell data from attributes */
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, "f") +
		     tb_count(&self->evs, IN_ATTRIB, "f"));
}

TEST_F_TIMEOUT(inotify, server_disk_rename_is_a_move_pair, 90)
{
	uint32_t from = 0, to = 0;
	int i;

	SERVER(self, "create %s/a", self->d.name);
	COLLECT(self);
	SERVER(self, "rename %s/a %s/b", self->d.name, self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_FROM, "a"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_TO, "b"));
	for (i = 0; i < self->evs.n; i++) {
		if (self->evs.ev[i].mask & IN_MOVED_FROM)
			from = self->evs.ev[i].cookie;
		if (self->evs.ev[i].mask & IN_MOVED_TO)
			to = self->evs.ev[i].cookie;
	}
	EXPECT_NE(0U, from);
	EXPECT_EQ(from, to);
}

TEST_F_TIMEOUT(inotify, server_disk_unlink_is_one_delete, 90)
{
	SERVER(self, "create %s/f", self->d.name);
	COLLECT(self);
	SERVER(self, "unlink %s/f", self->d.name);
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE, "f"));
	EXPECT_EQ(0, tb_count(&self->evs, IN_DELETE | IN_ISDIR, "f"));
}

TEST_F_TIMEOUT(inotify, second_session_changes_with_names, 120)
{
	ASSERT_EQ(0, tb_second_session("mkdir %s\\sd", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE | IN_ISDIR, "sd"));
	ASSERT_EQ(0, tb_second_session("rename %s\\sd %s\\sd2", self->d.name,
				    self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_FROM | IN_ISDIR, "sd"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_TO | IN_ISDIR, "sd2"));
	ASSERT_EQ(0, tb_second_session("rmdir %s\\sd2", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE | IN_ISDIR, "sd2"));
}

/*
 * The operations of local_changes_look_like_tmpfs, in @dir, through the
 * filesystem under test.
 */
static int local_ops(const char *dir)
{
	char a[256], b[256];
	int fd;

	snprintf(a, sizeof(a), "%s/d", dir);
	snprintf(b, sizeof(b), "%s/d2", dir);
	if (mkdir(a, 0755) || rename(a, b) || rmdir(b))
		return -1;
	snprintf(a, sizeof(a), "%s/f", dir);
	snprintf(b, sizeof(b), "%s/g", dir);
	fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);	/* no O_EXCL */
	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd))
		return -1;
	if (rename(a, b) || unlink(b))
		return -1;
	return 0;
}

TEST_F_TIMEOUT(inotify, local_changes_look_like_tmpfs, 90)
{
	char tmp[] = "/tmp/ino-XXXXXX", ref_log[2048];
	struct tb_events ref = { 0 };
	int in, i;

	/* the same operations on tmpfs: what a local filesystem reports */
	ASSERT_NE(NULL, mkdtemp(tmp));
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, tmp, IN_CHANGES));
	ASSERT_EQ(0, local_ops(tmp));
	tb_read_events(in, 0, &ref, 1.0, 0.5);
	close(in);
	rmdir(tmp);
	TH_LOG("tmpfs: %s", tb_events_str(&ref, ref_log, sizeof(ref_log)));

	ASSERT_EQ(0, local_ops(self->d.path));
	/* then the server's echoes would come, within the window */
	tb_read_events(self->in, 0, &self->evs, 6.0, 4.0);
	TH_LOG("cifs: %s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	ASSERT_EQ(ref.n, self->evs.n);
	for (i = 0; i < ref.n; i++) {
		EXPECT_EQ(ref.ev[i].mask, self->evs.ev[i].mask);
		EXPECT_STREQ(ref.ev[i].name, self->evs.ev[i].name);
	}
}



TEST_F_TIMEOUT(inotify, three_apis_share_one_handle, 90)
{
	int fan, dfd, wd;

	fan = tb_remote_fan_group(0);
	ASSERT_LE(0, fan);
	ASSERT_EQ(0, fanotify_mark(fan, FAN_MARK_ADD, FAN_CREATE |
				   FAN_EVENT_ON_CHILD, AT_FDCWD,
				   self->d.path));
	dfd = tb_open_watchable(self->d.path, SIGRTMIN + 1);
	ASSERT_LE(0, dfd);
	signal(SIGRTMIN + 1, SIG_IGN);
	ASSERT_EQ(0, fcntl(dfd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	/* inotify (the fixture's), fanotify and dnotify: one handle */
	EXPECT_EQ(1, tb_wait_opens(self->d.name, 1, 10));
	EXPECT_EQ(1, tb_wait_opens(self->d.name, 1, 0));

	close(fan);
	close(dfd);
	EXPECT_EQ(1, tb_wait_opens(self->d.name, 1, 3));
	/* the last one gone: no handle left */
	wd = inotify_add_watch(self->in, self->d.path, IN_CHANGES);
	ASSERT_LE(0, wd);
	ASSERT_EQ(0, inotify_rm_watch(self->in, wd));
	EXPECT_EQ(0, tb_wait_opens(self->d.name, 0, 15));
}

/* What an inotify watcher got for a burst of creates. */
struct burst_seen {
	int named;		/* IN_CREATE with a name */
	int overflow;		/* IN_Q_OVERFLOW */
	int nameless;		/* any other event without a name */
};

/*
 * Count the events on @in until @quiet seconds pass without one, or
 * @seconds in all: a burst outgrows struct tb_events.
 */
static void read_burst(int in, struct burst_seen *s, double seconds,
		       double quiet)
{
	char buf[16384] __attribute__((aligned(8)));
	double end = tb_now() + seconds, last = tb_now();

	while (tb_now() < end && tb_now() - last < quiet) {
		struct pollfd pfd = { .fd = in, .events = POLLIN };
		ssize_t len;
		char *p;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		len = read(in, buf, sizeof(buf));
		if (len <= 0)
			break;
		for (p = buf; p + sizeof(struct inotify_event) <= buf + len;) {
			const struct inotify_event *ie = (const void *)p;

			if (ie->mask & IN_Q_OVERFLOW)
				s->overflow++;
			else if (!ie->len || !ie->name[0])
				s->nameless++;
			else if (ie->mask & IN_CREATE)
				s->named++;
			p += sizeof(*ie) + ie->len;
		}
		last = tb_now();
	}
}

#define BURST	3000

/*
 * More creates at once than the server reports (it drops its queue past
 * 1,000 changes, or what one response cannot hold: STATUS_NOTIFY_ENUM_DIR):
 * each create that comes has its name, and what was lost is said as
 * inotify says a loss, IN_Q_OVERFLOW, never as an event that names
 * nothing (series v2 sent one, IN_CREATE|IN_DELETE|IN_MODIFY|IN_ATTRIB on
 * the directory itself).  The listing read after it is the server's.
 */
TEST_F_TIMEOUT(inotify, burst_is_names_or_q_overflow_never_nameless, 300)
{
	struct burst_seen seen = { 0 };
	long long on_server = -1;

	ASSERT_EQ(0, tb_server(NULL, "creates %s %d", self->d.name, BURST));
	read_burst(self->in, &seen, 240, 8.0);
	TH_LOG("%d named creates, %d IN_Q_OVERFLOW, %d nameless of %d",
	       seen.named, seen.overflow, seen.nameless, BURST);
	EXPECT_EQ(0, seen.nameless);
	if (seen.named < BURST)
		EXPECT_LE(1, seen.overflow)
			TH_LOG("creates were lost and nothing said so");
	ASSERT_EQ(0, tb_server(&on_server, "count %s", self->d.name));
	EXPECT_EQ(BURST, on_server);
	EXPECT_EQ(on_server, tb_count_entries(self->d.path));
	/* on the server's disk: 3,000 unlinks over SMB take minutes here */
	ASSERT_EQ(0, tb_server(NULL, "rmtree %s", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s", self->d.name));
}

/* A second mount of the share without remoteinotify, for the opt-in cases. */
FIXTURE(optin) {
	struct tb_dir d;
	char path[160];		/* d on the mount without the option */
	struct tb_events evs;
	char log[2048];
};

FIXTURE_SETUP(optin)
{
	ASSERT_EQ(0, system("mkdir -p " LOCAL_MNT " && { mountpoint -q "
			    LOCAL_MNT " || mount -t cifs //server/share "
			    LOCAL_MNT " -o " LOCAL_OPTS "; }"));
	ASSERT_EQ(0, mounted_with(LOCAL_MNT, "remoteinotify"));
	ASSERT_EQ(0, tb_server_dir(&self->d, "opt"));
	snprintf(self->path, sizeof(self->path), LOCAL_MNT "/%s",
		 self->d.name);
	ASSERT_EQ(1, tb_wait_listed(LOCAL_MNT, self->d.name, 10));
	memset(&self->evs, 0, sizeof(self->evs));
}

FIXTURE_TEARDOWN(optin)
{
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
	if (umount(LOCAL_MNT))
		TH_LOG("umount " LOCAL_MNT ": %s", strerror(errno));
}

TEST_F_TIMEOUT(optin, inotify_without_option_sees_local_changes_only, 60)
{
	char f[200];
	int in, fd;

	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, self->path, IN_CHANGES));
	ASSERT_EQ(0, tb_server(NULL, "create %s/remote", self->d.name));
	tb_read_events(in, 0, &self->evs, SILENCE, 0);
	EXPECT_EQ(0, self->evs.n)
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));

	snprintf(f, sizeof(f), "%s/local", self->path);
	fd = open(f, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	memset(&self->evs, 0, sizeof(self->evs));
	tb_read_events(in, 0, &self->evs, WAIT, QUIET);
	EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE, "local"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	close(in);
}

/* A fanotify group reporting names, with or without FAN_REPORT_REMOTE. */
static int fan_watch(const char *path, unsigned int remote)
{
	int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
				FAN_NONBLOCK | remote, O_RDONLY);

	if (fan < 0)
		return -1;
	if (fanotify_mark(fan, FAN_MARK_ADD, FAN_CREATE | FAN_DELETE |
			  FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ONDIR |
			  FAN_EVENT_ON_CHILD, AT_FDCWD, path)) {
		close(fan);
		return -1;
	}
	return fan;
}

TEST_F_TIMEOUT(optin, fanotify_opts_in_with_report_remote, 90)
{
	struct tb_events plain = { 0 };
	int fan, fan_plain;

	fan = fan_watch(self->path, FAN_REPORT_REMOTE);
	ASSERT_LE(0, fan) TH_LOG("fanotify_init(FAN_REPORT_REMOTE): %s",
				 strerror(errno));
	fan_plain = fan_watch(self->path, 0);
	ASSERT_LE(0, fan_plain);
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT));

	ASSERT_EQ(0, tb_server(NULL, "create %s/f", self->d.name));
	tb_read_events(fan, 1, &self->evs, WAIT, QUIET);
	EXPECT_EQ(1, tb_count(&self->evs, FAN_CREATE, "f"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	EXPECT_EQ(0, tb_count(&self->evs, FAN_CREATE | FAN_ONDIR, "f"));

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	memset(&self->evs, 0, sizeof(self->evs));
	tb_read_events(fan, 1, &self->evs, WAIT, QUIET);
	EXPECT_EQ(1, tb_count(&self->evs, FAN_CREATE | FAN_ONDIR, "sub"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));

	/* the group that did not opt in heard nothing of either */
	tb_read_events(fan_plain, 1, &plain, 0.5, 0);
	EXPECT_EQ(0, plain.n);
	close(fan);
	close(fan_plain);
}

/*
 * On /mnt/share (remoteinotify) a fanotify group that did not ask with
 * FAN_REPORT_REMOTE, as an unmodified program's, hears the server too.
 */
TEST_F_TIMEOUT(inotify, fanotify_without_flag_hears_on_remoteinotify_mount, 90)
{
	int fan = fan_watch(self->d.path, 0);

	ASSERT_LE(0, fan);
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	tb_read_events(fan, 1, &self->evs, WAIT, QUIET);
	EXPECT_EQ(1, tb_count(&self->evs, FAN_CREATE | FAN_ONDIR, "sub"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	ASSERT_EQ(0, tb_server(NULL, "rmdir %s/sub", self->d.name));
	memset(&self->evs, 0, sizeof(self->evs));
	tb_read_events(fan, 1, &self->evs, WAIT, QUIET);
	EXPECT_EQ(1, tb_count(&self->evs, FAN_DELETE | FAN_ONDIR, "sub"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	close(fan);
}

TEST(fanotify_report_remote_needs_fid)
{
	int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_REMOTE, O_RDONLY);

	EXPECT_EQ(-1, fan);
	EXPECT_EQ(EINVAL, errno);
	if (fan >= 0)
		close(fan);
}

TEST_HARNESS_MAIN
