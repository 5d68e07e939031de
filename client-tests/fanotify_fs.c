// SPDX-License-Identifier: GPL-2.0
/*
 * fanotify_fs: a fanotify mark on the whole CIFS filesystem
 * (FAN_MARK_FILESYSTEM) hears what changes on the server anywhere in the
 * share, in directories the client never looked up too, as a local change
 * is reported: the event, the file handle of the directory it happened in,
 * and the name.  The reference is the same mark on a private tmpfs in the
 * same guest, with the same change made locally.
 *
 * Without the series' tree watch (series v2 and before) the mark hears
 * nothing of a change in a directory that no inode mark watches, and the
 * server holds no request for it.
 *
 * The mark sees every change on the mount: these cases do not run beside
 * others.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define WAIT		20.0	/* for an event that must come */
#define QUIET		3.0	/* after it, for a repeat (echo window 2 s) */

/* Whether @e happened in the directory @dir, by its handle. */
static int in_dir(const struct tb_event *e, const char *dir)
{
	unsigned char fh[64];
	unsigned int len;

	return !tb_handle(dir, fh, &len) && len == e->fh_len &&
	       !memcmp(fh, e->fh, len);
}

/* A fanotify group that reports directories and names, remote changes too. */
static int fs_group(void)
{
	return fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
			     FAN_REPORT_REMOTE, O_RDONLY);
}

/*
 * The reference: a filesystem mark for @mask on a private tmpfs, then
 * mkdir -p a/b, the mark, and a/b/@name made (a directory with @dir) there.
 * Its events in @ref, and whether each names a/b by its handle.
 */
static void tmpfs_reference(uint32_t mask, const char *name, int dir,
			    struct tb_events *ref, int *in_b)
{
	char tmp[] = "/tmp/fsm-XXXXXX", b[64], p[128], log[512];
	int fan = -1, fd, i;

	memset(ref, 0, sizeof(*ref));
	*in_b = 0;
	if (!mkdtemp(tmp))
		return;
	if (mount("tmpfs", tmp, "tmpfs", 0, "size=1m"))
		goto out_rm;
	snprintf(b, sizeof(b), "%s/a", tmp);
	mkdir(b, 0755);
	snprintf(b, sizeof(b), "%s/a/b", tmp);
	mkdir(b, 0755);
	snprintf(p, sizeof(p), "%s/%s", b, name);
	fan = fs_group();
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				     mask, AT_FDCWD, tmp))
		goto out;
	if (dir) {
		mkdir(p, 0755);
	} else {
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0)
			close(fd);
	}
	tb_read_events(fan, 1, ref, 2.0, 1.0);
	*in_b = ref->n > 0;
	for (i = 0; i < ref->n; i++)
		*in_b &= in_dir(&ref->ev[i], b);
out:
	if (fan >= 0)
		close(fan);
	umount2(tmp, MNT_DETACH);
out_rm:
	rmdir(tmp);
	fprintf(stderr, "# tmpfs: %s\n", tb_events_str(ref, log, sizeof(log)));
}

FIXTURE(fsmark) {
	struct tb_dir d;
	char b[192];		/* d/a/b on the client */
	int fan;
	struct tb_events evs;
	char log[2048];
};

/*
 * d/a/b made on the server's disk: the client lists d in the share's root
 * but has never looked up a or a/b.
 */
FIXTURE_SETUP(fsmark)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "fsm"));
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/a", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/a/b", self->d.name));
	snprintf(self->b, sizeof(self->b), "%s/a/b", self->d.path);
	self->fan = fs_group();
	ASSERT_LE(0, self->fan) TH_LOG("fanotify_init: %s", strerror(errno));
}

FIXTURE_TEARDOWN(fsmark)
{
	close(self->fan);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/* Mark the whole filesystem for @mask; wait until smbd holds a request on its root. */
#define MARK_FS(self, mask) do { \
	ASSERT_EQ(0, fanotify_mark((self)->fan, FAN_MARK_ADD | \
				   FAN_MARK_FILESYSTEM, (mask), AT_FDCWD, \
				   tb_share_mnt())) \
		TH_LOG("fanotify_mark(FAN_MARK_FILESYSTEM): %s", \
		       strerror(errno)); \
	ASSERT_EQ(1, tb_wait_notifies(".", 1, WAIT)) \
		TH_LOG("smbd holds no notify request on the root"); \
} while (0)

#define COLLECT(self) do { \
	memset(&(self)->evs, 0, sizeof((self)->evs)); \
	tb_read_events((self)->fan, 1, &(self)->evs, WAIT, QUIET); \
	TH_LOG("cifs: %s", tb_events_str(&(self)->evs, (self)->log, \
					 sizeof((self)->log))); \
} while (0)

