// SPDX-License-Identifier: GPL-2.0
/*
 * peers: what other notification clients see of the same server-side
 * changes, so that a failure elsewhere can be told apart: inotifywait on
 * the client's mount sees remote creates and deletes with their names
 * while a dnotify watch asks the server for changes. (smbclient's own
 * "notify" is still to come: under the harness it exits at once.)
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define WAIT		15.0

FIXTURE(peer) {
	char name[64];
	char path[128];
	char out[160];
};

FIXTURE_SETUP(peer)
{
	tb_unique(self->name, sizeof(self->name), "peer");
	snprintf(self->path, sizeof(self->path), TB_SHARE_MNT "/%s", self->name);
	snprintf(self->out, sizeof(self->out), "/tmp/%s.out", self->name);
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s", self->name));
	ASSERT_EQ(1, tb_wait_listed(TB_SHARE_MNT, self->name, 10));
}

FIXTURE_TEARDOWN(peer)
{
	char cmd[256];

	unlink(self->out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->path);
	if (system(cmd))
		TH_LOG("could not remove %s", self->path);
}

/* Wait until the file at @path holds @needle; 1 when it does. */
static int wait_output(const char *path, const char *needle, double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (tb_file_has_line(path, needle, NULL) == 1)
			return 1;
		usleep(200 * 1000);
	} while (tb_now() < end);
	return 0;
}

TEST_F_TIMEOUT(peer, inotifywait_sees_server_changes_with_dnotify_armed, 60)
{
	char cmd[512];
	int fd;

	snprintf(cmd, sizeof(cmd),
		 "timeout 30 inotifywait -q -m -e create -e delete --format '%%e %%f' "
		 "'%s' > %s 2>/dev/null &", self->path, self->out);
	ASSERT_EQ(0, system(cmd));
	usleep(1500 * 1000);
	fd = open(self->path, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT));
	signal(SIGIO, SIG_IGN);
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->name));
	EXPECT_EQ(1, wait_output(self->out, "CREATE made", WAIT));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/made", self->name));
	EXPECT_EQ(1, wait_output(self->out, "DELETE made", WAIT));
	close(fd);
	if (system("pkill -f 'inotifywait -q -m -e create -e delete'"))
		TH_LOG("inotifywait already gone");
}

TEST_HARNESS_MAIN
