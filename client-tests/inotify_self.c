// SPDX-License-Identifier: GPL-2.0
/*
 * inotify_self: a watch on a file of a CIFS mount, and the events a watched
 * object gets about itself, when the change is made on the server (its own
 * disk, or a second SMB session): the file's data changed (IN_MODIFY), the
 * file or directory removed (IN_ATTRIB for a file's link count, then
 * IN_DELETE_SELF and IN_IGNORED: the watch ends), renamed (IN_MOVE_SELF,
 * and the watch goes on hearing it under its new name), replaced by a
 * rename over its name (an editor's save), unlinked by one of two names
 * (IN_ATTRIB, and IN_Q_OVERFLOW: see the case). For each, the same watch
 * on a tmpfs in the same guest, with the same change made locally, gives
 * the events the CIFS watcher must get, in the same order.
 *
 * Without the series' watches of files and self events (series v2 and
 * before) each case fails: a file's watcher hears nothing of the server,
 * and a watched object removed there leaves its watch silent forever.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define WAIT		15.0	/* for an event that must come */
#define QUIET		2.5	/* after it, for a repeat (echo window 2 s) */
/* what a server can report of a file itself; no open, access or close */
#define IN_SELF		(IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | \
			 IN_MOVE_SELF)

FIXTURE(self) {
	struct tb_dir d;
	char file[192];		/* d/f on the client */
	int in;
	struct tb_events evs;
	char log[2048];
};

FIXTURE_SETUP(self)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "self"));
	ASSERT_EQ(0, tb_server(NULL, "create %s/f", self->d.name));
	snprintf(self->file, sizeof(self->file), "%s/f", self->d.path);
	ASSERT_EQ(1, tb_wait_file(self->file, WAIT));
	self->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, self->in);
	memset(&self->evs, 0, sizeof(self->evs));
}

FIXTURE_TEARDOWN(self)
{
	close(self->in);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/*
 * Watch @path for @mask and wait until smbd holds a request on the
 * directory share/@dir that reports it.
 */
#define WATCH(self, path, mask, dir) do { \
	ASSERT_LE(0, inotify_add_watch((self)->in, (path), (mask))); \
	ASSERT_EQ(1, tb_wait_remote_watch((dir), WAIT)) \
		TH_LOG("smbd holds no notify request on %s", (dir)); \
} while (0)

/* Read what the watcher gets for one change, and forget what came before. */
#define COLLECT(self) do { \
	memset(&(self)->evs, 0, sizeof((self)->evs)); \
	tb_read_events((self)->in, 0, &(self)->evs, WAIT, QUIET); \
	TH_LOG("cifs: %s", tb_events_str(&(self)->evs, (self)->log, \
					   sizeof((self)->log))); \
} while (0)

/* A local change on tmpfs, the reference: made in the directory @dir. */
typedef int (*local_op_t)(const char *dir);

/*
 * What a watch for @mask on @what ("f", or "sub" made as a directory) in a
 * fresh tmpfs directory gets when @op changes it locally.
 */
static void tmpfs_reference(const char *what, uint32_t mask, local_op_t op,
			    struct tb_events *ref)
{
	char tmp[] = "/tmp/self-XXXXXX", path[256], log[1024];
	int in, fd;

	memset(ref, 0, sizeof(*ref));
	if (!mkdtemp(tmp))
		return;
	snprintf(path, sizeof(path), "%s/%s", tmp, what);
	if (!strcmp(what, "sub")) {
		if (mkdir(path, 0755))
			return;
	} else {
		fd = open(path, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			return;
		close(fd);
	}
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in >= 0 && inotify_add_watch(in, path, mask) >= 0 && !op(tmp))
		tb_read_events(in, 0, ref, 1.0, 0.5);
	if (in >= 0)
		close(in);
	tb_remove_tree(tmp);
	fprintf(stderr, "# tmpfs: %s\n", tb_events_str(ref, log, sizeof(log)));
}

/* Whether @got has @ref's events, masks and names, in the same order. */
static int same_events(const struct tb_events *ref, const struct tb_events *got)
{
	int i;

	if (!ref->n || ref->n != got->n)
		return 0;
	for (i = 0; i < ref->n; i++)
		if (ref->ev[i].mask != got->ev[i].mask ||
		    strcmp(ref->ev[i].name, got->ev[i].name))
			return 0;
	return 1;
}

static int local_append(const char *dir)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/f", dir);
	fd = open(p, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "0123456789", 10) != 10)
		return -1;
	return close(fd);
}

static int local_unlink(const char *dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/f", dir);
	return unlink(p);
}

static int local_rmdir(const char *dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/sub", dir);
	return rmdir(p);
}

