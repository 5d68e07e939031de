// SPDX-License-Identifier: GPL-2.0
/*
 * tb-benchscale: the inotify watcher of orchestrate.py bench's scale, I/O
 * and burst measures.  It runs until SIGTERM and writes one status line a
 * second to stdout, which the host reads:
 *
 *   tb-benchscale arm PREFIX N
 *	watch PREFIX-0 ... PREFIX-(N-1) for IN_CREATE ("armed N" once the
 *	watches are set); "status HEARD" counts the directories that had an
 *	event; when all N have, "TBMARK scale-all - n=N" goes on the wire.
 *   tb-benchscale burst DIR
 *	watch DIR for IN_CREATE | IN_DELETE; "status NAMED NAMELESS
 *	OVERFLOWS QUIET_MS": events with a name, without one (the client's
 *	"changes missed"), queue overflows, and the time since the last event.
 *
 * Exit status 0; 1 when a watch cannot be set (a line on stderr says why).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/inotify.h>
#include <time.h>

#include "lib/mark.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the watcher counts, and the status line it prints of it. */
static bool *heard;
static long n_dirs, count, named, nameless, overflows;
static bool burst_mode;
static double last_event;

static void status(void)
{
	if (burst_mode)
		printf("status %ld %ld %ld %.0f\n", named, nameless, overflows,
		       (now() - last_event) * 1000);
	else
		printf("status %ld\n", count);
	fflush(stdout);
}

static void on_event(const struct inotify_event *ev)
{
	long d = ev->wd - 1;	/* PREFIX-i has watch i + 1 (see arm()) */

	last_event = now();
	if (burst_mode) {
		if (ev->mask & IN_Q_OVERFLOW)
			overflows++;
		else if (ev->len)
			named++;
		else
			nameless++;
	} else if (d >= 0 && d < n_dirs && !heard[d]) {
		heard[d] = true;
		if (++count == n_dirs)
			tb_mark("scale-all", NULL, "n=%ld", n_dirs);
	}
}

/* Count @fd's events until SIGTERM, with a status line every second. */
static int event_loop(int fd)
{
	char buf[65536] __attribute__((aligned(8)));
	double next = 0;

	last_event = now();
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t len;
		char *q;

		if (now() >= next) {
			status();
			next = now() + 1;
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		for (q = buf; len > 0 && q < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)q;

			on_event(ev);
			q += sizeof(*ev) + ev->len;
		}
	}
	status();
	close(fd);
	return 0;
}

static int arm(const char *prefix, long n)
{
	char path[4096];
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	long i;

	n_dirs = n;
	heard = calloc(n, sizeof(*heard));
	if (fd < 0 || !heard)
		return perror("inotify_init1"), 1;
	/* a fresh instance numbers its watches 1, 2, ...: PREFIX-i is i + 1 */
	for (i = 0; i < n; i++) {
		int wd;

		snprintf(path, sizeof(path), "%s-%ld", prefix, i);
		wd = inotify_add_watch(fd, path, IN_CREATE);
		if (wd < 0) {
			fprintf(stderr, "tb-benchscale: %s: %s\n", path, strerror(errno));
			printf("failed %ld %d\n", i, errno);
			return 1;
		}
		if (wd != i + 1) {
			fprintf(stderr, "tb-benchscale: %s got watch %d\n", path, wd);
			return 1;
		}
	}
	printf("armed %ld\n", n);
	return event_loop(fd);
}

static int burst(const char *dir)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	burst_mode = true;
	if (fd < 0 || inotify_add_watch(fd, dir, IN_CREATE | IN_DELETE) < 0)
		return perror("inotify"), 1;
	printf("armed 1\n");
	return event_loop(fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc == 4 && !strcmp(argv[1], "arm") && atol(argv[3]) > 0)
		return arm(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "burst"))
		return burst(argv[2]);
	fprintf(stderr, "usage: tb-benchscale arm PREFIX N | burst DIR\n");
	return 2;
}
