// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify_bad_input: F_NOTIFY with what it must refuse, on the CIFS mount
 * (ENOTDIR, EBADF; a refused call leaves no watch and no server handle
 * behind; undefined bits ignored, as before the series), a share whose server refuses change
 * notification (Samba's "change notify = no": F_NOTIFY returns, nothing
 * hangs, local changes still signal), a watch the server refuses (the
 * call fails, the file's owner is left alone, nothing is signalled), and
 * the per-server cap on remote
 * watches (past it a watch is local only, as documented).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	10.0
#define SILENCE_WAIT	3.0
#define NONOTIFY_MNT	"/mnt/nonotify"
#define WATCH_MAX	"/sys/module/cifs/parameters/dir_watch_max"
#define DN_ALL		(DN_ACCESS | DN_MODIFY | DN_CREATE | DN_DELETE | \
			 DN_RENAME | DN_ATTRIB | DN_MULTISHOT)

FIXTURE(bad) {
	struct tb_dir d;	/* the watched directory */
	int fd;
	sigset_t set;
	char saved_cap[32];	/* dir_watch_max to restore, if changed */
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "bad"));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(bad)
{
	if (self->fd >= 0)
		close(self->fd);
	umount2(NONOTIFY_MNT, MNT_DETACH);
	if (self->saved_cap[0] && tb_write_file(WATCH_MAX, self->saved_cap))
		TH_LOG("could not restore %s to %s", WATCH_MAX, self->saved_cap);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

static int got_signal(sigset_t *set, int fd, double seconds)
{
	siginfo_t si;

	return tb_wait_sig(set, seconds, &si) == NOTIFY_SIG && si.si_fd == fd;
}

/* Wait (5 s at most) until no remote watch is lingering or ending. */
static void settle_watches(void)
{
	double end = tb_now() + 5.0;

	while (tb_now() < end &&
	       (tb_file_has_line("/proc/fs/cifs/DebugData", "Notify:", " idle ") > 0 ||
		tb_file_has_line("/proc/fs/cifs/DebugData", "Notify:", " ending ") > 0))
		usleep(100 * 1000);
}

/* The handles smbd (@op "opens", or "opens-nonotify") holds on @name. */
static long long server_opens_of(const char *op, const char *name)
{
	long long n = -1;

	return tb_server(&n, "%s %s", op, name) ? -1 : n;
}

TEST_F(bad, regular_file_is_enotdir)
{
	char file[192];
	int fd;

	snprintf(file, sizeof(file), "%s/plain", self->d.path);
	fd = open(file, O_CREAT | O_EXCL | O_RDWR, 0644);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, fcntl(fd, F_NOTIFY, DN_CREATE));
	EXPECT_EQ(ENOTDIR, errno);
	close(fd);
}

/*
 * Bits no DN_* event stands for are ignored, as they always were: the
 * series does not change F_NOTIFY's ABI for any filesystem, and
 * ->dir_notify() is given the defined bits only.  The watch works and
 * F_NOTIFY 0 removes it with its server handle.
 */
TEST_F(bad, undefined_bits_are_ignored_as_before)
{
	static const unsigned int bad_bits[] = { 0x40, 0x100, 0x10000, 0x40000000 };
	unsigned int i;

	for (i = 0; i < sizeof(bad_bits) / sizeof(bad_bits[0]); i++)
		EXPECT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT |
				   bad_bits[i]))
			TH_LOG("bit 0x%x refused: %s", bad_bits[i],
			       strerror(errno));
	ASSERT_EQ(0, tb_server(NULL, "create %s/x", self->d.name));
	EXPECT_EQ(1, got_signal(&self->set, self->fd, SIGNAL_WAIT));
	EXPECT_EQ(0, fcntl(self->fd, F_NOTIFY, 0));
	ASSERT_EQ(0, tb_server(NULL, "create %s/y", self->d.name));
	EXPECT_EQ(0, got_signal(&self->set, self->fd, SILENCE_WAIT));
	EXPECT_EQ(0, tb_wait_opens(self->d.name, 0, 10));
}

TEST_F(bad, closed_fd_is_ebadf)
{
	int fd = dup(self->fd);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(-1, fcntl(fd, F_NOTIFY, DN_CREATE));
	EXPECT_EQ(EBADF, errno);
}

/*
 * A server that refuses change notification (the server guest's second
 * smbd, port 4445, "change notify = no": STATUS_NOT_IMPLEMENTED): F_NOTIFY
 * returns promptly, nothing signals a server-side change, a local change
 * still signals, and the server holds no handle for the watch.
 */
/*
 * F_NOTIFY on a directory that the server will not open for the watch (it
 * was removed on the server's disk) succeeds, as it does on tmpfs for a
 * directory removed while open: the watch serves local changes only, the
 * caller becomes the file's owner as dnotify makes it, DebugData lists the
 * watch as refused, and the server holds no handle for it.  Before the fix
 * it failed with ENOENT, where F_NOTIFY on a CIFS directory had always
 * succeeded.  (A failed F_NOTIFY leaving the owner as it was is checked by
 * the soft mount's fault case, whose F_NOTIFY fails with EHOSTDOWN.)
 */
