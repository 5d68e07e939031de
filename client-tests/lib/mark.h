/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test markers on the wire: one UDP datagram "TBMARK KIND ID [k=v ...]"
 * to the segment's broadcast address (MARKER_ADDR, MARKER_PORT in the
 * staging folder's testbed.env). The capture stamps them on the same clock
 * as the SMB2 frames, which the guests' own clocks (drifting under TCG)
 * cannot give: orchestrate.py pcap cuts a run into tests at the begin/end
 * markers and measures latencies between change, response and signal.
 * Best effort: a marker that cannot be sent is not a test failure.
 */
#ifndef TB_MARK_H
#define TB_MARK_H

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TB_MARK_ENV	"/mnt/testbed/testbed.env"

/* The marker address from testbed.env, read once; 0 or -1. */
static inline int tb_mark_addr(struct sockaddr_in *sa)
{
	static struct sockaddr_in cached;
	static int state;	/* 0 unread, 1 read, -1 unusable */
	char line[128], addr[128] = "";
	int port = 0;
	FILE *f;

	if (state == 0) {
		state = -1;
		f = fopen(TB_MARK_ENV, "r");
		if (f) {
			while (fgets(line, sizeof(line), f)) {
				line[strcspn(line, "\n")] = '\0';
				if (!strncmp(line, "MARKER_ADDR=", 12))
					snprintf(addr, sizeof(addr), "%s", line + 12);
				else if (!strncmp(line, "MARKER_PORT=", 12))
					port = atoi(line + 12);
			}
			fclose(f);
		}
		cached.sin_family = AF_INET;
		cached.sin_port = htons(port);
		if (port > 0 && inet_pton(AF_INET, addr, &cached.sin_addr) == 1)
			state = 1;
	}
	*sa = cached;
	return state == 1 ? 0 : -1;
}

/* Send "TBMARK @kind @id" and the printf-style rest; 0 or -1. */
static inline int tb_mark(const char *kind, const char *id, const char *fmt, ...)
{
	struct sockaddr_in sa;
	char msg[512];
	int one = 1, n, s, rc;
	va_list ap;

	if (tb_mark_addr(&sa))
		return -1;
	n = snprintf(msg, sizeof(msg), "TBMARK %s %s", kind, id && *id ? id : "-");
	if (fmt && n > 0 && n < (int)sizeof(msg)) {
		msg[n++] = ' ';
		va_start(ap, fmt);
		vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
		va_end(ap);
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one));
	rc = sendto(s, msg, strlen(msg), 0, (struct sockaddr *)&sa, sizeof(sa));
	close(s);
	return rc < 0 ? -1 : 0;
}

/* The id of the running test, as the suite passes it (TB_TEST_ID). */
static inline const char *tb_test_id(void)
{
	return getenv("TB_TEST_ID");
}

#endif /* TB_MARK_H */
