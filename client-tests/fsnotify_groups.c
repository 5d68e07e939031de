// SPDX-License-Identifier: GPL-2.0
/*
 * fsnotify_groups: which fsnotify groups hear of a change made on the
 * server.  Only user-space groups that opted in do (FAN_REPORT_REMOTE,
 * dnotify, or every inotify and fanotify group of a remoteinotify mount);
 * an in-kernel group never does, and a group that did not opt in is left
 * as it was: the server's changes neither reach it nor touch its marks.
 *
 * audit: an audit watch (auditctl -w) marks the watched file's parent
 * with audit's own fsnotify group.  On a remoteinotify mount, series v2
 * let that group accept remote events: the parent's mark asked the server
 * for a CHANGE_NOTIFY of its own (no user-space watcher anywhere), and
 * audit was sent events it cannot take (a nameless one on a reconnect or
 * an overflow reaches audit_compare_dname_path() with a NULL name; named
 * ones carry the directory as the inode).  Here no request reaches the
 * server for an audit watch alone, and an inotify watch beside it comes
 * and goes with its own request.
 *
 * ignore: series v2 tested FS_REMOTE in send_to_group() after FS_MODIFY
 * had cleared the ignore masks of the marks of every group the event was
 * offered to, so a change on the server undid what a fanotify group that
 * did not opt in asked to ignore.  Here its ignore mask survives.  And v2
 * asked the server for what a mark ignores as well as for what it wants:
 * here a mark that only ignores asks for nothing.
 *
 * A fanotify group that reports file descriptors (no fid mode) can never
 * receive a remote change, which has no open file: on a remoteinotify
 * mount its inode mark made the server hold a request all the same.
 * Here it asks for nothing, and a group in a fid mode beside it does.
 *
 * remount: remoteinotify sets the superblock's SB_I_REMOTE_NOTIFY when it
 * is mounted.  A remount that did not name the option reset it in the
 * mount's options (cifs copies the new context over the old), and one
 * that asked for noremoteinotify succeeded: /proc/mounts no longer said
 * remoteinotify while every inotify watcher still heard the server.  Here
 * a remount keeps the option and one that would change it fails.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define WAIT		15.0	/* for an event or a request that must come */
#define SILENCE		4.0	/* for one that must not */
#define PLAIN_MNT	"/mnt/groups-plain"	/* + pid: without remoteinotify */
#define PLAIN_OPTS	"vers=3.1.1,credentials=/etc/testbed/cifs.cred"

/* smbd's notify requests on share/@name now; -1 when it cannot say. */
static long long server_watches(const char *name)
{
	long long n;

	return tb_server(&n, "watched %s", name) ? -1 : n;
}

/*
 * Whether smbd's count of notify requests on share/@name stays @want for
 * @seconds (1), or leaves it (0).
 */
static int watches_stay(const char *name, long long want, double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (server_watches(name) != want)
			return 0;
		usleep(250 * 1000);
	} while (tb_now() < end);
	return 1;
}

/* Run auditctl with @args; its exit status (127: not installed). */
static int auditctl(const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "auditctl %s >/dev/null 2>&1", args);
	return WEXITSTATUS(system(cmd));
}

FIXTURE(audit) {
	struct tb_dir d;
	char file[200];		/* what audit watches, in d */
	int watching;
};

FIXTURE_SETUP(audit)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "aud"));
	snprintf(self->file, sizeof(self->file), "%s/f", self->d.path);
	self->watching = 0;
}

FIXTURE_TEARDOWN(audit)
{
	char args[256];

	if (self->watching) {
		snprintf(args, sizeof(args), "-W %s -p wa -k tb", self->file);
		if (auditctl(args))
			TH_LOG("auditctl %s failed", args);
	}
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

TEST_F_TIMEOUT(audit, watch_asks_the_server_for_nothing, 90)
{
	char args[256];
	int in, wd;

	snprintf(args, sizeof(args), "-w %s -p wa -k tb", self->file);
	ASSERT_EQ(0, auditctl(args))
		TH_LOG("auditctl %s: no auditctl, or no audit in the kernel",
		       args);
	self->watching = 1;
	EXPECT_EQ(1, watches_stay(self->d.name, 0, SILENCE))
		TH_LOG("smbd holds %lld notify requests on %s for audit's mark",
		       server_watches(self->d.name), self->d.name);

	/* changes on the server under audit's mark: nothing reaches audit */
	ASSERT_EQ(0, tb_server(NULL, "create %s/f", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/f", self->d.name));

	/* a user-space watcher beside it asks for itself, and alone */
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in);
	wd = inotify_add_watch(in, self->d.path, IN_CREATE);
	ASSERT_LE(0, wd);
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 1, WAIT));
	ASSERT_EQ(0, inotify_rm_watch(in, wd));
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 0, WAIT))
		TH_LOG("the request stays for audit's mark after inotify's went");
	close(in);
}

