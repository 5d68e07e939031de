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
 * A mount mark (FAN_MARK_MOUNT) may ask for no directory-entry, attribute
 * or self event: what it hears of the server is FAN_MODIFY of a file,
 * with the file's path on that mount, from the same watch of the share.
 * Before the series served them, a FAN_REPORT_REMOTE group could not place
 * one on SMB (EOPNOTSUPP: handles that do not decode).  A change on the
 * server has no mount: it reaches each marked mount that shows the object
 * (a bind mount of a directory, what is below it only).
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
	return tb_remote_fan_group(0);
}

/*
 * A private tmpfs mounted on @tmp (a mkdtemp() template), with a/b made in
 * it, whose path is put in @b; 0, or -1 with nothing left behind.
 */
static int tmpfs_with_ab(char *tmp, char *b, size_t size)
{
	if (!mkdtemp(tmp))
		return -1;
	if (mount("tmpfs", tmp, "tmpfs", 0, "size=1m")) {
		rmdir(tmp);
		return -1;
	}
	snprintf(b, size, "%s/a", tmp);
	mkdir(b, 0755);
	snprintf(b, size, "%s/a/b", tmp);
	mkdir(b, 0755);
	return 0;
}

/* The group @fan closed, @tmp unmounted and removed, @ref logged. */
static void tmpfs_done(int fan, const char *tmp, const struct tb_events *ref)
{
	char log[512];

	if (fan >= 0)
		close(fan);
	umount2(tmp, MNT_DETACH);
	rmdir(tmp);
	fprintf(stderr, "# tmpfs: %s\n", tb_events_str(ref, log, sizeof(log)));
}

/*
 * The reference: a filesystem mark for @mask on a private tmpfs, then
 * mkdir -p a/b, the mark, and a/b/@name made (a directory with @dir) there.
 * Its events in @ref, and whether each names a/b by its handle.
 */
static void tmpfs_reference(uint32_t mask, const char *name, int dir,
			    struct tb_events *ref, int *in_b)
{
	char tmp[] = "/tmp/fsm-XXXXXX", b[64], p[128];
	int fan = -1, fd, i;

	memset(ref, 0, sizeof(*ref));
	*in_b = 0;
	if (tmpfs_with_ab(tmp, b, sizeof(b)))
		return;
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
	tmpfs_done(fan, tmp, ref);
}

/* A fanotify group that reports the object's own handle, remote changes too. */
static int fid_group(void)
{
	return fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID |
			     FAN_REPORT_REMOTE, O_RDONLY);
}

/* A change made in the reference's a/b (a path on the private tmpfs). */
typedef void (*local_op)(const char *b);

/* The masks of @evs together. */
static uint32_t masks(const struct tb_events *evs)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < evs->n; i++)
		m |= evs->ev[i].mask;
	return m;
}

/*
 * The reference for the self events: on a private tmpfs, a/b made and
 * @prepare run in it, a filesystem mark for @mask in a group from
 * @group() (and, with @ignore, an inode mark on a/b/@ignore that ignores
 * @mask), then @change run in a/b.  Its events in @ref.
 */
static void tmpfs_events(int (*group)(void), uint32_t mask,
			 const char *ignore, local_op prepare,
			 local_op change, struct tb_events *ref)
{
	char tmp[] = "/tmp/fss-XXXXXX", b[64], p[128];
	int fan = -1;

	memset(ref, 0, sizeof(*ref));
	if (tmpfs_with_ab(tmp, b, sizeof(b)))
		return;
	prepare(b);
	fan = group();
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				     mask, AT_FDCWD, tmp))
		goto out;
	snprintf(p, sizeof(p), "%s/%s", b, ignore ? ignore : "");
	if (ignore && fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK |
				    FAN_MARK_IGNORED_SURV_MODIFY, mask,
				    AT_FDCWD, p))
		goto out;
	change(b);
	tb_read_events(fan, 1, ref, 2.0, 1.0);
out:
	tmpfs_done(fan, tmp, ref);
}

/* Run a local operation on @name in @b, as the server's disk would. */
static void in_b(const char *b, const char *name, int (*op)(const char *))
{
	char p[160];

	snprintf(p, sizeof(p), "%s/%s", b, name);
	op(p);
}

static int make_file(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	return fd < 0 ? -1 : close(fd);
}

