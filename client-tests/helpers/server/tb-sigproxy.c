// SPDX-License-Identifier: GPL-2.0
/*
 * tb-sigproxy: a TCP relay on the server guest in front of smbd, for
 * notify_signing and notify_order.  In "spoil" mode it flips one byte of
 * the signature of every final, signed CHANGE_NOTIFY response it relays
 * and nothing else, as a tampering path would; in "hold" mode it passes
 * each CHANGE_NOTIFY request to smbd HOLD_MS after the client sent it,
 * the requests behind it at once, as a server that handles a connection's
 * requests out of order (MS-SMB2 allows it) would, or, while the share
 * holds DROP_MARK (which it then removes), drops the connection instead,
 * as a network that fails under a request would; and while the share
 * holds STALL_MARK it sits on each SESSION_SETUP request (STALL_MAX_MS at
 * most), as a server slow to authenticate a new user would, and while it
 * holds SLOW_MARK it passes each frame with a SET_INFO request in it (a
 * rename, a delete) SLOW_MS late, as a server that waits for a lease
 * break would; in "relay" mode it
 * changes nothing, so that a case through it shows the relay alone loses
 * no event.
 *
 *   tb-sigproxy LISTEN_ADDR LISTEN_PORT SMBD_ADDR SMBD_PORT relay|spoil|hold
 *
 * One child per connection; each direction is read one NetBIOS-framed PDU
 * at a time (the client-to-server one only in "hold" mode: else it is
 * copied as it comes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define SMB2_HDR_LEN		64
#define SMB2_SESSION_SETUP	0x0001
#define SMB2_SET_INFO		0x0011
#define SMB2_CHANGE_NOTIFY	0x000f
#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001
#define SMB2_FLAGS_SIGNED	0x00000008
#define STATUS_PENDING		0x00000103
#define SIGNATURE_OFF		48
#define MAX_PDU			(16 << 20)
#define HOLD_MS			1000
#define DROP_MARK		"/srv/share/.tb-drop-notify"
#define STALL_MARK		"/srv/share/.tb-stall-setup"
#define STALL_POLL_MS		100
#define STALL_MAX_MS		60000
#define SLOW_MARK		"/srv/share/.tb-slow-setinfo"
#define SLOW_MS			3000
#define NEXT_COMMAND_OFF	20
#define MAX_HELD		16

static int spoil, hold;

/* the CHANGE_NOTIFY requests held back, oldest first */
static struct held {
	unsigned char *pdu;	/* with its 4-byte NetBIOS header */
	uint32_t len;
	long long due;		/* ms, CLOCK_MONOTONIC */
	long long until;	/* a stalled one: passed on by then at last */
} held[MAX_HELD];
static int nr_held;

