// SPDX-License-Identifier: GPL-2.0
/*
 * share_basics: the testbed's plumbing. A file made on the server's own disk
 * is listed through the client's CIFS mount, and a file made through the
 * mount lands on the server's disk with its content.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

/* The client's mount is a CIFS mount of the server's share. */
TEST(share_is_cifs_mount)
{
	char line[512];
	int found = 0;
	FILE *m = fopen("/proc/mounts", "r");

	ASSERT_NE(NULL, m);
	while (fgets(line, sizeof(line), m))
		if (strstr(line, " " TB_SHARE_MNT " cifs "))
			found = 1;
	fclose(m);
	ASSERT_EQ(1, found) TH_LOG("%s is not a cifs mount", TB_SHARE_MNT);
}

TEST(server_disk_file_listed_on_client)
{
	char name[64];

	tb_unique(name, sizeof(name), "srvmade");
	ASSERT_EQ(0, tb_server(NULL, "create %s", name));
	/* The mount may serve a cached listing for its attribute timeout. */
	EXPECT_EQ(1, tb_wait_listed(TB_SHARE_MNT, name, 10))
		TH_LOG("%s made on the server's disk never listed on the client", name);
	EXPECT_EQ(0, tb_server(NULL, "unlink %s", name));
}

TEST(client_file_on_server_disk)
{
	char name[64], path[128];
	long long size = -1;
	int fd;

	tb_unique(name, sizeof(name), "climade");
	snprintf(path, sizeof(path), TB_SHARE_MNT "/%s", name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(5, write(fd, "hello", 5));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, tb_server(&size, "stat %s", name))
		TH_LOG("%s made on the client is not on the server's disk", name);
	EXPECT_EQ(5, size);
	EXPECT_EQ(0, unlink(path));
	EXPECT_EQ(-ENOENT, tb_server(NULL, "exists %s", name));
}

TEST_HARNESS_MAIN
