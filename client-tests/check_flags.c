// SPDX-License-Identifier: GPL-2.0
/*
 * check_flags: the seed's other half. NFS's ->check_flags refuses
 * O_APPEND together with O_DIRECT, at open() and at fcntl(F_SETFL); the
 * 2.6.8 version of it crashed because nothing tested it. Run on NFSv3 and
 * NFSv4.2 mounts of the server guest's knfsd export, and, for comparison,
 * on the CIFS mount and on the client's own ext4 root, which accept the
 * combination today (asserted, so that a change shows).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

FIXTURE(fs) {
	char file[192];
	char dir[128];
};

FIXTURE_VARIANT(fs) {
	const char *mnt;		/* where the filesystem is */
	const char *fstype;		/* what /proc/mounts must say of it */
	int refuses_append_direct;	/* ->check_flags says no */
};

FIXTURE_VARIANT_ADD(fs, nfs3) {
	.mnt = "/mnt/nfs3", .fstype = "nfs", .refuses_append_direct = 1,
};

FIXTURE_VARIANT_ADD(fs, nfs42) {
	.mnt = "/mnt/nfs42", .fstype = "nfs4", .refuses_append_direct = 1,
};

FIXTURE_VARIANT_ADD(fs, cifs) {
	.mnt = TB_SHARE_MNT, .fstype = "cifs", .refuses_append_direct = 0,
};

FIXTURE_VARIANT_ADD(fs, ext4) {
	.mnt = "/var/tmp", .fstype = "ext4", .refuses_append_direct = 0,
};

/* The filesystem type of the mount that holds @path, from /proc/mounts. */
static int fstype_is(const char *path, const char *type)
{
	char line[512], mnt[256], fstype[64], best[64] = "";
	size_t best_len = 0;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%*s %255s %63s", mnt, fstype) != 2)
			continue;
		n = strlen(mnt);
		if (!strncmp(path, mnt, n) && (path[n] == '/' || !path[n] ||
					       n == 1) && n >= best_len) {
			best_len = n;
			snprintf(best, sizeof(best), "%s", fstype);
		}
	}
	fclose(f);
	return !strcmp(best, type);
}

FIXTURE_SETUP(fs)
{
	char name[64];
	int fd;

	ASSERT_EQ(1, fstype_is(variant->mnt, variant->fstype))
		TH_LOG("%s is not a %s mount", variant->mnt, variant->fstype);
	tb_unique(name, sizeof(name), "cf");
	snprintf(self->dir, sizeof(self->dir), "%s/%s", variant->mnt, name);
	ASSERT_EQ(0, mkdir(self->dir, 0777));
	snprintf(self->file, sizeof(self->file), "%s/f", self->dir);
	fd = open(self->file, O_CREAT | O_WRONLY, 0666);
	ASSERT_LE(0, fd);
	ASSERT_EQ(6, write(fd, "hello\n", 6));
	ASSERT_EQ(0, close(fd));
}

FIXTURE_TEARDOWN(fs)
{
	unlink(self->file);
	unlink(self->dir);
	rmdir(self->dir);
}

/*
 * The result @fd of an open() with O_APPEND|O_DIRECT: refused with EINVAL
 * where the filesystem's ->check_flags refuses the pair, else opened (and
 * closed here).
 */
static void check_append_direct_open(struct __test_metadata *_metadata,
				     const FIXTURE_VARIANT(fs) *variant, int fd)
{
	if (variant->refuses_append_direct) {
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(EINVAL, errno);
	} else {
		EXPECT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	}
	if (fd >= 0)
		close(fd);
}

/* open() of an existing file with both flags. */
TEST_F(fs, open_append_direct)
{
	check_append_direct_open(_metadata, variant,
				 open(self->file, O_WRONLY | O_APPEND | O_DIRECT));
}

/* open(O_CREAT) of a new file with both flags: the atomic_open path. */
TEST_F(fs, create_append_direct)
{
	char path[224];
	int fd;

	snprintf(path, sizeof(path), "%s/new", self->dir);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_DIRECT, 0644);
	check_append_direct_open(_metadata, variant, fd);
	unlink(path);
}

TEST_F(fs, open_append_alone)
{
	int fd = open(self->file, O_WRONLY | O_APPEND);

	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	EXPECT_EQ(O_APPEND, fcntl(fd, F_GETFL) & O_APPEND);
	close(fd);
}

TEST_F(fs, open_direct_alone)
{
	int fd = open(self->file, O_RDONLY | O_DIRECT);

	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	EXPECT_EQ(O_DIRECT, fcntl(fd, F_GETFL) & O_DIRECT);
	close(fd);
}

/* fcntl(F_SETFL) with both: ->check_flags refuses, the flags stay. */
TEST_F(fs, setfl_append_direct)
{
	int fd = open(self->file, O_WRONLY);
	int rc, flags;

	ASSERT_LE(0, fd);
	rc = fcntl(fd, F_SETFL, O_APPEND | O_DIRECT);
	flags = fcntl(fd, F_GETFL);
	if (variant->refuses_append_direct) {
		EXPECT_EQ(-1, rc);
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(0, flags & (O_APPEND | O_DIRECT))
			TH_LOG("a refused F_SETFL changed the flags to 0%o", flags);
	} else {
		EXPECT_EQ(0, rc) TH_LOG("F_SETFL: %s", strerror(errno));
		EXPECT_EQ(O_APPEND | O_DIRECT, flags & (O_APPEND | O_DIRECT));
	}
	close(fd);
}

/* O_APPEND, then O_DIRECT in its place: never both at once, so allowed. */
TEST_F(fs, setfl_append_then_direct)
{
	int fd = open(self->file, O_WRONLY);
	int flags;

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fcntl(fd, F_SETFL, O_APPEND));
	EXPECT_EQ(0, fcntl(fd, F_SETFL, O_DIRECT))
		TH_LOG("F_SETFL O_DIRECT: %s", strerror(errno));
	flags = fcntl(fd, F_GETFL);
	EXPECT_EQ(O_DIRECT, flags & (O_APPEND | O_DIRECT));
	close(fd);
}

TEST_HARNESS_MAIN