static int local_rename(const char *dir)
{
	char a[256], b[256];

	snprintf(a, sizeof(a), "%s/f", dir);
	snprintf(b, sizeof(b), "%s/g", dir);
	return rename(a, b);
}

/* An editor's save: a new file written beside it, renamed over it. */
static int local_save(const char *dir)
{
	char a[256], b[256];
	int fd;

	snprintf(a, sizeof(a), "%s/f.new", dir);
	snprintf(b, sizeof(b), "%s/f", dir);
	fd = open(a, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return rename(a, b);
}

TEST_F_TIMEOUT(self, file_hears_server_append, 90)
{
	struct tb_events ref;

	tmpfs_reference("f", IN_SELF, local_append, &ref);
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, tb_server(NULL, "write %s/f 10", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, ""));
	EXPECT_TRUE(same_events(&ref, &self->evs));
}

TEST_F_TIMEOUT(self, file_removed_on_server_ends_the_watch, 90)
{
	struct tb_events ref;

	tmpfs_reference("f", IN_SELF, local_unlink, &ref);
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/f", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE_SELF, ""));
	EXPECT_EQ(1, tb_count(&self->evs, IN_IGNORED, ""));
	EXPECT_TRUE(same_events(&ref, &self->evs));
	/* the watch ended: smbd's handle on the directory goes with it */
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 0, WAIT));
}

/*
 * What a watch on "f" in a fresh tmpfs directory gets when "f" goes and
 * its second link "g", made before the watch, stays.
 */
static void tmpfs_linked_reference(struct tb_events *ref)
{
	char tmp[] = "/tmp/self-XXXXXX", f[256], g[256], log[1024];
	int in, fd;

	memset(ref, 0, sizeof(*ref));
	if (!mkdtemp(tmp))
		return;
	snprintf(f, sizeof(f), "%s/f", tmp);
	snprintf(g, sizeof(g), "%s/g", tmp);
	fd = open(f, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0 && !close(fd) && !link(f, g)) {
		in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (in >= 0 && inotify_add_watch(in, f, IN_SELF) >= 0 &&
		    !unlink(f))
			tb_read_events(in, 0, ref, 1.0, 0.5);
		if (in >= 0)
			close(in);
	}
	tb_remove_tree(tmp);
	fprintf(stderr, "# tmpfs: %s\n", tb_events_str(ref, log, sizeof(log)));
}

/*
 * The link count the client gives @path once it knows of a second link
 * the server made (attributes live 1 s), after @seconds at most; -1 when
 * it cannot stat it.
 */
static int wait_two_links(const char *path, double seconds)
{
	double end = tb_now() + seconds;
	struct stat st;
	int rc;

	while ((rc = stat(path, &st)) || st.st_nlink < 2) {
		if (tb_now() >= end)
			break;
		usleep(200 * 1000);
	}
	return rc ? -1 : (int)st.st_nlink;
}

/*
 * The watched file had a second link, and the server removes the name it
 * was watched by: the file lives on, so its watchers hear IN_ATTRIB (its
 * link count), as on tmpfs, and neither IN_DELETE_SELF nor the end of the
 * watch.  The client cannot hear the file under the other name (the server
 * reports changes by name), and says so: IN_Q_OVERFLOW follows, the one
 * difference from tmpfs.  Before the fix the watch ended as if the file
 * were gone.
 */
TEST_F_TIMEOUT(self, file_with_another_link_removed_is_attrib, 120)
{
	struct tb_events ref;

	tmpfs_linked_reference(&ref);
	ASSERT_EQ(0, tb_server(NULL, "link %s/f %s/g", self->d.name,
			       self->d.name));
	ASSERT_EQ(2, wait_two_links(self->file, WAIT));
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/f", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&ref, IN_ATTRIB, ""));
	EXPECT_EQ(1, tb_count(&self->evs, IN_ATTRIB, ""));
	EXPECT_EQ(0, tb_count(&self->evs, IN_DELETE_SELF, ""));
	EXPECT_EQ(0, tb_count(&self->evs, IN_IGNORED, ""));
	EXPECT_EQ(1, tb_count(&self->evs, IN_Q_OVERFLOW, ""));
	EXPECT_EQ(ref.n + 1, self->evs.n);
	/* the watch goes on, and so does the handle on the directory */
	EXPECT_EQ(1, tb_wait_watched(self->d.name, 1, WAIT));
}

#define NLINKED	6	/* files watched, each with a second link */

