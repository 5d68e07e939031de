// SPDX-License-Identifier: GPL-2.0
/*
 * tb-sigproxy: a TCP relay on the server guest in front of smbd, for
 * notify_signing.  In "spoil" mode it flips one byte of the signature of
 * every final, signed CHANGE_NOTIFY response it relays and nothing else,
 * as a tampering path would; in "relay" mode it changes nothing, so that
 * a case through it shows the relay alone loses no event.
 *
 *   tb-sigproxy LISTEN_ADDR LISTEN_PORT SMBD_ADDR SMBD_PORT relay|spoil
 *
 * One child per connection; the server-to-client direction is read one
 * NetBIOS-framed PDU at a time, the other is copied as it comes.
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
#include <sys/socket.h>
#include <unistd.h>

#define SMB2_HDR_LEN		64
#define SMB2_CHANGE_NOTIFY	0x000f
#define SMB2_FLAGS_SIGNED	0x00000008
#define STATUS_PENDING		0x00000103
#define SIGNATURE_OFF		48
#define MAX_PDU			(16 << 20)

static int spoil;

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

/* Relay one PDU from smbd to the client; -1 when either side is gone. */
static int relay_pdu(int from, int to)
{
	unsigned char hdr[4], *pdu;
	uint32_t len;
	int rc;

	if (full_read(from, hdr, sizeof(hdr)))
		return -1;
	len = (uint32_t)hdr[1] << 16 | hdr[2] << 8 | hdr[3];
	if (hdr[0] != 0 || len > MAX_PDU)
		return -1;
	pdu = malloc(len ? len : 1);
	if (!pdu || full_read(from, pdu, len)) {
		free(pdu);
		return -1;
	}
	if (spoil && final_signed_notify(pdu, len)) {
		pdu[SIGNATURE_OFF] ^= 0x5a;
		fprintf(stderr, "tb-sigproxy: spoiled the signature of a CHANGE_NOTIFY response\n");
	}
	rc = full_write(to, hdr, sizeof(hdr)) || full_write(to, pdu, len) ? -1 : 0;
	free(pdu);
	return rc;
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
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents && copy_some(client, up))
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
	    (strcmp(argv[5], "relay") && strcmp(argv[5], "spoil"))) {
		fprintf(stderr, "usage: tb-sigproxy LISTEN_ADDR LISTEN_PORT SMBD_ADDR SMBD_PORT relay|spoil\n");
		return 2;
	}
	spoil = !strcmp(argv[5], "spoil");
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