static int write_file(const char *p)
{
	int fd = open(p, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -1;
	if (write(fd, "x\n", 2) != 2) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void make_f(const char *b)
{
	in_b(b, "f", make_file);
}

static void unlink_f(const char *b)
{
	in_b(b, "f", unlink);
}

static void make_f_and_link_g(const char *b)
{
	char f[160], g[160];

	make_f(b);
	snprintf(f, sizeof(f), "%s/f", b);
	snprintf(g, sizeof(g), "%s/g", b);
	link(f, g);
}

static void unlink_g(const char *b)
{
	in_b(b, "g", unlink);
}

static void rename_f(const char *b)
{
	char f[160], f2[160];

	snprintf(f, sizeof(f), "%s/f", b);
	snprintf(f2, sizeof(f2), "%s/f2", b);
	rename(f, f2);
}

static void make_f_and_h(const char *b)
{
	make_f(b);
	in_b(b, "h", make_file);
}

static void write_f_and_h(const char *b)
{
	in_b(b, "f", write_file);
	in_b(b, "h", write_file);
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

/*
 * The server's file a/b/@file, made and looked up here (known to the
 * dcache, as a file the client has used).
 */
#define SERVER_FILE(self, file) do { \
	char _p[256]; \
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/%s", (self)->d.name, \
			       (file))); \
	snprintf(_p, sizeof(_p), "%s/%s", (self)->b, (file)); \
	ASSERT_EQ(1, tb_wait_file(_p, WAIT)); \
} while (0)

/* The fixture's group replaced by one of @group()'s. */
#define REGROUP(self, group) do { \
	close((self)->fan); \
	(self)->fan = group(); \
	ASSERT_LE(0, (self)->fan) TH_LOG("fanotify_init: %s", \
					strerror(errno)); \
} while (0)

/*
 * A filesystem mark for FAN_DELETE_SELF alone: another client removes a
 * file this client knows, and the mark hears FAN_DELETE_SELF, as on tmpfs
 * (Samba's tree watch reports a change made on its own disk only in the
 * share's root).
 * Before, a mark that wanted only self events asked the server for nothing.
 */
TEST_F_TIMEOUT(fsmark, delete_self_alone_hears_a_removal, 120)
{
	struct tb_events ref;

	tmpfs_events(fid_group, FAN_DELETE_SELF, NULL, make_f, unlink_f,
		     &ref);
	ASSERT_EQ(1, ref.n);
	SERVER_FILE(self, "f");
	REGROUP(self, fid_group);
	MARK_FS(self, FAN_DELETE_SELF);
	ASSERT_EQ(0, tb_second_session("rm %s/a/b/f", self->d.name));
	COLLECT(self);
	EXPECT_EQ(masks(&ref), masks(&self->evs));
	EXPECT_EQ(ref.n, self->evs.n);
}

/* The same for FAN_MOVE_SELF: another client renames the file. */
TEST_F_TIMEOUT(fsmark, move_self_alone_hears_a_rename, 120)
{
	struct tb_events ref;

	tmpfs_events(fid_group, FAN_MOVE_SELF, NULL, make_f, rename_f, &ref);
	ASSERT_EQ(1, ref.n);
	SERVER_FILE(self, "f");
	REGROUP(self, fid_group);
	MARK_FS(self, FAN_MOVE_SELF);
	ASSERT_EQ(0, tb_second_session("rename %s/a/b/f %s/a/b/f2",
				       self->d.name, self->d.name));
	COLLECT(self);
	EXPECT_EQ(masks(&ref), masks(&self->evs));
	EXPECT_EQ(ref.n, self->evs.n);
}

/*
 * A file with two links (made on the server's disk): another client
 * removes one, and the mark hears the link count change (FAN_ATTRIB), not
 * the file's removal; then the other, and it hears FAN_ATTRIB and
 * FAN_DELETE_SELF, as on tmpfs.  Before, the first removal was
 * FAN_DELETE_SELF of a file that lives on, and neither gave FAN_ATTRIB.
 */
TEST_F_TIMEOUT(fsmark, removing_one_of_two_links_is_attrib, 150)
{
	const uint32_t mask = FAN_ATTRIB | FAN_DELETE_SELF;
	struct tb_events ref, ref2;
	char g[256];

	tmpfs_events(fid_group, mask, NULL, make_f_and_link_g, unlink_g,
		     &ref);
	ASSERT_EQ((uint32_t)FAN_ATTRIB, masks(&ref));
	tmpfs_events(fid_group, mask, NULL, make_f, unlink_f, &ref2);
	ASSERT_EQ(mask, masks(&ref2));
	SERVER_FILE(self, "f");
	ASSERT_EQ(0, tb_server(NULL, "link %s/a/b/f %s/a/b/g", self->d.name,
			       self->d.name));
	snprintf(g, sizeof(g), "%s/g", self->b);
	ASSERT_EQ(1, tb_wait_file(g, WAIT));
	REGROUP(self, fid_group);
	MARK_FS(self, mask);
	ASSERT_EQ(0, tb_second_session("rm %s/a/b/g", self->d.name));
	COLLECT(self);
	EXPECT_EQ(masks(&ref), masks(&self->evs));
	ASSERT_EQ(0, tb_second_session("rm %s/a/b/f", self->d.name));
	COLLECT(self);
	EXPECT_EQ(masks(&ref2), masks(&self->evs));
}

/*
 * One group, a filesystem mark for FAN_MODIFY and an inode mark on a/b/f
 * that ignores FAN_MODIFY: another client rewrites f and h, and the group
 * hears h only, as on tmpfs, where the inode mark's ignore mask applies to
 * the filesystem mark's events.  Before, the tree watch reported to the
 * filesystem mark alone, past the ignore mask.
 */
TEST_F_TIMEOUT(fsmark, inode_ignore_mask_applies_to_the_fs_mark, 120)
{
	struct tb_events ref;
	char f[256];

	tmpfs_events(fs_group, FAN_MODIFY, "f", make_f_and_h, write_f_and_h,
		     &ref);
	ASSERT_EQ(0, tb_count(&ref, FAN_MODIFY, "f"));
	ASSERT_LE(1, tb_count(&ref, FAN_MODIFY, "h"));
	SERVER_FILE(self, "f");
	SERVER_FILE(self, "h");
	snprintf(f, sizeof(f), "%s/f", self->b);
	ASSERT_EQ(0, fanotify_mark(self->fan, FAN_MARK_ADD |
				   FAN_MARK_IGNORED_MASK |
				   FAN_MARK_IGNORED_SURV_MODIFY, FAN_MODIFY,
				   AT_FDCWD, f))
		TH_LOG("fanotify_mark(%s, ignore): %s", f, strerror(errno));
	MARK_FS(self, FAN_MODIFY);
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/b/f; "
				       "put /etc/hostname %s/a/b/h",
				       self->d.name, self->d.name));
	COLLECT(self);
	EXPECT_EQ(0, tb_count(&self->evs, FAN_MODIFY, "f"));
	EXPECT_LE(1, tb_count(&self->evs, FAN_MODIFY, "h"));
}

