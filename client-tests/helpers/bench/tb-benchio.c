// SPDX-License-Identifier: GPL-2.0
/*
 * tb-benchio: the ordinary I/O of orchestrate.py bench's cost measure,
 * timed on the client's monotonic clock (only ratios of runs on the same
 * clock are reported):
 *
 *   tb-benchio meta DIR N      create, stat and unlink N files in DIR
 *   tb-benchio write FILE MIB  write MIB MiB sequentially, then fsync
 *   tb-benchio read FILE       read FILE sequentially (the caller drops
 *                              the page cache first)
 *
 * Prints "OP SECONDS BYTES_OR_FILES" and exits 0, or one line on stderr
 * and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/mark.h"

#define CHUNK	(1 << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	fprintf(stderr, "tb-benchio: %s: %s\n", what, strerror(errno));
	return 1;
}

static int meta(const char *dir, long n)
{
	char path[4096];
	struct stat st;
	double t0 = now();
	long i;
	int fd;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/m-%ld", dir, i);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0 || close(fd))
			return fail(path);
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/m-%ld", dir, i);
		if (stat(path, &st))
			return fail(path);
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/m-%ld", dir, i);
		if (unlink(path))
			return fail(path);
	}
	printf("meta %.3f %ld\n", now() - t0, n);
	return 0;
}

static int seq_write(const char *file, long mib)
{
	char *buf = malloc(CHUNK);
	double t0 = now();
	int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	long i;

	if (fd < 0 || !buf)
		return fail(file);
	memset(buf, 0x5a, CHUNK);
	for (i = 0; i < mib; i++)
		if (write(fd, buf, CHUNK) != CHUNK)
			return fail("write");
	if (fsync(fd) || close(fd))
		return fail("fsync");
	printf("write %.3f %ld\n", now() - t0, mib * CHUNK);
	return 0;
}

static int seq_read(const char *file)
{
	char *buf = malloc(CHUNK);
	double t0 = now();
	int fd = open(file, O_RDONLY);
	long long total = 0;
	ssize_t n;

	if (fd < 0 || !buf)
		return fail(file);
	while ((n = read(fd, buf, CHUNK)) > 0)
		total += n;
	if (n < 0)
		return fail("read");
	close(fd);
	printf("read %.3f %lld\n", now() - t0, total);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "meta") && atol(argv[3]) > 0)
		return meta(argv[2], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "write") && atol(argv[3]) > 0)
		return seq_write(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "read"))
		return seq_read(argv[2]);
	fprintf(stderr, "usage: tb-benchio meta DIR N | write FILE MIB | read FILE\n");
	return 2;
}
