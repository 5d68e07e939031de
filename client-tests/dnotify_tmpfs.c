// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify_tmpfs: the harness itself. F_NOTIFY on a local tmpfs directory in
 * the client guest delivers the F_SETSIG signal with the watched fd in
 * si_fd, and nothing for a change outside the mask. If this fails, no CIFS
 * notification result means anything.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)

FIXTURE(tmpfs_dir) {
	char dir[64];
	int fd;
	sigset_t set;
};

FIXTURE_SETUP(tmpfs_dir)
{
	snprintf(self->dir, sizeof(self->dir), "/run/dnotify-tmpfs-%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	ASSERT_EQ(0, mount("tbtmp", self->dir, "tmpfs", 0, "size=1m"));
	/* Blocked, so sigtimedwait() collects it: no handler race. */
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->dir, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(tmpfs_dir)
{
	close(self->fd);
	umount(self->dir);
	rmdir(self->dir);
}

static void make_file(const char *dir, const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
}

TEST_F(tmpfs_dir, create_signals_with_si_fd)
{
	siginfo_t si;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	make_file(self->dir, "a");
	ASSERT_EQ(NOTIFY_SIG, tb_wait_sig(&self->set, 2, &si));
	EXPECT_EQ(self->fd, si.si_fd);
}

TEST_F(tmpfs_dir, change_outside_mask_is_silent)
{
	siginfo_t si;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_DELETE));
	make_file(self->dir, "b");
	EXPECT_EQ(-1, tb_wait_sig(&self->set, 1, &si));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(tmpfs_dir, oneshot_fires_once)
{
	siginfo_t si;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	make_file(self->dir, "c");
	ASSERT_EQ(NOTIFY_SIG, tb_wait_sig(&self->set, 2, &si));
	make_file(self->dir, "d");
	EXPECT_EQ(-1, tb_wait_sig(&self->set, 1, &si));
}

TEST_HARNESS_MAIN
