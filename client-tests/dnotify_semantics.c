// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify_semantics: F_NOTIFY on the CIFS mount beyond one watch and one
 * change: the mask changed by a second F_NOTIFY on the same fd, several
 * fds on several directories (each signal with its own si_fd), the owner
 * F_SETOWN names after a fork, the share's root directory, a watched
 * directory deleted or renamed on the server, and long and non-ASCII names
 * (UTF-16 on the wire) reaching inotify byte for byte.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	10.0
#define SILENCE_WAIT	3.0

FIXTURE(sem) {
	struct tb_dir d;	/* the watched directory */
	int fd;
	sigset_t set;
};

FIXTURE_SETUP(sem)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "sem"));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(sem)
{
	char cmd[320];

	if (self->fd >= 0)
		close(self->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s-moved'", self->d.path,
		 self->d.path);
	if (system(cmd))
		TH_LOG("could not remove %s", self->d.path);
}

/* The si_fd of the next signal within @seconds, or -1 for none. */
static int signalled_fd(sigset_t *set, double seconds)
{
	siginfo_t si;

	return tb_wait_sig(set, seconds, &si) == NOTIFY_SIG ? si.si_fd : -1;
}

TEST_F(sem, second_fnotify_changes_the_mask)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_ATTRIB | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/one", self->d.name));
	EXPECT_EQ(-1, signalled_fd(&self->set, SILENCE_WAIT))
		TH_LOG("a create signalled a DN_ATTRIB watch");
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/two", self->d.name));
	EXPECT_EQ(self->fd, signalled_fd(&self->set, SIGNAL_WAIT))
		TH_LOG("the new mask was not asked of the server");
}

