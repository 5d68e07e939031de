// SPDX-License-Identifier: GPL-2.0
/*
 * parity: the events each API gives for a change, on a tmpfs with the
 * change made locally (the reference) beside the CIFS mount with the same
 * change made on the server's own disk or by a second SMB client.
 *
 * Each case is one change (a scenario, from one source).  Six watchers are
 * armed at once on each filesystem: dnotify on a directory D (all DN_*,
 * multishot: did it signal), inotify on D and on the file D/f, a fanotify
 * inode mark on D, a filesystem mark and a mount mark (FID and name
 * groups; a mount mark carries FAN_MODIFY only), and D and O are listed,
 * as a watcher lists what it watches.  What each receives is
 * written as a line "# parity|scenario|source|api|tmpfs|cifs|verdict",
 * events in order, repeats of the event just before folded (as the
 * groups' own queues fold them when unread), directories by name: D, its
 * sibling O, the filesystem's root.  Every cell is equal, or its
 * difference is named in the table below with why; any other difference
 * fails the case.  The suite gathers the lines into parity.md.
 *
 * The filesystem and mount marks see every change on the mount: these
 * cases do not run beside others.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 2)
#define WAIT		15.0	/* for the first event of a remote change */
#define QUIET		3.0	/* after the last, for more (echo window 2 s) */
#define LOCAL_QUIET	0.5

enum api { A_DNOTIFY, A_IN_DIR, A_IN_FILE, A_FAN_INODE, A_FAN_FS,
	   A_FAN_MOUNT, N_API };

static const char *const api_name[N_API] = {
	"dnotify D", "inotify D", "inotify D/f", "fanotify inode D",
	"fanotify filesystem", "fanotify mount",
};

#define IN_MASK		(IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
#define FAN_MASK	(FAN_MODIFY | FAN_ATTRIB | FAN_MOVED_FROM | \
			 FAN_MOVED_TO | FAN_CREATE | FAN_DELETE | \
			 FAN_DELETE_SELF | FAN_MOVE_SELF | FAN_ONDIR)

/*
 * The differences that are named: where a cell differs, the case passes
 * only if its scenario, source ("*": both) and API are listed here.
 */
#define XATTR_WHY "Samba stores the new object's DOS attributes in an xattr just after an SMB create: a MODIFIED a local create does not make (fanotify merges it into the create)"
#define MODIFIED_WHY "FILE_ACTION_MODIFIED does not tell data from attributes: a watcher that wants both gets FS_MODIFY (one that wants FS_ATTRIB alone gets FS_ATTRIB)"
#define HALF_MOVE_WHY "Samba's inotify backend sees half of a move from a directory smbd does not watch: ADDED, a create"
#define SPLIT_MOVE_WHY "Samba reports a move between directories as REMOVED in one and ADDED in the other, then the MODIFIED of the attributes: no MOVED_FROM/MOVED_TO pair"
#define MOVE_OUT_WHY "the server reports a move to another directory as REMOVED: a removal, and the file's watch ends (DELETE_SELF, IGNORED) where tmpfs' follows it (MOVE_SELF)"
#define TRUNCATE_WHY "fsnotify reports a local truncate(2) without a path, so no mount mark hears it; the server's MODIFIED reaches the mount mark with the file's path"
#define TREE_GONE_WHY "the server's order (its disk's, on two watches); D's DELETE_SELF comes at once, where tmpfs defers it while the dnotify watcher holds D open; a removal in D that arrives after D's own is not delivered (D's watch has ended)"