/*
 * The same beside a filesystem mark, for six files, each removed by a
 * second session by the name it is watched by: the share's tree watch and
 * the directory's watch both hear each removal, in works of their own, in
 * either order, and the file's link count is counted down once: each
 * watch hears IN_ATTRIB and no IN_DELETE_SELF, whichever heard it first.
 * Before the fix the tree watch counted the link off the inode, and the
 * directory's watch, when it came second, took the removal for the last
 * link's.
 */
TEST_F_TIMEOUT(self, file_with_another_link_removed_beside_a_filesystem_mark,
	       180)
{
	char f[192];
	int fan, i;

	for (i = 0; i < NLINKED; i++) {
		ASSERT_EQ(0, tb_server(NULL, "create %s/f%d", self->d.name, i));
		ASSERT_EQ(0, tb_server(NULL, "link %s/f%d %s/g%d",
				       self->d.name, i, self->d.name, i));
		snprintf(f, sizeof(f), "%s/f%d", self->d.path, i);
		ASSERT_EQ(2, wait_two_links(f, WAIT));
		ASSERT_LE(0, inotify_add_watch(self->in, f, IN_SELF));
	}
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT));
	fan = tb_remote_fan_group(0);
	ASSERT_LE(0, fan) TH_LOG("fanotify_init: %s", strerror(errno));
	ASSERT_EQ(0, fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				   FAN_ATTRIB | FAN_DELETE_SELF | FAN_DELETE,
				   AT_FDCWD, tb_share_mnt()))
		TH_LOG("fanotify_mark: %s", strerror(errno));
	ASSERT_EQ(1, tb_wait_notifies(".", 1, WAIT))
		TH_LOG("smbd holds no notify request on the root");
	for (i = 0; i < NLINKED; i++)
		ASSERT_EQ(0, tb_second_session("del %s/f%d", self->d.name, i));
	COLLECT(self);
	close(fan);
	EXPECT_EQ(NLINKED, tb_count(&self->evs, IN_ATTRIB, ""));
	EXPECT_EQ(0, tb_count(&self->evs, IN_DELETE_SELF, ""));
	EXPECT_EQ(0, tb_count(&self->evs, IN_IGNORED, ""));
}

TEST_F_TIMEOUT(self, file_renamed_by_another_client_is_still_heard, 120)
{
	struct tb_events ref;

	tmpfs_reference("f", IN_SELF, local_rename, &ref);
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, tb_second_session("rename %s\\f %s\\g", self->d.name,
				       self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVE_SELF, ""));
	EXPECT_TRUE(same_events(&ref, &self->evs));
	/* the watch follows the file, as on tmpfs */
	ASSERT_EQ(0, tb_server(NULL, "write %s/g 10", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, ""));
}

TEST_F_TIMEOUT(self, file_replaced_by_a_save_on_server_ends_the_watch, 120)
{
	struct tb_events ref;

	tmpfs_reference("f", IN_SELF, local_save, &ref);
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, tb_server(NULL, "create %s/f.new", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "rename %s/f.new %s/f", self->d.name,
			       self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE_SELF, ""));
	EXPECT_EQ(1, tb_count(&self->evs, IN_IGNORED, ""));
	EXPECT_TRUE(same_events(&ref, &self->evs));
}

TEST_F_TIMEOUT(self, dir_removed_by_another_client_ends_the_watch, 120)
{
	char sub[192], subname[96];
	struct tb_events ref;

	tmpfs_reference("sub", IN_ALL_EVENTS, local_rmdir, &ref);
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	snprintf(sub, sizeof(sub), "%s/sub", self->d.path);
	snprintf(subname, sizeof(subname), "%s/sub", self->d.name);
	ASSERT_EQ(1, tb_wait_file(sub, WAIT));
	ASSERT_LE(0, inotify_add_watch(self->in, sub, IN_ALL_EVENTS));
	/* its own watch for its children, its parent's for itself */
	ASSERT_EQ(1, tb_wait_remote_watch(subname, WAIT));
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT));
	ASSERT_EQ(0, tb_second_session("rmdir %s\\sub", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_DELETE_SELF, ""));
	EXPECT_EQ(1, tb_count(&self->evs, IN_IGNORED, ""));
	EXPECT_TRUE(same_events(&ref, &self->evs));
}

/*
 * The watched file's directory leaves the client's caches (the watch holds
 * the file's inode, not a dentry, so nothing holds the directory), then the
 * connection drops: the directory's watch reopens on the path it had, and
 * the file hears the server's next append.  Before the fix the reopen
 * looked for the directory among the dentries, found none, and retried
 * every 16 s without reporting again.
 */