TEST_F(bad, refused_watch_succeeds_with_local_changes_only)
{
	char tmp[] = "/tmp/bad-XXXXXX", line[160];
	int fd;

	ASSERT_NE(NULL, mkdtemp(tmp));
	fd = open(tmp, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rmdir(tmp));
	EXPECT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
		TH_LOG("tmpfs: F_NOTIFY on a removed directory failed: %d",
		       errno);
	close(fd);

	ASSERT_EQ(0, fcntl(self->fd, F_GETOWN));
	ASSERT_EQ(0, tb_server(NULL, "rmdir %s", self->d.name));
	errno = 0;
	EXPECT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
		TH_LOG("F_NOTIFY on a directory the server refused failed: %d",
		       errno);
	EXPECT_EQ(getpid(), fcntl(self->fd, F_GETOWN));
	snprintf(line, sizeof(line), "%s filter", self->d.name);
	EXPECT_EQ(1, tb_file_has_line("/proc/fs/cifs/DebugData", line,
				      " refused "))
		TH_LOG("the watch of %s is not listed as refused",
		       self->d.name);
	EXPECT_EQ(0, server_opens_of("opens", self->d.name));
}

TEST_F(bad, server_refusing_notify_keeps_watch_local)
{
	char dir[160], file[192];
	double t0;
	int fd;

	ASSERT_EQ(0, system("mkdir -p " NONOTIFY_MNT " && mount -t cifs "
			    "//server/nonotify " NONOTIFY_MNT
			    " -o vers=3.1.1,port=4445,credentials=/etc/testbed/cifs.cred"));
	snprintf(dir, sizeof(dir), NONOTIFY_MNT "/%s", self->d.name);
	fd = tb_open_watchable(dir, NOTIFY_SIG);
	ASSERT_LE(0, fd);
	t0 = tb_now();
	EXPECT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	EXPECT_GT(10.0, tb_now() - t0) TH_LOG("F_NOTIFY took %.1fs", tb_now() - t0);

	ASSERT_EQ(0, tb_server(NULL, "create %s/remote", self->d.name));
	EXPECT_EQ(0, got_signal(&self->set, fd, SILENCE_WAIT))
		TH_LOG("a server that refuses notification still signalled");
	/* the refused watch closed its handle; the fd holds none either */
	EXPECT_EQ(0, server_opens_of("opens-nonotify", self->d.name));

	snprintf(file, sizeof(file), "%s/local", dir);
	ASSERT_EQ(0, close(open(file, O_CREAT | O_EXCL | O_WRONLY, 0644)));
	EXPECT_EQ(1, got_signal(&self->set, fd, SIGNAL_WAIT))
		TH_LOG("a change through the mount was not signalled");

	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, umount(NONOTIFY_MNT));
}

/*
 * Past dir_watch_max remote watches on a server, F_NOTIFY still succeeds
 * and the watch gets no request of its own: on /mnt/share (notifytree=auto)
 * the share's request covers it, and Samba does not report a change on its
 * disk that far below the share's root; below the cap, a request of its
 * own again, which hears it.
 */
TEST_F(bad, past_the_watch_cap_a_watch_is_local_only)
{
	char other[160], cap[32], needle[96];
	int fd2, n;
	FILE *f;

	f = fopen(WATCH_MAX, "r");
	ASSERT_NE(NULL, f) TH_LOG("no %s", WATCH_MAX);
	ASSERT_NE(NULL, fgets(self->saved_cap, sizeof(self->saved_cap), f));
	fclose(f);
	self->saved_cap[strcspn(self->saved_cap, "\n")] = '\0';

	/* an earlier case's watch lingers for a second after its watcher */
	settle_watches();
	/* one more remote watch allowed: ours takes it */
	n = tb_listed_watches();
	ASSERT_LE(0, n);
	snprintf(cap, sizeof(cap), "%d", n + 1);
	ASSERT_EQ(0, tb_write_file(WATCH_MAX, cap));
	EXPECT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	snprintf(other, sizeof(other), "%s/sub", self->d.path);
	fd2 = tb_open_watchable(other, NOTIFY_SIG);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, fcntl(fd2, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	/* let the sub/ mkdir's own event on the first watch pass */
	while (got_signal(&self->set, self->fd, 1.0))
		;
	ASSERT_EQ(0, tb_server(NULL, "create %s/sub/far", self->d.name));
	EXPECT_EQ(0, got_signal(&self->set, fd2, SILENCE_WAIT))
		TH_LOG("the watch past the cap saw a server-side change");
	snprintf(needle, sizeof(needle), "%s filter", self->d.name);
	EXPECT_EQ(1, tb_file_has_line("/proc/fs/cifs/DebugData", "Notify:",
				      needle));
	snprintf(needle, sizeof(needle), "%s\\sub filter", self->d.name);
	EXPECT_EQ(0, tb_file_has_line("/proc/fs/cifs/DebugData", "Notify:",
				      needle));

	/* raise the cap again: a new F_NOTIFY gets its remote watch */
	ASSERT_EQ(0, tb_write_file(WATCH_MAX, self->saved_cap));
	EXPECT_EQ(0, fcntl(fd2, F_NOTIFY, 0));
	EXPECT_EQ(0, fcntl(fd2, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/sub/near", self->d.name));
	EXPECT_EQ(1, got_signal(&self->set, fd2, SIGNAL_WAIT))
		TH_LOG("no signal once below the cap again");
	close(fd2);
}

TEST_HARNESS_MAIN
