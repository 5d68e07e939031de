// SPDX-License-Identifier: GPL-2.0
/*
 * tree_watch: a whole tree of directories watched as inotifywait -r
 * watches it (one inotify watch on each, IN_ALL_EVENTS), served by the
 * share's SMB2_WATCH_TREE request (notifytree=always) or by a request per
 * directory (notifytree=never), each on a mount of its own.  Counted: the
 * handles smbd holds below the tree, and which of the files another SMB
 * client creates at random places are heard, on which watch, with which
 * name.  A covered directory renamed or removed on the server hears its
 * IN_MOVE_SELF, IN_DELETE_SELF and IN_IGNORED, and notifydirs= keeps that
 * many a request of their own beside the share's.  Every case fails on a
 * kernel without notifytree= (the mount is refused).
 */
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define TOPS		40	/* directories below the test's own */
#define PER_TOP		50	/* directories in each: 2,041 in all */
#define SMALL_TOPS	4
#define SMALL_PER_TOP	4
#define CREATES		24	/* files another client makes */
#define PER_SESSION	8	/* of those, per smbclient run */
#define EVENT_WAIT	60.0	/* seconds for all of them, under TCG */
#define SILENCE_WAIT	3.0
#define WATCH_MAX	"/sys/module/cifs/parameters/dir_watch_max"
#define MNT		"/mnt/share-tree"

/* The watched tree: the directories' paths below the test's, by wd. */
struct tree {
	int in;			/* the inotify instance */
	int nr;
	int *wd;
	char (*rel)[64];	/* relative to the test's directory */
};

static struct tree *walking;
static size_t walk_base;

/* nftw() callback: watch each directory as inotifywait -r does. */
static int watch_one(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	struct tree *t = walking;

	if (type != FTW_D)
		return 0;
	t->wd[t->nr] = inotify_add_watch(t->in, path, IN_ALL_EVENTS);
	if (t->wd[t->nr] < 0)
		return -1;
	snprintf(t->rel[t->nr], sizeof(t->rel[0]), "%s",
		 path[walk_base] ? path + walk_base + 1 : "");
	t->nr++;
	return 0;
}

FIXTURE(tree) {
	struct tb_dir d;	/* on /mnt/share, made on the server */
	char path[256];		/* the same, on MNT */
	char saved_cap[32];
	struct tree t;
	int tops, per_top;
};

FIXTURE_VARIANT(tree) {
	const char *opts;	/* the mount's notifytree= options */
	int big;		/* the 2,041 directories, else 21 */
	int own;		/* handles below the tree once armed; -1: all */
	int capped;		/* dir_watch_max leaves most without one */
};

FIXTURE_VARIANT_ADD(tree, covered) {
	.opts = "notifytree=always", .big = 1, .own = 0,
};

FIXTURE_VARIANT_ADD(tree, per_directory) {
	.opts = "notifytree=never", .big = 1, .own = -1,
};

FIXTURE_VARIANT_ADD(tree, covered_with_five_own) {
	.opts = "notifytree=always,notifydirs=5", .big = 0, .own = 5,
};

FIXTURE_VARIANT_ADD(tree, capped) {
	.opts = "notifytree=never", .big = 0, .own = -1, .capped = 1,
};

FIXTURE_SETUP(tree)
{
	struct rlimit nofile = { 8192, 8192 };
	int fd;
	ssize_t n;

	self->t.in = -1;
	self->tops = variant->big ? TOPS : SMALL_TOPS;
	self->per_top = variant->big ? PER_TOP : SMALL_PER_TOP;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &nofile));
	fd = open(WATCH_MAX, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, self->saved_cap, sizeof(self->saved_cap) - 1);
	close(fd);
	ASSERT_LT(0, n);
	self->saved_cap[n] = '\0';
	self->t.wd = calloc(self->tops * (self->per_top + 1) + 1,
			    sizeof(*self->t.wd));
	self->t.rel = calloc(self->tops * (self->per_top + 1) + 1,
			     sizeof(*self->t.rel));
	ASSERT_TRUE(self->t.wd && self->t.rel);
	self->t.in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	ASSERT_LE(0, self->t.in);
}