/*
 * Another client makes a directory in a/b, which this client never looked
 * up: one FAN_CREATE|FAN_ONDIR, naming a/b by its handle, as on tmpfs.
 */
TEST_F_TIMEOUT(fsmark, mkdir_in_unvisited_dir_by_another_client, 120)
{
	struct tb_events ref;
	int ref_in_b;

	tmpfs_reference(FAN_CREATE | FAN_ONDIR, "new", 1, &ref, &ref_in_b);
	ASSERT_EQ(1, ref.n);
	ASSERT_EQ(1, ref_in_b);
	MARK_FS(self, FAN_CREATE | FAN_ONDIR);
	ASSERT_EQ(0, tb_second_session("mkdir %s/a/b/new", self->d.name));
	COLLECT(self);
	ASSERT_EQ(ref.n, self->evs.n);
	EXPECT_EQ(ref.ev[0].mask, self->evs.ev[0].mask);
	EXPECT_STREQ("new", self->evs.ev[0].name);
	EXPECT_EQ(1, in_dir(&self->evs.ev[0], self->b))
		TH_LOG("the event does not name %s by its handle", self->b);
}

/*
 * The same for a file another client writes there: FAN_CREATE, naming a/b
 * and the file, as on tmpfs (which also reports the write: FAN_CREATE is
 * the one asked for).
 */
TEST_F_TIMEOUT(fsmark, file_put_in_unvisited_dir_by_another_client, 120)
{
	struct tb_events ref;
	int ref_in_b;

	tmpfs_reference(FAN_CREATE, "put", 0, &ref, &ref_in_b);
	ASSERT_EQ(1, ref.n);
	ASSERT_EQ(1, ref_in_b);
	MARK_FS(self, FAN_CREATE);
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/b/put",
				       self->d.name));
	COLLECT(self);
	ASSERT_EQ(ref.n, self->evs.n);
	EXPECT_EQ(ref.ev[0].mask, self->evs.ev[0].mask);
	EXPECT_STREQ("put", self->evs.ev[0].name);
	EXPECT_EQ(1, in_dir(&self->evs.ev[0], self->b));
}

/*
 * A directory made through this mount is reported once, by the local
 * operation: the server's echo of it through the tree watch is dropped.
 */
TEST_F_TIMEOUT(fsmark, local_mkdir_is_heard_once, 120)
{
	char p[256];

	/* looked up now, as a local mkdir needs */
	ASSERT_EQ(1, tb_wait_file(self->b, WAIT));
	MARK_FS(self, FAN_CREATE | FAN_ONDIR);
	snprintf(p, sizeof(p), "%s/local", self->b);
	ASSERT_EQ(0, mkdir(p, 0755));
	COLLECT(self);
	ASSERT_EQ(1, self->evs.n);
	EXPECT_EQ((uint32_t)(FAN_CREATE | FAN_ONDIR), self->evs.ev[0].mask);
	EXPECT_STREQ("local", self->evs.ev[0].name);
}

/*
 * A directory some other watcher watches for creates only: a file there
 * rewritten by another client is still one FAN_MODIFY for the filesystem
 * mark, which its own watch of the share hears, whatever the directory's
 * watch asked the server for.  On the tmpfs, the same rewrite is one
 * FAN_MODIFY too.
 */
TEST_F_TIMEOUT(fsmark, write_in_dir_watched_for_creates_only, 120)
{
	char log[256];
	int in, n;

	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/f", self->d.name));
	ASSERT_EQ(1, tb_wait_file(self->b, WAIT));
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, self->b, IN_CREATE));
	snprintf(log, sizeof(log), "%s/a/b", self->d.name);
	ASSERT_EQ(1, tb_wait_remote_watch(log, WAIT))
		TH_LOG("smbd holds no notify request on %s", log);
	MARK_FS(self, FAN_MODIFY);
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/b/f",
				       self->d.name));
	COLLECT(self);
	close(in);
	n = tb_count(&self->evs, FAN_MODIFY, "f");
	EXPECT_EQ(1, n);
	EXPECT_EQ(n, self->evs.n);
	if (n)
		EXPECT_EQ(1, in_dir(&self->evs.ev[0], self->b));
}

/*
 * The mark removed, the server holds no request on the root any more: the
 * tree watch ends with the last filesystem mark.
 */
TEST_F_TIMEOUT(fsmark, unmark_ends_the_tree_watch, 120)
{
	MARK_FS(self, FAN_CREATE);
	ASSERT_EQ(0, fanotify_mark(self->fan, FAN_MARK_REMOVE |
				   FAN_MARK_FILESYSTEM, FAN_CREATE, AT_FDCWD,
				   tb_share_mnt()));
	EXPECT_EQ(0, tb_wait_notifies(".", 0, WAIT));
}

TEST_HARNESS_MAIN
