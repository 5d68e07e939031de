// SPDX-License-Identifier: GPL-2.0
/*
 * notify_order: F_NOTIFY returns once the server holds the watch's
 * request, also from a server that handles a connection's requests out of
 * order (MS-SMB2 does not promise the order).  The share is mounted through
 * tb-sigproxy's "hold" port on the server, which passes each CHANGE_NOTIFY
 * request to smbd a second after the client sent it and what comes after
 * it at once.  A create made on the server's disk right after F_NOTIFY
 * returned must reach the watcher.  Before the fix F_NOTIFY returned when
 * a later request on the same handle had been answered: smbd had not yet
 * seen the CHANGE_NOTIFY, and the create was never reported.  And when the
 * connection drops under that request (the relay ends it, once, when the
 * share holds its mark), F_NOTIFY returns only once smbd holds a request
 * again; before the fix the failed request counted as an answer.
 * A rename that the server keeps waiting longer than the 2 s in which the
 * client drops the echoes of its own changes (the relay passes it on 3 s
 * late while the share holds its mark, as a server waiting for a lease
 * break would) is heard once; before the fix the echo, which came after
 * those 2 s, was heard again.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/mount.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define HOLD_MNT	"/mnt/held"
#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	15.0	/* for a signal that must come, under TCG */
#define DROP_MARK	".tb-drop-notify" /* in the share: tb-sigproxy's */
#define HELD_WAIT	1.0	/* for smbd to list a request it answered */
#define SLOW_MARK	".tb-slow-setinfo" /* in the share: tb-sigproxy's */
#define EVENT_WAIT	15.0	/* for an event that must come */
#define QUIET		4.0	/* after it, for a repeat */

FIXTURE(held) {
	struct tb_dir d;	/* made on the server; seen under HOLD_MNT */
	char path[160];
	int fd;
	sigset_t set;
};

FIXTURE_SETUP(held)
{
	char cmd[256];

	self->fd = -1;
	ASSERT_EQ(0, tb_server_dir(&self->d, "ord"));
	ASSERT_EQ(0, tb_mount_port(HOLD_MNT, TB_HOLD_PORT, "", cmd, sizeof(cmd)))
		TH_LOG("%s", cmd);
	snprintf(self->path, sizeof(self->path), HOLD_MNT "/%s", self->d.name);
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", self->path, strerror(errno));
}

FIXTURE_TEARDOWN(held)
{
	if (self->fd >= 0)
		close(self->fd);
	umount2(HOLD_MNT, MNT_DETACH);
	tb_server(NULL, "unlink " DROP_MARK);	/* if no request took it */
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

TEST_F_TIMEOUT(held, create_right_after_f_notify_is_heard, 60)
{
	siginfo_t si;
	double t0 = tb_now(), took;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
		TH_LOG("F_NOTIFY: %s", strerror(errno));
	took = tb_now() - t0;
	ASSERT_EQ(0, tb_server(NULL, "create %s/after", self->d.name));
	TH_LOG("F_NOTIFY returned after %.2f s; the server created after", took);
	EXPECT_EQ(NOTIFY_SIG, tb_wait_sig(&self->set, SIGNAL_WAIT, &si))
		TH_LOG("no signal for a create made after F_NOTIFY returned: "
		       "it returned before the server held the request");
}

TEST_F_TIMEOUT(held, f_notify_after_a_drop_returns_once_held_again, 90)
{
	long long watched;
	int mark;
	double t0, took;

	ASSERT_EQ(0, tb_server(NULL, "create " DROP_MARK));
	t0 = tb_now();
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
		TH_LOG("F_NOTIFY: %s", strerror(errno));
	took = tb_now() - t0;
	watched = tb_wait_count("watched", self->d.name, 1, HELD_WAIT, 100);
	mark = tb_server(NULL, "exists " DROP_MARK);
	TH_LOG("F_NOTIFY returned after %.2f s; smbd then watched the "
	       "directory %lld time(s)", took, watched);
	ASSERT_EQ(-ENOENT, mark)
		TH_LOG("the relay never saw a request to drop the connection at");
	EXPECT_EQ(1, watched)
		TH_LOG("F_NOTIFY returned while smbd held no request");
}

/* The share through the hold port with remoteinotify, an inotify watch. */
FIXTURE(slow) {
	struct tb_dir d;
	char path[160];
	int in;
	struct tb_events evs;
	char log[1024];
};

FIXTURE_SETUP(slow)
{
	char cmd[256];

	self->in = -1;
	ASSERT_EQ(0, tb_server_dir(&self->d, "slow"));
	ASSERT_EQ(0, tb_mount_port(HOLD_MNT, TB_HOLD_PORT, "remoteinotify",
				   cmd, sizeof(cmd)))
		TH_LOG("%s", cmd);
	snprintf(self->path, sizeof(self->path), HOLD_MNT "/%s", self->d.name);
	self->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, self->in);
	ASSERT_LE(0, inotify_add_watch(self->in, self->path,
				       IN_CREATE | IN_DELETE | IN_MOVE));
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, EVENT_WAIT))
		TH_LOG("smbd holds no notify request on %s", self->d.name);
}

FIXTURE_TEARDOWN(slow)
{
	if (self->in >= 0)
		close(self->in);
	tb_server(NULL, "unlink " SLOW_MARK);
	umount2(HOLD_MNT, MNT_DETACH);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

TEST_F_TIMEOUT(slow, rename_the_server_keeps_waiting_is_heard_once, 90)
{
	char a[192], b[192];
	double t0, took;

	ASSERT_EQ(0, tb_server(NULL, "create %s/a", self->d.name));
	tb_read_events(self->in, 0, &self->evs, EVENT_WAIT, QUIET);
	ASSERT_EQ(1, tb_count(&self->evs, IN_CREATE, "a"));
	snprintf(a, sizeof(a), "%s/a", self->path);
	snprintf(b, sizeof(b), "%s/b", self->path);
	ASSERT_EQ(1, tb_wait_file(a, EVENT_WAIT));

	ASSERT_EQ(0, tb_server(NULL, "create " SLOW_MARK));
	t0 = tb_now();
	ASSERT_EQ(0, rename(a, b)) TH_LOG("rename: %s", strerror(errno));
	took = tb_now() - t0;
	ASSERT_EQ(0, tb_server(NULL, "unlink " SLOW_MARK));
	memset(&self->evs, 0, sizeof(self->evs));
	tb_read_events(self->in, 0, &self->evs, EVENT_WAIT, QUIET);
	TH_LOG("the rename took %.2f s; events: %s", took,
	       tb_events_str(&self->evs, self->log, sizeof(self->log)));
	ASSERT_LE(2.5, took) TH_LOG("the relay did not hold the rename");
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_FROM, "a"));
	EXPECT_EQ(1, tb_count(&self->evs, IN_MOVED_TO, "b"));
}

TEST_HARNESS_MAIN
