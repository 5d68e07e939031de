// SPDX-License-Identifier: GPL-2.0
/*
 * tb-watch: a long-lived F_NOTIFY watcher for the suite's fault cases,
 * which the host drives (a server restart, the link taken down, a kill).
 * Sets DN_CREATE|DN_DELETE|DN_MULTISHOT on DIR with a real-time signal and
 * appends one line per signal to LOG ("sig fd=N"); "ready" once F_NOTIFY
 * has returned. Runs until killed, or for at most SECONDS.
 *
 *   tb-watch DIR LOG SECONDS
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

static void say(FILE *log, const char *fmt, int val)
{
	fprintf(log, fmt, val);
	fflush(log);
}

int main(int argc, char **argv)
{
	int sig = SIGRTMIN + 2, fd;
	struct timespec ts = { 0, 0 };
	struct sockaddr_in sa;
	time_t end;
	sigset_t set;
	siginfo_t si;
	FILE *log;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DIR LOG SECONDS\n", argv[0]);
		return 2;
	}
	log = fopen(argv[2], "a");
	if (!log) {
		perror(argv[2]);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	tb_mark_addr(&sa);	/* read once now, not after each signal */
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT)) {
		say(log, "error %d\n", errno);
		return 1;
	}
	say(log, "ready fd=%d\n", fd);
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
