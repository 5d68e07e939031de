// SPDX-License-Identifier: GPL-2.0
/*
 * tb-watch: a long-lived F_NOTIFY watcher for the suite's fault cases,
 * which the host drives (a server restart, the link taken down, a kill).
 * Sets DN_CREATE|DN_DELETE|DN_MULTISHOT on DIR with a real-time signal and
 * appends one line per signal to LOG ("sig fd=N"); "ready" once F_NOTIFY
 * has returned. The watcher is a child in a session of its own, which runs
 * until killed, or for at most SECONDS; tb-watch itself returns once the
 * watch is set (0) or could not be (1), within READY_SECONDS: one command
 * of the host starts a watch and knows it armed.  With GO, the watcher
 * opens DIR, says "opened" in LOG, and sets F_NOTIFY once the file GO
 * exists: the host stops the server in between, so that only F_NOTIFY
 * meets it.  A failed F_NOTIFY is "error ERRNO", then "owner PID" (the
 * file's F_GETOWN).
 *
 *   tb-watch DIR LOG SECONDS [GO]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/mark.h"

#define READY_SECONDS	60

static void say(FILE *log, const char *fmt, int val)
{
	fprintf(log, fmt, val);
	fflush(log);
}

/* Wait until @path exists, for at most READY_SECONDS; 0, or -1. */
static int wait_go(const char *path)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	int n;

	for (n = 0; n < READY_SECONDS * 10; n++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return -1;
}

/*
 * Return in the parent once the child (the watcher, in a new session) has
 * written its verdict on @ready: the watch's fd must belong to the process
 * that waits for its signals, so the child sets it.
 */
static int wait_ready(int ready[2], pid_t child)
{
	char verdict = 0;

	close(ready[1]);
	alarm(READY_SECONDS);
	if (read(ready[0], &verdict, 1) != 1 || verdict != 'r') {
		kill(child, SIGKILL);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sig = SIGRTMIN + 2, fd, ready[2];
	pid_t child;
	struct timespec ts = { 0, 0 };
	struct sockaddr_in sa;
	time_t end;
	sigset_t set;
	siginfo_t si;
	FILE *log;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s DIR LOG SECONDS [GO]\n", argv[0]);
		return 2;
	}
	log = fopen(argv[2], "a");
	if (!log) {
		perror(argv[2]);
		return 1;
	}
	if (pipe(ready)) {
		perror("pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child)
		return wait_ready(ready, child);
	close(ready[0]);
	setsid();
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	tb_mark_addr(&sa);	/* read once now, not after each signal */
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd >= 0 && argc == 5) {
		say(log, "opened fd=%d\n", fd);
		if (wait_go(argv[4])) {
			say(log, "error %d\n", ETIMEDOUT);
			return 1;
		}
	}
	if (fd < 0 || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT)) {
		say(log, "error %d\n", errno);
		/* a failed F_NOTIFY leaves the file's owner as it was: none */
		if (fd >= 0)
			say(log, "owner %d\n", fcntl(fd, F_GETOWN));
		return 1;
	}
	say(log, "ready fd=%d\n", fd);
	if (write(ready[1], "r", 1) != 1)
		return 1;
	close(ready[1]);
	end = time(NULL) + atoi(argv[3]);
	while (time(NULL) < end) {
		ts.tv_sec = 1;
		if (sigtimedwait(&set, &si, &ts) == sig) {
			say(log, "sig fd=%d\n", si.si_fd);
			tb_mark("signal", tb_test_id(), "sig=%d fd=%d", sig,
				si.si_fd);
		}
	}
	return 0;
}