FIXTURE_TEARDOWN(tree)
{
	if (self->t.in >= 0)
		close(self->t.in);
	umount2(MNT, MNT_DETACH);
	if (self->saved_cap[0])
		tb_write_file(WATCH_MAX, self->saved_cap);
	free(self->t.wd);
	free(self->t.rel);
	if (!self->d.name[0] || !tb_server(NULL, "rmtree %s", self->d.name))
		return;
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/*
 * The tree, made on the server's disk, and the mount with the variant's
 * options; @cap is dir_watch_max meanwhile (a request for each directory
 * in the per-directory mode).
 */
static void make_tree(struct __test_metadata *_metadata,
		      FIXTURE_DATA(tree) *self,
		      const FIXTURE_VARIANT(tree) *variant, const char *cap)
{
	char cmd[512], last[32];
	int i;

	ASSERT_EQ(0, tb_write_file(WATCH_MAX, cap));
	ASSERT_EQ(0, tb_server_dir(&self->d, "tree"));
	ASSERT_EQ(0, tb_server(NULL, "mkdirs %s/t %d", self->d.name,
			       self->tops));
	for (i = 0; i < self->tops; i++)
		ASSERT_EQ(0, tb_server(NULL, "mkdirs %s/t-%d/d %d",
				       self->d.name, i, self->per_top));
	snprintf(cmd, sizeof(cmd), "%s/t-%d", self->d.path, self->tops - 1);
	snprintf(last, sizeof(last), "d-%d", self->per_top - 1);
	ASSERT_EQ(1, tb_wait_listed(cmd, last, 60));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p " MNT " && mount -t cifs //server/share " MNT
		 " -o vers=3.1.1,credentials=/etc/testbed/cifs.cred,"
		 "remoteinotify,%s", variant->opts);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s: refused", cmd);
	snprintf(self->path, sizeof(self->path), MNT "/%s", self->d.name);
}

/* Watch the tree on MNT; the seconds it took. */
static double watch_tree(struct __test_metadata *_metadata,
			 FIXTURE_DATA(tree) *self)
{
	double t0 = tb_now();

	walking = &self->t;
	walk_base = strlen(self->path);
	ASSERT_EQ(0, nftw(self->path, watch_one, 64, FTW_PHYS))
		TH_LOG("watching %s: %s", self->path, strerror(errno));
	EXPECT_EQ(self->tops * (self->per_top + 1) + 1, self->t.nr);
	return tb_now() - t0;
}

static int wd_index(const struct tree *t, int wd)
{
	int i;

	for (i = 0; i < t->nr; i++)
		if (t->wd[i] == wd)
			return i;
	return -1;
}

/*
 * Read events for @seconds or until @want of @mask named @names (each
 * "dir/name" relative to the test's directory) were each heard once; the
 * number heard, with *@dups the events heard more than once and *@stray
 * those of @mask naming nothing asked for.
 */
static int hear(struct tree *t, uint32_t mask, char (*names)[96], int want,
		double seconds, int *dups, int *stray)
{
	char buf[65536] __attribute__((aligned(8)));
	unsigned char *seen = calloc(want, 1);
	double end = tb_now() + seconds;
	char full[192];
	int got = 0, i, j;

	*dups = *stray = 0;
	while (seen && tb_now() < end && got < want) {
		struct pollfd pfd = { .fd = t->in, .events = POLLIN };
		ssize_t len, off;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		len = read(t->in, buf, sizeof(buf));
		for (off = 0; len > 0 && off < len;) {
			struct inotify_event *ie = (void *)(buf + off);

			off += sizeof(*ie) + ie->len;
			if (!(ie->mask & mask) || !ie->len)
				continue;
			i = wd_index(t, ie->wd);
			if (i < 0) {
				(*stray)++;
				continue;
			}
			snprintf(full, sizeof(full), "%s%s%s", t->rel[i],
				 t->rel[i][0] ? "/" : "", ie->name);
			for (j = 0; j < want && strcmp(names[j], full); j++)
				;
			if (j == want)
				(*stray)++;
			else if (seen[j])
				(*dups)++;
			else {
				seen[j] = 1;
				got++;
			}
		}
	}
	free(seen);
	return got;
}

/*
 * @n files made by another SMB client at random places of the tree, the
 * path of each relative to the test's directory in @names.
 */