TEST_F(sem, several_fds_each_get_their_si_fd)
{
	char sub[160];
	int a, b;

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/a", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/b", self->d.name));
	snprintf(sub, sizeof(sub), "%s/a", self->d.path);
	ASSERT_EQ(1, tb_wait_listed(self->d.path, "b", 10));
	a = tb_open_watchable(sub, NOTIFY_SIG);
	snprintf(sub, sizeof(sub), "%s/b", self->d.path);
	b = tb_open_watchable(sub, NOTIFY_SIG);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, fcntl(a, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, fcntl(b, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/b/x", self->d.name));
	EXPECT_EQ(b, signalled_fd(&self->set, SIGNAL_WAIT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a/x", self->d.name));
	EXPECT_EQ(a, signalled_fd(&self->set, SIGNAL_WAIT));
	EXPECT_EQ(-1, signalled_fd(&self->set, 1.0));
	close(a);
	close(b);
}

/* After fork, F_SETOWN decides who hears: here the child, not us. */
TEST_F(sem, fsetown_child_gets_the_signal_after_fork)
{
	int pipefd[2], status = -1;
	char go;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		siginfo_t si;

		close(pipefd[1]);
		/* signal mask inherited (blocked): wait for the parent's go */
		if (read(pipefd[0], &go, 1) != 1)
			_exit(3);
		_exit(tb_wait_sig(&self->set, SIGNAL_WAIT + 5, &si) == NOTIFY_SIG &&
		      si.si_fd == self->fd ? 0 : 1);
	}
	close(pipefd[0]);
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, fcntl(self->fd, F_SETOWN, pid));
	ASSERT_EQ(1, write(pipefd[1], "g", 1));
	ASSERT_EQ(0, tb_server(NULL, "create %s/owned", self->d.name));
	EXPECT_EQ(-1, signalled_fd(&self->set, SILENCE_WAIT))
		TH_LOG("the parent got the signal F_SETOWN gave the child");
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the child (the owner) was not signalled");
	close(pipefd[1]);
}

TEST_F(sem, share_root_is_watched)
{
	char name[64];
	int root = tb_open_watchable(TB_SHARE_MNT, NOTIFY_SIG);

	ASSERT_LE(0, root);
	ASSERT_EQ(0, fcntl(root, F_NOTIFY, DN_CREATE));
	tb_unique(name, sizeof(name), "rootfile");
	ASSERT_EQ(0, tb_server(NULL, "create %s", name));
	EXPECT_EQ(root, signalled_fd(&self->set, SIGNAL_WAIT));
	ASSERT_EQ(0, fcntl(root, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	EXPECT_EQ(1, tb_file_has_line("/proc/fs/cifs/DebugData",
				      "Notify: \\ filter", NULL))
		TH_LOG("the root's watch is not listed as \\");
	close(root);
	ASSERT_EQ(0, tb_server(NULL, "unlink %s", name));
}

/*
 * The watched directory removed on the server: the parent's watcher hears
 * of it, and closing the orphaned watch is prompt and leaves no handle.
 */
TEST_F(sem, watched_directory_deleted_on_server)
{
	char sub[160], doomed[128];
	long long opens = -1;
	double t0;
	int d;

	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/doomed", self->d.name));
	snprintf(sub, sizeof(sub), "%s/doomed", self->d.path);
	ASSERT_EQ(1, tb_wait_listed(self->d.path, "doomed", 10));
	d = tb_open_watchable(sub, NOTIFY_SIG);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, fcntl(d, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_DELETE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "rmdir %s/doomed", self->d.name));
	EXPECT_EQ(self->fd, signalled_fd(&self->set, SIGNAL_WAIT))
		TH_LOG("the parent's watcher did not hear of the rmdir");
	t0 = tb_now();
	EXPECT_EQ(0, close(d));
	EXPECT_GT(10.0, tb_now() - t0);
	snprintf(doomed, sizeof(doomed), "%s/doomed", self->d.name);
	opens = tb_wait_opens(doomed, 0, 10);
	EXPECT_EQ(0, opens);
}

/*
 * The watched directory renamed on the server: the handle follows it, so a
 * change in it under its new name still signals; closing leaves no handle.
 */
TEST_F(sem, watched_directory_renamed_on_server)
{
	char moved[128];
	long long opens = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "rename %s %s-moved", self->d.name,
			       self->d.name));
	/* whatever the rename itself reports, let it pass */
	while (signalled_fd(&self->set, 1.0) >= 0)
		;
	ASSERT_EQ(0, tb_server(NULL, "create %s-moved/after", self->d.name));
	EXPECT_EQ(self->fd, signalled_fd(&self->set, SIGNAL_WAIT))
		TH_LOG("no signal for a change in the renamed directory");
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	snprintf(moved, sizeof(moved), "%s-moved", self->d.name);
	opens = tb_wait_opens(moved, 0, 10);
	EXPECT_EQ(0, opens);
}

/* Names past ASCII and up to NAME_MAX arrive through inotify unchanged. */
TEST_F(sem, long_and_non_ascii_names_reach_inotify)
{
	static const char * const names[] = {
		"caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",	/* café-日本語 */
		"emoji-\xf0\x9f\x98\x80",				/* U+1F600 */
		NULL,							/* 255 bytes */
	};
	char longname[256], buf[8192];
	unsigned int i, seen = 0;
	double end;
	int in;

	memset(longname, 'L', 255);
	longname[255] = '\0';
	in = inotify_init1(IN_NONBLOCK);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, self->d.path, IN_CREATE));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, tb_server(NULL, "create %s/%s", self->d.name,
				       names[i] ? names[i] : longname));
	end = tb_now() + SIGNAL_WAIT;
	while (seen != 7 && tb_now() < end) {
		ssize_t n = read(in, buf, sizeof(buf));
		char *p = buf;

		if (n <= 0) {
			usleep(100 * 1000);
			continue;
		}
		while (p < buf + n) {
			struct inotify_event *ev = (struct inotify_event *)p;

			for (i = 0; i < 3; i++)
				if (ev->len && !strcmp(ev->name, names[i] ? names[i] : longname))
					seen |= 1u << i;
			p += sizeof(*ev) + ev->len;
		}
	}
	EXPECT_EQ(7u, seen) TH_LOG("names seen (bits): %u", seen);
	close(in);
}

TEST_HARNESS_MAIN