static const struct named {
	const char *scenario, *source;
	enum api api;
	const char *why;
} named[] = {
	{ "create", "client", A_FAN_MOUNT, XATTR_WHY },
	{ "truncate", "*", A_FAN_MOUNT, TRUNCATE_WHY },
	{ "chmod", "*", A_FAN_MOUNT, MODIFIED_WHY },
	{ "rename in", "client", A_FAN_MOUNT, SPLIT_MOVE_WHY },
	{ "rename out", "client", A_FAN_MOUNT, SPLIT_MOVE_WHY },
	{ "create", "client", A_IN_DIR, XATTR_WHY },
	{ "create", "client", A_FAN_INODE, XATTR_WHY },
	{ "create", "client", A_FAN_FS, XATTR_WHY },
	{ "mkdir", "client", A_IN_DIR, XATTR_WHY },
	{ "mkdir", "client", A_FAN_INODE, XATTR_WHY },
	{ "mkdir", "client", A_FAN_FS, XATTR_WHY },
	{ "chmod", "*", A_IN_DIR, MODIFIED_WHY },
	{ "chmod", "*", A_IN_FILE, MODIFIED_WHY },
	{ "chmod", "*", A_FAN_INODE, MODIFIED_WHY },
	{ "chmod", "*", A_FAN_FS, MODIFIED_WHY },
	{ "rename in", "disk", A_IN_DIR, HALF_MOVE_WHY },
	{ "rename in", "disk", A_FAN_INODE, HALF_MOVE_WHY },
	{ "rename in", "disk", A_FAN_FS, HALF_MOVE_WHY },
	{ "rename in", "client", A_IN_DIR, SPLIT_MOVE_WHY },
	{ "rename in", "client", A_FAN_INODE, SPLIT_MOVE_WHY },
	{ "rename in", "client", A_FAN_FS, SPLIT_MOVE_WHY },
	{ "rename out", "*", A_IN_DIR, MOVE_OUT_WHY },
	{ "rename out", "*", A_IN_FILE, MOVE_OUT_WHY },
	{ "rename out", "*", A_FAN_INODE, MOVE_OUT_WHY },
	{ "rename out", "*", A_FAN_FS, MOVE_OUT_WHY },
	{ "D removed", "*", A_IN_DIR, TREE_GONE_WHY },
	{ "D removed", "*", A_FAN_INODE, TREE_GONE_WHY },
	{ "D removed", "*", A_FAN_FS, TREE_GONE_WHY },
};

/* One filesystem under test: its root, D, O and D/f, and their handles. */
struct where {
	const char *fs;		/* "tmpfs" or "cifs" */
	char base[128], d[192], o[192], f[256];
	char dname[64], oname[64];	/* relative to the share */
	unsigned char fh[3][72];	/* base, D, O */
	unsigned int fh_len[3];
};

struct watch {
	int dfd, sfd, in, fan[3], wd_dir, wd_file;
	int err[N_API];		/* errno of an API that could not be armed */
	int signals;
	struct tb_events ev[N_API];
};