TEST_F_TIMEOUT(audit, fd_reporting_fanotify_group_asks_the_server_for_nothing,
	       90)
{
	int fd_fan, fid_fan;

	fd_fan = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	ASSERT_LE(0, fd_fan);
	ASSERT_EQ(0, fanotify_mark(fd_fan, FAN_MARK_ADD, FAN_MODIFY |
				   FAN_EVENT_ON_CHILD, AT_FDCWD,
				   self->d.path));
	EXPECT_EQ(1, watches_stay(self->d.name, 0, SILENCE))
		TH_LOG("smbd holds %lld notify requests on %s for a group "
		       "that cannot receive a remote event",
		       server_watches(self->d.name), self->d.name);

	/* a group in a fid mode can: on a remoteinotify mount it asks */
	fid_fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
				FAN_NONBLOCK, O_RDONLY);
	ASSERT_LE(0, fid_fan);
	ASSERT_EQ(0, fanotify_mark(fid_fan, FAN_MARK_ADD, FAN_CREATE,
				   AT_FDCWD, self->d.path));
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 1, WAIT));
	close(fid_fan);
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 0, WAIT));
	close(fd_fan);
}

FIXTURE(ignore) {
	struct tb_dir d;
	char mnt[64];		/* this case's mount without remoteinotify */
	char path[160];		/* d on it */
	struct tb_events evs;
	char log[2048];
};

FIXTURE_SETUP(ignore)
{
	char cmd[384], needle[96];

	/* a mount point of its own: cases of this fixture run side by side */
	snprintf(self->mnt, sizeof(self->mnt), PLAIN_MNT "-%d", getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && mount -t cifs "
		 "//server/share %s -o " PLAIN_OPTS, self->mnt, self->mnt);
	ASSERT_EQ(0, system(cmd));
	snprintf(needle, sizeof(needle), " %s cifs ", self->mnt);
	ASSERT_EQ(0, tb_file_has_line("/proc/mounts", needle,
				      "remoteinotify"));
	ASSERT_EQ(0, tb_server_dir(&self->d, "ign"));
	snprintf(self->path, sizeof(self->path), "%s/%s", self->mnt,
		 self->d.name);
	ASSERT_EQ(1, tb_wait_listed(self->mnt, self->d.name, 10));
	ASSERT_EQ(0, tb_server(NULL, "create %s/f", self->d.name));
	memset(&self->evs, 0, sizeof(self->evs));
}

FIXTURE_TEARDOWN(ignore)
{
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
	if (umount(self->mnt))
		TH_LOG("umount %s: %s", self->mnt, strerror(errno));
	rmdir(self->mnt);
}

/* Open and close @path; 0 or -1. */
static int open_close(const char *path)
{
	int fd = open(path, O_RDONLY);

	return fd < 0 ? -1 : close(fd);
}

/*
 * The ignore mark is on the file: a change of a child is reported to the
 * child's own marks too, so the server's write of f offers FS_MODIFY to
 * the group that ignores f's opens.
 */
