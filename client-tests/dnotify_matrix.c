// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify_matrix: every DN_* flag alone against every kind of change made
 * on the server's own disk, signal or silence. What Samba reports decides
 * a few cells: it tells a write on its own disk only as an attribute
 * change (inotify IN_MODIFY under FILE_NOTIFY_CHANGE_ATTRIBUTES), and a
 * chmod (IN_ATTRIB) as a change of attributes, last write and last access
 * alike, all as FILE_ACTION_MODIFIED, which does not say which; a rename's
 * new name also comes as MODIFIED to a watch that asked for last write but
 * not for names. Those cells are marked "Samba" below; the others hold for
 * any server.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	10.0
#define SILENCE_WAIT	3.0

enum change { CREATE = 1, WRITE = 2, DELETE = 4, RENAME = 8, CHMOD = 16 };

FIXTURE(matrix) {
	struct tb_dir d;	/* the watched directory */
	int fd;
	sigset_t set;
};

FIXTURE_VARIANT(matrix) {
	unsigned int flag;	/* the one DN_* flag watched */
	unsigned int signals;	/* the changes that must signal it */
};

FIXTURE_VARIANT_ADD(matrix, dn_access) {
	.flag = DN_ACCESS,
	.signals = CHMOD,			/* Samba: IN_ATTRIB is last access too */
};

FIXTURE_VARIANT_ADD(matrix, dn_modify) {
	.flag = DN_MODIFY,
	/*
	 * Samba: IN_ATTRIB is last write too, and a rename's new name comes
	 * as FILE_ACTION_MODIFIED to a filter without names (seen in the
	 * capture: action 3 for "g")
	 */
	.signals = WRITE | CHMOD | RENAME,
};

FIXTURE_VARIANT_ADD(matrix, dn_create) {
	.flag = DN_CREATE,
	.signals = CREATE | RENAME,		/* the new name appears */
};

FIXTURE_VARIANT_ADD(matrix, dn_delete) {
	.flag = DN_DELETE,
	.signals = DELETE | RENAME,		/* the old name goes */
};

FIXTURE_VARIANT_ADD(matrix, dn_rename) {
	.flag = DN_RENAME,
	.signals = RENAME,
};

FIXTURE_VARIANT_ADD(matrix, dn_attrib) {
	.flag = DN_ATTRIB,
	.signals = WRITE | CHMOD,		/* Samba: a write is IN_MODIFY */
};

/* A directory on the server with one file, "f", there before the watch. */
FIXTURE_SETUP(matrix)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "mx"));
	ASSERT_EQ(0, tb_server(NULL, "create %s/f", self->d.name));
	ASSERT_EQ(1, tb_wait_listed(self->d.path, "f", 10));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, variant->flag | DN_MULTISHOT));
}

FIXTURE_TEARDOWN(matrix)
{
	if (self->fd >= 0)
		close(self->fd);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/* Make the change, then expect a signal or silence as the variant says. */
static void check(struct __test_metadata *_metadata,
		  FIXTURE_DATA(matrix) *self,
		  const FIXTURE_VARIANT(matrix) *variant, enum change change)
{
	int want = !!(variant->signals & change);
	siginfo_t si;
	int sig, rc = -1;

	switch (change) {
	case CREATE:
		rc = tb_server(NULL, "create %s/new", self->d.name);
		break;
	case WRITE:
		rc = tb_server(NULL, "write %s/f 4096", self->d.name);
		break;
	case DELETE:
		rc = tb_server(NULL, "unlink %s/f", self->d.name);
		break;
	case RENAME:
		rc = tb_server(NULL, "rename %s/f %s/g", self->d.name, self->d.name);
		break;
	case CHMOD:
		rc = tb_server(NULL, "chmod %s/f 600", self->d.name);
		break;
	}
	ASSERT_EQ(0, rc);
	sig = tb_wait_sig(&self->set, want ? SIGNAL_WAIT : SILENCE_WAIT, &si);
	if (want) {
		EXPECT_EQ(NOTIFY_SIG, sig) TH_LOG("no signal within %.0fs", SIGNAL_WAIT);
		if (sig == NOTIFY_SIG)
			EXPECT_EQ(self->fd, si.si_fd);
	} else {
		EXPECT_EQ(-1, sig) TH_LOG("a signal the mask does not ask for");
	}
}

TEST_F(matrix, create) { check(_metadata, self, variant, CREATE); }
TEST_F(matrix, write) { check(_metadata, self, variant, WRITE); }
TEST_F(matrix, delete) { check(_metadata, self, variant, DELETE); }
TEST_F(matrix, rename) { check(_metadata, self, variant, RENAME); }
TEST_F(matrix, chmod) { check(_metadata, self, variant, CHMOD); }

TEST_HARNESS_MAIN