/*
 * Another client moves a known file to another directory (Samba reports a
 * REMOVED and an ADDED: the filesystem mark hears FAN_DELETE_SELF, a
 * difference the parity table names), this client sees it there, then the
 * other client removes it: that removal is heard, FAN_DELETE_SELF, as on
 * tmpfs.  Before, the first report marked the file gone for good, and the
 * real removal was not heard.
 */
TEST_F_TIMEOUT(fsmark, file_moved_away_then_removed_is_heard, 150)
{
	char moved[256];
	int n;

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/a/c", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/c/out", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/in", self->d.name));
	SERVER_FILE(self, "f");
	REGROUP(self, fid_group);
	MARK_FS(self, FAN_DELETE_SELF);
	ASSERT_EQ(0, tb_second_session("rename %s/a/b/f %s/a/c/f",
				       self->d.name, self->d.name));
	COLLECT(self);
	snprintf(moved, sizeof(moved), "%s/a/c/f", self->d.path);
	ASSERT_EQ(1, tb_wait_file(moved, WAIT));
	ASSERT_EQ(0, tb_second_session("rm %s/a/c/f", self->d.name));
	COLLECT(self);
	n = tb_count(&self->evs, FAN_DELETE_SELF, "");
	EXPECT_EQ(1, n);
	EXPECT_EQ(n, self->evs.n);
}

/*
 * One group, a filesystem mark and an inode mark on a/b, both for
 * FAN_CREATE: a file made in a/b on the server's own disk, which Samba's
 * tree watch reports below the share's root only where smbd watches that
 * directory too, reaches the group through a/b's own watch.  Where the
 * tree watch reports it as well, the group hears it twice (a limit the
 * cover letter names): not lost, as when one watch answered for both.
 */