static int create_elsewhere(FIXTURE_DATA(tree) *self, char (*names)[96],
			    int n)
{
	char cmds[512];
	int i, len = 0;

	for (i = 0; i < n; i++) {
		int top = random() % self->tops, sub = random() % self->per_top;

		snprintf(names[i], sizeof(names[0]), "t-%d/d-%d/f-%d", top,
			 sub, i);
		len += snprintf(cmds + len, sizeof(cmds) - len,
				"put /etc/hostname %s/%s;", self->d.name,
				names[i]);
		if ((i + 1) % PER_SESSION == 0 || i == n - 1) {
			if (tb_second_session("%s", cmds))
				return -1;
			len = 0;
		}
	}
	return 0;
}

/*
 * The tree watched; smbd's handles below it counted once armed; files
 * made by another client at random places all heard, once each, on the
 * watch of their directory, with their name.
 */
TEST_F_TIMEOUT(tree, another_client_heard_everywhere, 900)
{
	if (variant->capped)
		SKIP(return, "a case of its own");
	make_tree(_metadata, self, variant, "8192");
	char names[CREATES][96];
	int want = variant->big ? CREATES : 8;
	int all = self->tops * (self->per_top + 1) + 1;
	int got, dups, stray, own;
	long long opens;
	double armed;

	armed = watch_tree(_metadata, self);
	own = variant->own < 0 ? all : variant->own;
	opens = tb_wait_opens(self->d.name, own, 300);
	TH_LOG("%s: %d directories watched in %.1fs; smbd holds %lld handles below them",
	       variant->opts, self->t.nr, armed, opens);
	EXPECT_EQ(own, opens);
	/* the share's request, on its root, is armed too */
	if (variant->own >= 0)
		EXPECT_LE(1, tb_wait_count("notifies", ".", 1, 30, 500));

	srandom(27);
	ASSERT_EQ(0, create_elsewhere(self, names, want));
	got = hear(&self->t, IN_CREATE, names, want, EVENT_WAIT, &dups,
		   &stray);
	TH_LOG("%d of %d creates through another client heard (%d twice, %d stray)",
	       got, want, dups, stray);
	EXPECT_EQ(want, got);
	EXPECT_EQ(0, dups);
	EXPECT_EQ(0, stray);
}