static int full_read(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static int full_write(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether @pdu is a final, signed CHANGE_NOTIFY response (not encrypted). */
static int final_signed_notify(const unsigned char *pdu, uint32_t len)
{
	if (len < SMB2_HDR_LEN || memcmp(pdu, "\xfeSMB", 4))
		return 0;
	return (pdu[12] | pdu[13] << 8) == SMB2_CHANGE_NOTIFY &&
	       le32(pdu + 8) != STATUS_PENDING &&
	       (le32(pdu + 16) & SMB2_FLAGS_SIGNED);
}

/* Whether @pdu is a request of the SMB2 command @cmd (not encrypted). */
static int request_of(const unsigned char *pdu, uint32_t len, int cmd)
{
	if (len < SMB2_HDR_LEN || memcmp(pdu, "\xfeSMB", 4))
		return 0;
	return (pdu[12] | pdu[13] << 8) == cmd &&
	       !(le32(pdu + 16) & SMB2_FLAGS_SERVER_TO_REDIR);
}

/* Whether the frame @pdu has a request of @cmd, alone or in a compound. */
static int frame_has_request(const unsigned char *pdu, uint32_t len, int cmd)
{
	uint32_t off = 0, next;

	while (len - off >= SMB2_HDR_LEN) {
		if (request_of(pdu + off, len - off, cmd))
			return 1;
		next = le32(pdu + off + NEXT_COMMAND_OFF);
		if (!next || next > len - off)
			break;
		off += next;
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Read one NetBIOS-framed PDU: its length, the frame in *@frame. */
static int read_pdu(int from, unsigned char **frame, uint32_t *len)
{
	unsigned char hdr[4];

	if (full_read(from, hdr, sizeof(hdr)))
		return -1;
	*len = (uint32_t)hdr[1] << 16 | hdr[2] << 8 | hdr[3];
	if (hdr[0] != 0 || *len > MAX_PDU)
		return -1;
	*frame = malloc(*len + 4);
	if (!*frame)
		return -1;
	memcpy(*frame, hdr, 4);
	if (full_read(from, *frame + 4, *len)) {
		free(*frame);
		return -1;
	}
	return 0;
}

/* Relay one PDU from smbd to the client; -1 when either side is gone. */
static int relay_pdu(int from, int to)
{
	unsigned char *frame;
	uint32_t len;
	int rc;

	if (read_pdu(from, &frame, &len))
		return -1;
	if (spoil && final_signed_notify(frame + 4, len)) {
		frame[4 + SIGNATURE_OFF] ^= 0x5a;
		fprintf(stderr, "tb-sigproxy: spoiled the signature of a CHANGE_NOTIFY response\n");
	}
	rc = full_write(to, frame, len + 4);
	free(frame);
	return rc;
}

/* Relay one PDU from the client to smbd, or hold it if it asks for changes. */
static int relay_request(int from, int to)
{
	unsigned char *frame;
	uint32_t len;
	int rc, notify, stall, slow;

	if (read_pdu(from, &frame, &len))
		return -1;
	notify = request_of(frame + 4, len, SMB2_CHANGE_NOTIFY);
	stall = request_of(frame + 4, len, SMB2_SESSION_SETUP) &&
		access(STALL_MARK, F_OK) == 0;
	slow = frame_has_request(frame + 4, len, SMB2_SET_INFO) &&
	       access(SLOW_MARK, F_OK) == 0;
	if (notify && unlink(DROP_MARK) == 0) {
		fprintf(stderr, "tb-sigproxy: dropped the connection at a CHANGE_NOTIFY request\n");
		_exit(0);
	}
	if ((notify || stall || slow) && nr_held < MAX_HELD) {
		held[nr_held].pdu = frame;
		held[nr_held].len = len + 4;
		held[nr_held].due = now_ms() + (stall ? STALL_POLL_MS :
						slow ? SLOW_MS : HOLD_MS);
		held[nr_held].until = stall ? now_ms() + STALL_MAX_MS : 0;
		nr_held++;
		fprintf(stderr, "tb-sigproxy: holding a %s request\n",
			stall ? "SESSION_SETUP" : slow ? "SET_INFO" :
			"CHANGE_NOTIFY");
		return 0;
	}
	rc = full_write(to, frame, len + 4);
	free(frame);
	return rc;
}

/* Pass on the held requests that are due; the ms until the next, or -1. */
static int release_held(int to)
{
	long long now = now_ms();

	while (nr_held && held[0].due <= now) {
		/* a stalled one waits while the mark is there */
		if (held[0].until > now && access(STALL_MARK, F_OK) == 0) {
			held[0].due = now + STALL_POLL_MS;
			break;
		}
		if (full_write(to, held[0].pdu, held[0].len))
			_exit(0);
		free(held[0].pdu);
		memmove(held, held + 1, --nr_held * sizeof(held[0]));
	}
	return nr_held ? (int)(held[0].due - now) : -1;
}

static int copy_some(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return -1;
	return full_write(to, buf, n);
}

static void serve(int client, const struct sockaddr_in *smbd)
{
	struct pollfd p[2];
	int up = socket(AF_INET, SOCK_STREAM, 0);

	if (up < 0 || connect(up, (const struct sockaddr *)smbd, sizeof(*smbd)))
		_exit(1);
	p[0].fd = client;
	p[1].fd = up;
	p[0].events = p[1].events = POLLIN;
	for (;;) {
		int timeout = hold ? release_held(up) : -1;

		if (poll(p, 2, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents && (hold ? relay_request(client, up) :
					     copy_some(client, up)))
			break;
		if (p[1].revents && relay_pdu(up, client))
			break;
	}
	_exit(0);
}

static int parse_addr(struct sockaddr_in *sa, const char *ip, const char *port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in listen_sa, smbd;
	int one = 1, s, c;

	if (argc != 6 || parse_addr(&listen_sa, argv[1], argv[2]) ||
	    parse_addr(&smbd, argv[3], argv[4]) ||
	    (strcmp(argv[5], "relay") && strcmp(argv[5], "spoil") &&
	     strcmp(argv[5], "hold"))) {
		fprintf(stderr, "usage: tb-sigproxy LISTEN_ADDR LISTEN_PORT SMBD_ADDR SMBD_PORT relay|spoil|hold\n");
		return 2;
	}
	spoil = !strcmp(argv[5], "spoil");
	hold = !strcmp(argv[5], "hold");
	signal(SIGCHLD, SIG_IGN);	/* children are reaped by the kernel */
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&listen_sa, sizeof(listen_sa)) ||
	    listen(s, 16)) {
		perror("tb-sigproxy");
		return 1;
	}
	for (;;) {
		c = accept(s, NULL, NULL);
		if (c < 0) {
			/* out of descriptors or memory: do not spin on it */
			if (errno != EINTR && errno != ECONNABORTED) {
				perror("tb-sigproxy: accept");
				sleep(1);
			}
			continue;
		}
		if (fork() == 0) {
			close(s);
			serve(c, &smbd);
		}
		close(c);
	}
}
