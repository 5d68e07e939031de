// SPDX-License-Identifier: GPL-2.0
/*
 * notify_signing: a change notification whose signature does not verify
 * is not used.  The share is mounted with signing through tb-sigproxy on
 * the server: through its "spoil" port every final CHANGE_NOTIFY response
 * arrives with one byte of its signature changed (all else intact),
 * through its "relay" port unchanged.  Through the relay a server-side
 * create is heard with its name; through the spoiler it is not: the client
 * drops the response, tells the watcher that changes may have been missed
 * (IN_Q_OVERFLOW, as inotify says a loss; series v2 sent an event without a
 * name) and reopens the watch.  Before the fix the client parsed the
 * spoiled response and delivered the name.
 */
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define RELAY_PORT	4447	/* tb-sigproxy relay (common/addresses.py) */
#define SPOIL_PORT	4448	/* tb-sigproxy spoil */
#define SIG_MNT		"/mnt/signed"
#define DEBUGDATA	"/proc/fs/cifs/DebugData"
#define WAIT		15.0	/* for an event that must come, under TCG */
#define QUIET		3.0	/* after the last event, for a late one */
#define REOPEN_WAIT	30.0	/* the reopen waits 2 s at least */
#define IN_CHANGES	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_MODIFY | IN_ATTRIB)

FIXTURE(signing) {
	struct tb_dir d;	/* made on the server; seen under SIG_MNT */
	char path[160];
	int in;
	struct tb_events evs;
	char log[2048];
};

FIXTURE_VARIANT(signing) {
	int port;
	int spoiled;
};

FIXTURE_VARIANT_ADD(signing, relayed) {
	.port = RELAY_PORT,
	.spoiled = 0,
};

FIXTURE_VARIANT_ADD(signing, spoiled) {
	.port = SPOIL_PORT,
	.spoiled = 1,
};

FIXTURE_SETUP(signing)
{
	char cmd[256];

	self->in = -1;
	ASSERT_EQ(0, tb_server_dir(&self->d, "sig"));
	ASSERT_EQ(0, tb_mount_port(SIG_MNT, variant->port,
				   "sign,remoteinotify", cmd, sizeof(cmd)))
		TH_LOG("%s", cmd);
	ASSERT_EQ(1, tb_file_has_line(DEBUGDATA, "Dialect 0x311", " signed"))
		TH_LOG("no signed connection in " DEBUGDATA);
	snprintf(self->path, sizeof(self->path), SIG_MNT "/%s", self->d.name);
	self->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_LE(0, self->in);
	ASSERT_LE(0, inotify_add_watch(self->in, self->path, IN_CHANGES));
	ASSERT_EQ(1, tb_wait_remote_watch(self->d.name, WAIT))
		TH_LOG("smbd holds no notify request on %s", self->d.name);
	memset(&self->evs, 0, sizeof(self->evs));
}

FIXTURE_TEARDOWN(signing)
{
	if (self->in >= 0)
		close(self->in);
	umount2(SIG_MNT, MNT_DETACH);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

TEST_F_TIMEOUT(signing, create_is_heard_only_when_the_signature_verifies, 90)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/before", self->d.name));
	tb_read_events(self->in, 0, &self->evs, WAIT, QUIET);
	TH_LOG("events: %s", tb_events_str(&self->evs, self->log,
					   sizeof(self->log)));
	if (!variant->spoiled) {
		EXPECT_EQ(1, tb_count(&self->evs, IN_CREATE, "before"))
			TH_LOG("the relay alone lost the event");
		EXPECT_EQ(0, tb_count(&self->evs, 0, ""));
		return;
	}
	EXPECT_EQ(0, tb_count(&self->evs, 0, "before"))
		TH_LOG("a name from a response that failed verification");
	EXPECT_LE(1, tb_count(&self->evs, IN_Q_OVERFLOW, ""))
		TH_LOG("no IN_Q_OVERFLOW for the changes the dropped response "
		       "held");
	EXPECT_EQ(tb_count(&self->evs, IN_Q_OVERFLOW, ""),
		  tb_count(&self->evs, 0, ""))
		TH_LOG("an event without a name that is no overflow");
	EXPECT_EQ(1, tb_wait_line(DEBUGDATA, self->d.name, "reopens 1",
			          REOPEN_WAIT))
		TH_LOG("the watch was not reopened after a bad signature");
}

TEST_HARNESS_MAIN