TEST_F_TIMEOUT(self, file_heard_after_a_reconnect_with_its_dir_uncached, 120)
{
	long long n = -1;

	WATCH(self, self->file, IN_MODIFY, self->d.name);
	ASSERT_EQ(0, tb_write_file("/proc/sys/vm/drop_caches", "2"));
	ASSERT_EQ(0, tb_server(&n, "disconnect"));
	TH_LOG("ended %lld smbd process(es) serving this client", n);
	tb_wait_watched(self->d.name, 0, WAIT);
	EXPECT_EQ(1, tb_wait_remote_watch(self->d.name, 40.0))
		TH_LOG("smbd holds no request on %s after the reconnect",
		       self->d.name);
	/* the reopen's overflow */
	tb_read_events(self->in, 0, &self->evs, 2.0, 0);
	memset(&self->evs, 0, sizeof(self->evs));
	ASSERT_EQ(0, tb_server(NULL, "write %s/f 10", self->d.name));
	COLLECT(self);
	EXPECT_EQ(1, tb_count(&self->evs, IN_MODIFY, ""))
		TH_LOG("the file's watch no longer hears the server");
}

/*
 * The server closes the watched directory to this mount's user (mode 000
 * on its disk) and the connection drops: the watch's reopen is refused,
 * and from then on the watcher hears local changes only.  It is told so
 * once, with IN_Q_OVERFLOW, as of any loss; before, the watch went deaf
 * without a word.
 */
TEST_F_TIMEOUT(self, dir_closed_to_the_reopen_is_an_overflow, 120)
{
	long long n = -1;

	WATCH(self, self->d.path, IN_CREATE, self->d.name);
	ASSERT_EQ(0, tb_server(NULL, "chmod %s 000", self->d.name));
	ASSERT_EQ(0, tb_server(&n, "disconnect"));
	TH_LOG("ended %lld smbd process(es) serving this client", n);
	tb_read_events(self->in, 0, &self->evs, 40.0, QUIET);
	EXPECT_EQ(0, tb_server(NULL, "chmod %s 755", self->d.name));
	TH_LOG("cifs: %s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	EXPECT_EQ(1, tb_count(&self->evs, IN_Q_OVERFLOW, ""))
		TH_LOG("the watcher was not told once that the server stopped "
		       "reporting");
	EXPECT_EQ(0, tb_wait_remote_watch(self->d.name, 1.0))
		TH_LOG("smbd holds a request on the closed directory");
}

TEST_F_TIMEOUT(self, local_append_is_heard_once, 90)
{
	struct tb_events ref;

	tmpfs_reference("f", IN_SELF, local_append, &ref);
	WATCH(self, self->file, IN_SELF, self->d.name);
	ASSERT_EQ(0, local_append(self->d.path));
	/* then the server's echo would come, within the window */
	tb_read_events(self->in, 0, &self->evs, 6.0, 4.0);
	TH_LOG("cifs: %s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	EXPECT_TRUE(same_events(&ref, &self->evs));
}

/* The number of bytes @path reads now, or -1. */
static long long read_size(const char *path)
{
	char buf[4096];
	long long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

/*
 * Another client overwrites the watched file with 12,345 bytes (truncate,
 * then write): an editor reloading on each IN_MODIFY must read the new
 * contents after the last one, not what the truncate left (0 bytes).
 */
TEST_F_TIMEOUT(self, file_read_after_the_last_event_is_the_servers, 90)
{
	char local[128], buf[4096];
	double end, last = 0;
	long long seen = -1;
	int fd, n, events = 0;

	ASSERT_EQ(0, tb_server(NULL, "write %s/f 5000", self->d.name));
	ASSERT_EQ(5000, read_size(self->file));
	snprintf(local, sizeof(local), "/tmp/over-%s", self->d.name);
	fd = open(local, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	memset(buf, 'y', sizeof(buf));
	for (n = 0; n < 12345; n += 4096)
		ASSERT_LT(0, write(fd, buf, 12345 - n < 4096 ? 12345 - n : 4096));
	close(fd);

	WATCH(self, self->file, IN_MODIFY, self->d.name);
	EXPECT_EQ(0, tb_second_session("put %s %s/f", local, self->d.name));
	end = tb_now() + 2 * WAIT;
	while (tb_now() < end && !(last && tb_now() - last >= QUIET + 1)) {
		struct pollfd pfd = { .fd = self->in, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (read(self->in, buf, sizeof(buf)) > 0)
			events++;
		seen = read_size(self->file);
		last = tb_now();
	}
	unlink(local);
	TH_LOG("%d reads of events, the size read after the last: %lld",
	       events, seen);
	EXPECT_LE(1, events);
	EXPECT_EQ(12345, seen);
}

TEST_HARNESS_MAIN