/* Read inotify events for @seconds into @out; how many bytes. */
static ssize_t read_for(int in, char *out, size_t size, double seconds)
{
	double end = tb_now() + seconds;
	size_t have = 0;

	while (tb_now() < end && have < size) {
		struct pollfd pfd = { .fd = in, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = read(in, out + have, size - have);
		if (n > 0)
			have += n;
	}
	return have;
}

/* Drop the events queued so far: the walk's own opens and reads. */
static void drain(int in)
{
	char buf[65536] __attribute__((aligned(8)));

	while (read(in, buf, sizeof(buf)) > 0)
		;
}

/* Whether the events in @buf have @mask on @wd (and @name, if given). */
static int has_event(const char *buf, ssize_t len, int wd, uint32_t mask,
		     const char *name)
{
	ssize_t off;

	for (off = 0; off < len;) {
		const struct inotify_event *ie = (const void *)(buf + off);

		off += sizeof(*ie) + ie->len;
		if (ie->wd == wd && (ie->mask & mask) == mask &&
		    (!name || (ie->len && !strcmp(ie->name, name))))
			return 1;
	}
	return 0;
}

/* Log the events in @buf, for a case that did not find what it wanted. */
static void log_events(struct __test_metadata *_metadata, const char *buf,
		       ssize_t len)
{
	ssize_t off;

	for (off = 0; off < len;) {
		const struct inotify_event *ie = (const void *)(buf + off);

		off += sizeof(*ie) + ie->len;
		TH_LOG("wd %d mask 0x%x %s", ie->wd, ie->mask,
		       ie->len ? ie->name : "");
	}
}

/*
 * A covered directory renamed by another client keeps its watch, which
 * hears IN_MOVE_SELF and then a create in it under the new name; one
 * removed hears IN_DELETE_SELF and IN_IGNORED, as on a local filesystem.
 */
TEST_F_TIMEOUT(tree, covered_directory_renamed_and_removed, 600)
{
	char buf[65536] __attribute__((aligned(8)));
	char moved[96], gone[96], renamed[96];
	int wd_moved, wd_gone;
	ssize_t len;

	if (variant->big || variant->capped)
		SKIP(return, "the small covered tree is enough");
	make_tree(_metadata, self, variant, "8192");
	watch_tree(_metadata, self);
	EXPECT_EQ(variant->own, tb_wait_opens(self->d.name, variant->own,
					      120));
	EXPECT_LE(1, tb_wait_count("notifies", ".", 1, 30, 500));
	/* the last two marked, leaves: covered whatever notifydirs= keeps */
	ASSERT_LE(3, self->t.nr);
	snprintf(moved, sizeof(moved), "%s", self->t.rel[self->t.nr - 2]);
	snprintf(gone, sizeof(gone), "%s", self->t.rel[self->t.nr - 1]);
	snprintf(renamed, sizeof(renamed), "%s", moved);
	*strrchr(renamed, '/') = '\0';
	strcat(renamed, "/renamed");
	wd_moved = self->t.wd[self->t.nr - 2];
	wd_gone = self->t.wd[self->t.nr - 1];
	ASSERT_LE(0, wd_moved);
	ASSERT_LE(0, wd_gone);

	drain(self->t.in);
	ASSERT_EQ(0, tb_second_session("rename %s/%s %s/%s; rmdir %s/%s",
				       self->d.name, moved, self->d.name,
				       renamed, self->d.name, gone));
	len = read_for(self->t.in, buf, sizeof(buf), 10);
	EXPECT_TRUE(has_event(buf, len, wd_moved, IN_MOVE_SELF, NULL));
	EXPECT_TRUE(has_event(buf, len, wd_gone, IN_DELETE_SELF, NULL));
	EXPECT_TRUE(has_event(buf, len, wd_gone, IN_IGNORED, NULL));
	if (_metadata->exit_code == KSFT_FAIL) {
		TH_LOG("moved %s (wd %d) to %s, removed %s (wd %d)", moved,
		       wd_moved, renamed, gone, wd_gone);
		log_events(_metadata, buf, len);
	}

	drain(self->t.in);
	ASSERT_EQ(0, tb_second_session("put /etc/hostname %s/%s/after",
				       self->d.name, renamed));
	len = read_for(self->t.in, buf, sizeof(buf), 10);
	EXPECT_TRUE(has_event(buf, len, wd_moved, IN_CREATE, "after")) {
		char cmd[512];

		log_events(_metadata, buf, len);
		snprintf(cmd, sizeof(cmd), "grep Notify: /proc/fs/cifs/DebugData; ls -ia %s/%s/..; dmesg | tail -5; grep cifs /proc/mounts", self->path, renamed);
		system(cmd);
	}
}

/*
 * notifytree=never with dir_watch_max reached: the directories left
 * without a request of their own are told (IN_Q_OVERFLOW), once, and
 * DebugData counts them, rather than left to wait for the server.
 */
TEST_F_TIMEOUT(tree, past_the_cap_the_watchers_are_told, 300)
{
	char buf[65536] __attribute__((aligned(8)));
	char cap[32];
	int n, overflows = 0;
	ssize_t len, off;

	if (!variant->capped)
		SKIP(return, "for the capped mount only");
	/* an earlier case's watches linger for a second after their watcher */
	sleep(3);
	n = tb_listed_watches();
	ASSERT_LE(0, n);
	snprintf(cap, sizeof(cap), "%d", n + 5);
	make_tree(_metadata, self, variant, cap);
	watch_tree(_metadata, self);
	len = read_for(self->t.in, buf, sizeof(buf), 10);
	for (off = 0; off < len;) {
		const struct inotify_event *ie = (const void *)(buf + off);

		off += sizeof(*ie) + ie->len;
		overflows += !!(ie->mask & IN_Q_OVERFLOW);
	}
	TH_LOG("%d directories watched, %d remote watches allowed beside the %d listed: %d overflow event(s)",
	       self->t.nr, 5, n, overflows);
	EXPECT_LE(1, overflows);
	EXPECT_EQ(1, tb_file_has_line("/proc/fs/cifs/DebugData", "Notify:",
				      "hear of local changes only"));
}

TEST_HARNESS_MAIN