/* @fmt with {D} and {O} replaced by the directories' names in @w. */
static void subst(char *out, size_t len, const char *fmt,
		  const struct where *w, int relative)
{
	size_t n = 0;

	while (*fmt && n + 1 < len) {
		const char *s = NULL;

		if (!strncmp(fmt, "{D}", 3))
			s = relative ? w->dname : w->d;
		else if (!strncmp(fmt, "{O}", 3))
			s = relative ? w->oname : w->o;
		if (s) {
			n += snprintf(out + n, len - n, "%s", s);
			fmt += 3;
		} else {
			out[n++] = *fmt++;
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

/* The local changes, made on the tmpfs. */
static int in_d(const struct where *w, const char *name, char *p, size_t len)
{
	return snprintf(p, len, "%s/%s", w->d, name) >= (int)len ? -1 : 0;
}

static int write_fd(int fd, int n)
{
	int rc = fd < 0 || write(fd, "0123456789", n) != n ? -1 : 0;

	if (fd >= 0)
		close(fd);
	return rc;
}

static int l_create(const struct where *w)
{
	char p[256];

	in_d(w, "new", p, sizeof(p));
	return write_fd(open(p, O_WRONLY | O_CREAT | O_EXCL, 0644), 0);
}

static int l_append(const struct where *w)
{
	return write_fd(open(w->f, O_WRONLY | O_APPEND), 10);
}

static int l_rewrite(const struct where *w)
{
	return write_fd(open(w->f, O_WRONLY | O_TRUNC), 10);
}

static int l_truncate(const struct where *w)
{
	return truncate(w->f, 0);
}

static int l_chmod(const struct where *w)
{
	return chmod(w->f, 0600);
}

static int l_readonly(const struct where *w)
{
	return chmod(w->f, 0444);
}

static int l_rename(const struct where *w)
{
	char p[256];

	in_d(w, "g", p, sizeof(p));
	return rename(w->f, p);
}

static int l_rename_in(const struct where *w)
{
	char a[256], b[256];

	snprintf(a, sizeof(a), "%s/x", w->o);
	in_d(w, "x", b, sizeof(b));
	return rename(a, b);
}

static int l_rename_out(const struct where *w)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/f", w->o);
	return rename(w->f, p);
}

static int l_unlink(const struct where *w)
{
	return unlink(w->f);
}

static int l_mkdir(const struct where *w)
{
	char p[256];

	in_d(w, "sub2", p, sizeof(p));
	return mkdir(p, 0755);
}

static int l_rmdir(const struct where *w)
{
	char p[256];

	in_d(w, "sub", p, sizeof(p));
	return rmdir(p);
}

static int l_remove_d(const struct where *w)
{
	return tb_remove_tree(w->d);
}

FIXTURE(parity) {
	struct where w[2];	/* tmpfs, cifs */
	char tmp[32];
	int mounted;
};

FIXTURE_VARIANT(parity) {
	const char *scenario, *source;
	int (*local)(const struct where *w);
	const char *server;	/* a tb-serverd request, or NULL */
	const char *client;	/* smbclient's commands, or NULL */
};

#define DISK(id, scen, fn, req) \
	FIXTURE_VARIANT_ADD(parity, id##_disk) { \
		.scenario = scen, .source = "disk", .local = fn, \
		.server = req, \
	}
#define CLIENT(id, scen, fn, cmds) \
	FIXTURE_VARIANT_ADD(parity, id##_client) { \
		.scenario = scen, .source = "client", .local = fn, \
		.client = cmds, \
	}

DISK(create, "create", l_create, "create {D}/new");
CLIENT(create, "create", l_create, "put /tmp/parity-empty {D}/new");
DISK(write, "write", l_append, "write {D}/f 10");
CLIENT(write, "write", l_rewrite, "put /tmp/parity-ten {D}/f");
DISK(truncate, "truncate", l_truncate, "truncate {D}/f 0");
CLIENT(truncate, "truncate", l_truncate, "put /tmp/parity-empty {D}/f");
DISK(chmod, "chmod", l_chmod, "chmod {D}/f 600");
CLIENT(chmod, "chmod", l_readonly, "setmode {D}/f +r");
DISK(rename, "rename within", l_rename, "rename {D}/f {D}/g");
CLIENT(rename, "rename within", l_rename, "rename {D}/f {D}/g");
DISK(rename_in, "rename in", l_rename_in, "rename {O}/x {D}/x");
CLIENT(rename_in, "rename in", l_rename_in, "rename {O}/x {D}/x");
DISK(rename_out, "rename out", l_rename_out, "rename {D}/f {O}/f");
CLIENT(rename_out, "rename out", l_rename_out, "rename {D}/f {O}/f");
DISK(delete, "delete", l_unlink, "unlink {D}/f");
CLIENT(delete, "delete", l_unlink, "del {D}/f");
DISK(mkdir, "mkdir", l_mkdir, "mkdir {D}/sub2");
CLIENT(mkdir, "mkdir", l_mkdir, "mkdir {D}/sub2");
DISK(rmdir, "rmdir", l_rmdir, "rmdir {D}/sub");
CLIENT(rmdir, "rmdir", l_rmdir, "rmdir {D}/sub");
DISK(remove_d, "D removed", l_remove_d, "rmtree {D}");
CLIENT(remove_d, "D removed", l_remove_d, "deltree {D}");

/* D with f (10 bytes) and sub in it, and O with x, on the tmpfs. */
static int local_tree(struct where *w)
{
	char p[256];

	if (mkdir(w->d, 0755) || mkdir(w->o, 0755))
		return -1;
	in_d(w, "sub", p, sizeof(p));
	if (mkdir(p, 0755))
		return -1;
	snprintf(p, sizeof(p), "%s/x", w->o);
	if (write_fd(open(p, O_WRONLY | O_CREAT, 0644), 0))
		return -1;
	return write_fd(open(w->f, O_WRONLY | O_CREAT, 0644), 10);
}

/* The same on the server's disk, seen by the client. */
static int server_tree(struct where *w)
{
	if (tb_server(NULL, "mkdir %s", w->dname) ||
	    tb_server(NULL, "mkdir %s", w->oname) ||
	    tb_server(NULL, "mkdir %s/sub", w->dname) ||
	    tb_server(NULL, "create %s/x", w->oname) ||
	    tb_server(NULL, "write %s/f 10", w->dname))
		return -1;
	return tb_wait_file(w->f, WAIT) && tb_wait_file(w->o, WAIT) ? 0 : -1;
}

static void where_init(struct where *w, const char *fs, const char *base)
{
	char name[48];

	w->fs = fs;
	snprintf(w->base, sizeof(w->base), "%s", base);
	tb_unique(name, sizeof(name), "par");
	snprintf(w->dname, sizeof(w->dname), "%s-d", name);
	snprintf(w->oname, sizeof(w->oname), "%s-o", name);
	snprintf(w->d, sizeof(w->d), "%s/%s", base, w->dname);
	snprintf(w->o, sizeof(w->o), "%s/%s", base, w->oname);
	snprintf(w->f, sizeof(w->f), "%s/f", w->d);
}

FIXTURE_SETUP(parity)
{
	int fd;

	strcpy(self->tmp, "/tmp/parity-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->tmp));
	ASSERT_EQ(0, mount("tmpfs", self->tmp, "tmpfs", 0, "size=4m"));
	self->mounted = 1;
	where_init(&self->w[0], "tmpfs", self->tmp);
	where_init(&self->w[1], "cifs", tb_share_mnt());
	ASSERT_EQ(0, local_tree(&self->w[0]));
	ASSERT_EQ(0, server_tree(&self->w[1]));
	fd = open("/tmp/parity-empty", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_EQ(0, write_fd(fd, 0));
	fd = open("/tmp/parity-ten", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_EQ(0, write_fd(fd, 10));
}

FIXTURE_TEARDOWN(parity)
{
	if (self->mounted)
		umount2(self->tmp, MNT_DETACH);
	rmdir(self->tmp);
	tb_remove_tree(self->w[1].d);
	tb_remove_tree(self->w[1].o);
}

/* Arm the six watchers on @w; an API that cannot be armed keeps its errno. */
static int arm(struct watch *wt, struct where *w)
{
	static const unsigned int how[3] = { FAN_MARK_INODE,
		FAN_MARK_FILESYSTEM, FAN_MARK_MOUNT };
	const uint64_t mask[3] = { FAN_MASK | FAN_EVENT_ON_CHILD, FAN_MASK,
				   FAN_MODIFY };
	const char *on[3] = { w->d, w->base, w->base };
	sigset_t set;
	long long n;
	int i;

	memset(wt, 0, sizeof(*wt));
	tb_handle(w->base, w->fh[0], &w->fh_len[0]);
	tb_handle(w->d, w->fh[1], &w->fh_len[1]);
	tb_handle(w->o, w->fh[2], &w->fh_len[2]);
	sigemptyset(&set);
	sigaddset(&set, NOTIFY_SIG);
	sigprocmask(SIG_BLOCK, &set, NULL);
	wt->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	wt->dfd = tb_open_watchable(w->d, NOTIFY_SIG);
	if (wt->sfd < 0 || wt->dfd < 0 ||
	    fcntl(wt->dfd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_RENAME |
		  DN_MODIFY | DN_ATTRIB | DN_MULTISHOT))
		wt->err[A_DNOTIFY] = errno;
	wt->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	wt->wd_dir = inotify_add_watch(wt->in, w->d, IN_MASK);
	if (wt->wd_dir < 0)
		wt->err[A_IN_DIR] = errno;
	wt->wd_file = inotify_add_watch(wt->in, w->f, IN_MASK);
	if (wt->wd_file < 0)
		wt->err[A_IN_FILE] = errno;
	for (i = 0; i < 3; i++) {
		wt->fan[i] = tb_remote_fan_group(FAN_NONBLOCK);
		if (wt->fan[i] < 0 ||
		    fanotify_mark(wt->fan[i], FAN_MARK_ADD | how[i], mask[i],
				  AT_FDCWD, on[i]))
			wt->err[A_FAN_INODE + i] = errno;
	}
	/* what a watcher does next: list what it watches */
	tb_count_entries(w->d);
	tb_count_entries(w->o);
	if (strcmp(w->fs, "cifs"))
		return 0;
	/*
	 * The requests on D and on the root: D's watch of its own removal
	 * and rename, and the filesystem mark's watch of the whole share.
	 */
	if (!tb_wait_remote_watch(w->dname, WAIT)) {
		fprintf(stderr, "# no request on %s\n", w->dname);
		return -1;
	}
	n = tb_wait_notifies(".", wt->err[A_FAN_FS] ? 1 : 2, WAIT);
	if (n != (wt->err[A_FAN_FS] ? 1 : 2)) {
		fprintf(stderr, "# %lld requests on the share's root\n", n);
		return -1;
	}
	return 0;
}

static void disarm(struct watch *wt)
{
	int i;

	if (wt->dfd >= 0)
		close(wt->dfd);
	if (wt->sfd >= 0)
		close(wt->sfd);
	close(wt->in);
	for (i = 0; i < 3; i++)
		if (wt->fan[i] >= 0)
			close(wt->fan[i]);
}

/* Read every watcher until @quiet seconds passed with nothing, at most @wait. */
static void collect(struct watch *wt, double wait, double quiet)
{
	double end = tb_now() + wait, last = 0;
	char buf[16384] __attribute__((aligned(8)));
	struct signalfd_siginfo si;
	struct inotify_event *ie;
	struct tb_events all;
	int i, j;

	for (;;) {
		struct pollfd pfd[5] = {
			{ .fd = wt->sfd, .events = POLLIN },
			{ .fd = wt->in, .events = POLLIN },
			{ .fd = wt->fan[0], .events = POLLIN },
			{ .fd = wt->fan[1], .events = POLLIN },
			{ .fd = wt->fan[2], .events = POLLIN },
		};
		double now = tb_now(), left = end - now;
		ssize_t len;

		if (last > 0 && now - last >= quiet)
			break;
		if (last > 0 && last + quiet - now < left)
			left = last + quiet - now;
		if (left <= 0)
			break;
		if (poll(pfd, 5, (int)(left * 1000) + 1) <= 0)
			continue;
		last = tb_now();
		while (read(wt->sfd, &si, sizeof(si)) == sizeof(si))
			wt->signals++;
		len = read(wt->in, buf, sizeof(buf));
		if (len > 0) {
			/* the file's watch and the directory's apart */
			memset(&all, 0, sizeof(all));
			tb_parse_inotify(&all, buf, len);
			ie = (void *)buf;
			for (i = 0; i < all.n; i++) {
				j = ie->wd == wt->wd_file ? A_IN_FILE : A_IN_DIR;
				if (wt->ev[j].n < TB_EVENTS_MAX)
					wt->ev[j].ev[wt->ev[j].n++] = all.ev[i];
				ie = (void *)((char *)ie + sizeof(*ie) + ie->len);
			}
		}
		for (i = 0; i < 3; i++) {
			len = wt->fan[i] < 0 ? 0 :
			      read(wt->fan[i], buf, sizeof(buf));
			if (len > 0)
				tb_parse_fanotify(&wt->ev[A_FAN_INODE + i], buf,
						  len);
		}
	}
}

static const struct { uint32_t bit; const char *name; } bits[] = {
	{ IN_MODIFY, "MODIFY" }, { IN_ATTRIB, "ATTRIB" },
	{ IN_MOVED_FROM, "MOVED_FROM" }, { IN_MOVED_TO, "MOVED_TO" },
	{ IN_CREATE, "CREATE" }, { IN_DELETE, "DELETE" },
	{ IN_DELETE_SELF, "DELETE_SELF" }, { IN_MOVE_SELF, "MOVE_SELF" },
	{ IN_UNMOUNT, "UNMOUNT" }, { IN_Q_OVERFLOW, "OVERFLOW" },
	{ IN_IGNORED, "IGNORED" }, { IN_ISDIR, "ISDIR" },
};

/* "CREATE+ISDIR D/sub": one event as the cell shows it. */
static void event_str(const struct tb_event *e, const struct where *w,
		      char *out, size_t len)
{
	static const char *const dirs[3] = { "/", "D/", "O/" };
	const char *dir = "", *name = e->name;
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (e->mask & bits[i].bit)
			n += snprintf(out + n, len - n, "%s%s", n ? "+" : "",
				      bits[i].name);
	if (!n)
		n += snprintf(out, len, "0x%x", e->mask);
	if (e->fh_len) {
		dir = "?/";
		for (i = 0; i < 3; i++)
			if (e->fh_len == w->fh_len[i] &&
			    !memcmp(e->fh, w->fh[i], e->fh_len))
				dir = dirs[i];
	}
	if (!strcmp(e->name, w->dname))
		name = "D";
	else if (!strcmp(e->name, w->oname))
		name = "O";
	if (e->name[0] || e->fh_len)
		snprintf(out + n, len - n, " %s%s", dir, name);
}

/* The cell of @api: its events in order, a repeat of the one before folded. */
static void cell(const struct watch *wt, enum api api, const struct where *w,
		 char *out, size_t len)
{
	char e[320], prev[320] = "";
	size_t n = 0;
	int i;

	out[0] = '\0';
	if (wt->err[api]) {
		snprintf(out, len, "refused: %s", strerror(wt->err[api]));
		return;
	}
	if (api == A_DNOTIFY) {
		snprintf(out, len, "%s", wt->signals ? "signal" : "-");
		return;
	}
	for (i = 0; i < wt->ev[api].n && n < len; i++) {
		event_str(&wt->ev[api].ev[i], w, e, sizeof(e));
		if (!strcmp(e, prev))
			continue;
		n += snprintf(out + n, len - n, "%s%s", n ? ", " : "", e);
		strcpy(prev, e);
	}
	if (!n)
		snprintf(out, len, "-");
}

static const char *named_why(const char *scenario, const char *source,
			     enum api api)
{
	unsigned int i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].api == api &&
		    (!strcmp(named[i].scenario, "*") ||
		     !strcmp(named[i].scenario, scenario)) &&
		    (!strcmp(named[i].source, "*") ||
		     !strcmp(named[i].source, source)))
			return named[i].why;
	return NULL;
}

/*
 * Print the row of each API for one change, tmpfs beside CIFS; the number
 * of cells that differ without a named reason.
 */
static int compare(const char *scenario, const char *source,
		   const struct watch *wt, const struct where *w)
{
	char a[1024], b[1024];
	int api, unnamed = 0;

	for (api = 0; api < N_API; api++) {
		const char *why;

		cell(&wt[0], api, &w[0], a, sizeof(a));
		cell(&wt[1], api, &w[1], b, sizeof(b));
		why = strcmp(a, b) ? named_why(scenario, source, api) : "";
		fprintf(stderr, "# parity|%s|%s|%s|%s|%s|%s\n", scenario,
			source, api_name[api], a, b,
			!why ? "DIFFERS" : *why ? why : "same");
		unnamed += !why;
	}
	return unnamed;
}

TEST_F_TIMEOUT(parity, same_events_or_named, 180)
{
	struct watch wt[2];
	char req[512];
	int rc, unnamed;

	/* the reference: tmpfs, the change made here */
	ASSERT_EQ(0, arm(&wt[0], &self->w[0]));
	ASSERT_EQ(0, variant->local(&self->w[0]));
	collect(&wt[0], 2.0, LOCAL_QUIET);
	disarm(&wt[0]);

	ASSERT_EQ(0, arm(&wt[1], &self->w[1]))
		TH_LOG("smbd holds no request for a watcher");
	if (variant->server) {
		subst(req, sizeof(req), variant->server, &self->w[1], 1);
		rc = tb_server(NULL, "%s", req);
	} else {
		subst(req, sizeof(req), variant->client, &self->w[1], 1);
		rc = tb_second_session("%s", req);
	}
	ASSERT_EQ(0, rc) TH_LOG("%s: %d", req, rc);
	collect(&wt[1], WAIT, QUIET);
	disarm(&wt[1]);
	unnamed = compare(variant->scenario, variant->source, wt, self->w);
	EXPECT_EQ(0, unnamed) TH_LOG("%d cells differ without a reason", unnamed);
}

/*
 * The filesystem unmounted with every watcher armed but dnotify's (its
 * open directory would keep the mount busy): a tmpfs of its own, and the
 * share mounted again on a connection of its own.
 */
FIXTURE(unmount) {
	struct where w[2];
	char mnt[2][48];
	int mounted[2];
};

FIXTURE_SETUP(unmount)
{
	char cmd[320];

	strcpy(self->mnt[0], "/tmp/parity-u-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->mnt[0]));
	ASSERT_EQ(0, mount("tmpfs", self->mnt[0], "tmpfs", 0, "size=4m"));
	self->mounted[0] = 1;
	snprintf(self->mnt[1], sizeof(self->mnt[1]), "/mnt/parity-u-%d",
		 (int)getpid());
	ASSERT_EQ(0, mkdir(self->mnt[1], 0755));
	/* mount.cifs: the kernel wants the server's address, not its name */
	snprintf(cmd, sizeof(cmd),
		 "mount -t cifs //server/share %s -o vers=3.1.1,credentials=/etc/testbed/cifs.cred,remoteinotify,nosharesock",
		 self->mnt[1]);
	ASSERT_EQ(0, system(cmd));
	self->mounted[1] = 1;
	where_init(&self->w[0], "tmpfs", self->mnt[0]);
	where_init(&self->w[1], "cifs", self->mnt[1]);
	ASSERT_EQ(0, local_tree(&self->w[0]));
	ASSERT_EQ(0, server_tree(&self->w[1]));
}

FIXTURE_TEARDOWN(unmount)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (self->mounted[i])
			umount2(self->mnt[i], MNT_DETACH);
		rmdir(self->mnt[i]);
	}
	tb_server(NULL, "rmtree %s", self->w[1].dname);
	tb_server(NULL, "rmtree %s", self->w[1].oname);
}

TEST_F_TIMEOUT(unmount, same_events_or_named, 180)
{
	struct watch wt[2];
	int i, unnamed;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, arm(&wt[i], &self->w[i]));
		close(wt[i].dfd);
		wt[i].dfd = -1;
		wt[i].err[A_DNOTIFY] = EBUSY;
		ASSERT_EQ(0, umount(self->mnt[i]))
			TH_LOG("umount %s: %s", self->mnt[i], strerror(errno));
		self->mounted[i] = 0;
		collect(&wt[i], i ? WAIT : 2.0, i ? QUIET : LOCAL_QUIET);
		disarm(&wt[i]);
	}
	unnamed = compare("umount", "local", wt, self->w);
	EXPECT_EQ(0, unnamed) TH_LOG("%d cells differ without a reason", unnamed);
}

TEST_HARNESS_MAIN