TEST_F_TIMEOUT(fsmark, disk_create_in_marked_dir_reaches_fs_marker, 120)
{
	char log[256];
	int n;

	ASSERT_EQ(1, tb_wait_file(self->b, WAIT));
	ASSERT_EQ(0, fanotify_mark(self->fan, FAN_MARK_ADD, FAN_CREATE,
				   AT_FDCWD, self->b));
	snprintf(log, sizeof(log), "%s/a/b", self->d.name);
	ASSERT_EQ(1, tb_wait_remote_watch(log, WAIT))
		TH_LOG("smbd holds no notify request on %s", log);
	MARK_FS(self, FAN_CREATE);
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/disk", self->d.name));
	COLLECT(self);
	n = tb_count(&self->evs, FAN_CREATE, "disk");
	EXPECT_LE(1, n);
	EXPECT_GE(2, n);
	EXPECT_EQ(n, self->evs.n);
}

/*
 * The reference for a mount mark: a/b/f made on a private tmpfs, a mount
 * mark for FAN_MODIFY on it, then f written.  Its events in @ref, and
 * whether each names a/b by its handle.
 */
static void tmpfs_mount_reference(struct tb_events *ref, int *in_b)
{
	char tmp[] = "/tmp/fsmm-XXXXXX", b[64], p[128];
	int fan = -1, i;

	memset(ref, 0, sizeof(*ref));
	*in_b = 0;
	if (tmpfs_with_ab(tmp, b, sizeof(b)))
		return;
	snprintf(p, sizeof(p), "%s/f", b);
	make_file(p);
	fan = fs_group();
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MOUNT,
				     FAN_MODIFY, AT_FDCWD, tmp))
		goto out;
	write_file(p);
	tb_read_events(fan, 1, ref, 2.0, 1.0);
	*in_b = ref->n > 0;
	for (i = 0; i < ref->n; i++)
		*in_b &= in_dir(&ref->ev[i], b);
out:
	tmpfs_done(fan, tmp, ref);
}

/* Mark the mount @mnt for FAN_MODIFY; wait until smbd holds a request on the root. */
#define MARK_MOUNT(self, mnt) do { \
	ASSERT_EQ(0, fanotify_mark((self)->fan, FAN_MARK_ADD | \
				   FAN_MARK_MOUNT, FAN_MODIFY, AT_FDCWD, \
				   (mnt))) \
		TH_LOG("fanotify_mark(FAN_MARK_MOUNT): %s", strerror(errno)); \
	ASSERT_EQ(1, tb_wait_notifies(".", 1, WAIT)) \
		TH_LOG("smbd holds no notify request on the root"); \
} while (0)

/*
 * Another client writes the file a/b/f, made on the server's disk in a/b,
 * which this client never looked up:
 * a mount mark for FAN_MODIFY hears one FAN_MODIFY naming a/b by its
 * handle and the file, as on tmpfs.
 */
TEST_F_TIMEOUT(fsmark, mount_mark_hears_a_write_in_an_unvisited_dir, 120)
{
	struct tb_events ref;
	int ref_in_b, n;

	tmpfs_mount_reference(&ref, &ref_in_b);
	ASSERT_EQ(1, ref.n);
	ASSERT_EQ(1, ref_in_b);
	/* f made first: the server reports a write, not the new file's */
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/f", self->d.name));
	MARK_MOUNT(self, tb_share_mnt());
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/b/f",
				       self->d.name));
	COLLECT(self);
	n = tb_count(&self->evs, ref.ev[0].mask, "f");
	EXPECT_EQ(1, n);
	EXPECT_EQ(n, self->evs.n);
	if (n)
		EXPECT_EQ(1, in_dir(&self->evs.ev[0], self->b));
}

/*
 * A mount mark on a bind mount of a/b hears a write below a/b, and not one
 * in a/c beside it, which the bind mount does not show.  The mount of the
 * share itself is not marked.
 */
TEST_F_TIMEOUT(fsmark, bind_mount_mark_hears_only_below_its_root, 120)
{
	char bind[64], cmd[320];
	int in, out;

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/a/c", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/c/out", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/b/in", self->d.name));
	ASSERT_EQ(1, tb_wait_file(self->b, WAIT));
	snprintf(bind, sizeof(bind), "/mnt/fsm-bind-%d", getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && mount --bind %s %s",
		 bind, self->b, bind);
	ASSERT_EQ(0, system(cmd));
	MARK_MOUNT(self, bind);
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/c/out",
				       self->d.name));
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/a/b/in",
				       self->d.name));
	COLLECT(self);
	umount(bind);
	rmdir(bind);
	in = tb_count(&self->evs, FAN_MODIFY, "in");
	out = tb_count(&self->evs, FAN_MODIFY, "out");
	EXPECT_EQ(1, in);
	EXPECT_EQ(0, out);
	EXPECT_EQ(in, self->evs.n);
}

TEST_HARNESS_MAIN