TEST_F_TIMEOUT(ignore, remote_modify_keeps_the_mask_of_a_group_not_opted_in,
	       120)
{
	struct tb_events plain = { 0 };
	char f[200];
	int plain_fan, remote_fan;

	snprintf(f, sizeof(f), "%s/f", self->path);
	ASSERT_EQ(1, tb_wait_file(f, 10));

	/* a group that did not opt in: opens on the mount, but not of f */
	plain_fan = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	ASSERT_LE(0, plain_fan);
	ASSERT_EQ(0, fanotify_mark(plain_fan, FAN_MARK_ADD | FAN_MARK_MOUNT,
				   FAN_OPEN, AT_FDCWD, self->mnt));
	ASSERT_EQ(0, fanotify_mark(plain_fan, FAN_MARK_ADD |
				   FAN_MARK_IGNORED_MASK, FAN_OPEN, AT_FDCWD, f));
	ASSERT_EQ(0, open_close(f));
	tb_read_events(plain_fan, 1, &plain, 1.0, 0);
	ASSERT_EQ(0, plain.n) TH_LOG("the ignore mask does not ignore");

	/* a group that opted in makes the server report changes in d */
	remote_fan = tb_remote_fan_group(FAN_NONBLOCK);
	ASSERT_LE(0, remote_fan);
	ASSERT_EQ(0, fanotify_mark(remote_fan, FAN_MARK_ADD, FAN_MODIFY |
				   FAN_EVENT_ON_CHILD, AT_FDCWD, self->path));
	ASSERT_EQ(1, tb_wait_watched(self->d.name, 1, WAIT));
	ASSERT_EQ(0, tb_server(NULL, "write %s/f 100", self->d.name));
	tb_read_events(remote_fan, 1, &self->evs, WAIT, 2.0);
	ASSERT_LE(1, tb_count(&self->evs, FAN_MODIFY, "f"))
		TH_LOG("%s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));

	/* the server's FS_MODIFY left the other group's ignore mask alone */
	ASSERT_EQ(0, open_close(f));
	memset(&plain, 0, sizeof(plain));
	tb_read_events(plain_fan, 1, &plain, SILENCE, 0);
	EXPECT_EQ(0, plain.n)
		TH_LOG("opening f was reported: the server's change cleared "
		       "the ignore mask of a group that did not opt in");
	close(remote_fan);
	close(plain_fan);
}

/*
 * What a mark ignores is not what it wants: a mark that only ignores
 * creates and deletes in d asks the server for nothing (series v2 gave
 * the filesystem the ignored events too, and FS_MODIFY with them).
 */
TEST_F_TIMEOUT(ignore, an_ignore_mark_asks_the_server_for_nothing, 90)
{
	int ignoring, wanting;

	ignoring = tb_remote_fan_group(FAN_NONBLOCK);
	ASSERT_LE(0, ignoring);
	ASSERT_EQ(0, fanotify_mark(ignoring, FAN_MARK_ADD |
				   FAN_MARK_IGNORED_MASK,
				   FAN_CREATE | FAN_DELETE, AT_FDCWD,
				   self->path));
	EXPECT_EQ(1, watches_stay(self->d.name, 0, SILENCE))
		TH_LOG("smbd holds %lld notify requests on %s for a mark "
		       "that only ignores", server_watches(self->d.name),
		       self->d.name);

	/* the same events wanted ask for a request */
	wanting = tb_remote_fan_group(FAN_NONBLOCK);
	ASSERT_LE(0, wanting);
	ASSERT_EQ(0, fanotify_mark(wanting, FAN_MARK_ADD,
				   FAN_CREATE | FAN_DELETE, AT_FDCWD,
				   self->path));
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 1, WAIT));
	close(wanting);
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 0, WAIT));
	close(ignoring);
}

FIXTURE(remount) {
	char mnt[64];		/* this case's remoteinotify mount */
	char needle[96];	/* its line in /proc/mounts */
};

FIXTURE_SETUP(remount)
{
	char cmd[384];

	/* its own connection, so that its superblock is its own */
	snprintf(self->mnt, sizeof(self->mnt), "/mnt/groups-remount-%d",
		 getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && mount -t cifs "
		 "//server/share %s -o " PLAIN_OPTS ",nosharesock,remoteinotify",
		 self->mnt, self->mnt);
	ASSERT_EQ(0, system(cmd));
	snprintf(self->needle, sizeof(self->needle), " %s cifs ", self->mnt);
	ASSERT_EQ(1, tb_file_has_line("/proc/mounts", self->needle,
				      "remoteinotify"));
}

FIXTURE_TEARDOWN(remount)
{
	if (umount(self->mnt))
		TH_LOG("umount %s: %s", self->mnt, strerror(errno));
	rmdir(self->mnt);
}

/* mount(2) as a program calls it, with no option of remote notification */
TEST_F_TIMEOUT(remount, a_remount_keeps_remoteinotify, 60)
{
	ASSERT_EQ(0, mount("//server/share", self->mnt, "cifs", MS_REMOUNT,
			   "actimeo=1"))
		TH_LOG("remount: %s", strerror(errno));
	EXPECT_EQ(1, tb_file_has_line("/proc/mounts", self->needle,
				      "remoteinotify"))
		TH_LOG("the remount dropped remoteinotify from the options");
}

TEST_F_TIMEOUT(remount, a_remount_cannot_change_remoteinotify, 60)
{
	int rc = mount("//server/share", self->mnt, "cifs", MS_REMOUNT,
		       "noremoteinotify");

	EXPECT_EQ(-1, rc) TH_LOG("noremoteinotify was taken by a remount");
	EXPECT_EQ(EINVAL, rc ? errno : 0);
	EXPECT_EQ(1, tb_file_has_line("/proc/mounts", self->needle,
				      "remoteinotify"));
	EXPECT_EQ(-1, mount("//server/share", self->mnt, "cifs", MS_REMOUNT,
			    "noremotenotify"))
		TH_LOG("noremotenotify was taken by a remount");
}

TEST_HARNESS_MAIN
