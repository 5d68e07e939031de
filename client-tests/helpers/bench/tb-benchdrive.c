// SPDX-License-Identifier: GPL-2.0
/*
 * tb-benchdrive: the changes of orchestrate.py bench's latency measure,
 * made on the server guest.  N files DIR/c-0000 ... are created SPACING_MS
 * apart, alternately on the server's own disk and through a second SMB
 * session (one smbclient kept running, fed "put" commands), each marked on
 * the wire just before it is made ("TBMARK change - op=create
 * path=DIR/NAME via=disk|smb"), so that the host's capture times every
 * watcher's delivery from it.
 *
 *   tb-benchdrive SHARE_ROOT DIR N SPACING_MS UID [disk|smb|both]
 *
 * SMBCLIENT_ARGS ("//127.0.0.1/share -U user%pass") names the session.
 * Prints "done N" and exits 0, or one line on stderr and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/mark.h"

#define EMPTY_FILE	"/run/tb-benchdrive.empty"	/* smbclient puts no /dev/null */

static FILE *start_session(void)
{
	const char *args = getenv("SMBCLIENT_ARGS");
	char cmd[1024];
	FILE *f;

	if (!args) {
		fprintf(stderr, "tb-benchdrive: SMBCLIENT_ARGS unset\n");
		return NULL;
	}
	if (close(open(EMPTY_FILE, O_CREAT | O_WRONLY | O_TRUNC, 0644))) {
		fprintf(stderr, "tb-benchdrive: %s: %s\n", EMPTY_FILE, strerror(errno));
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "exec smbclient %s >/dev/null 2>&1", args);
	f = popen(cmd, "w");
	if (f)
		setvbuf(f, NULL, _IONBF, 0);
	return f;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *root, *dir, *mode = "both";
	long n, spacing, i;
	char path[4096], rel[512];
	FILE *smb = NULL;
	uid_t uid;

	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: tb-benchdrive SHARE_ROOT DIR N SPACING_MS UID [disk|smb|both]\n");
		return 2;
	}
	root = argv[1];
	dir = argv[2];
	n = atol(argv[3]);
	spacing = atol(argv[4]);
	uid = atoi(argv[5]);
	if (argc == 7)
		mode = argv[6];
	if (n <= 0 || spacing < 0 || strstr(dir, "..") || dir[0] == '/' ||
	    (strcmp(mode, "disk") && strcmp(mode, "smb") && strcmp(mode, "both"))) {
		fprintf(stderr, "tb-benchdrive: bad arguments\n");
		return 2;
	}
	if (strcmp(mode, "disk")) {
		smb = start_session();
		if (!smb)
			return 1;
		sleep_ms(2000);		/* the session's set-up is not a change */
	}
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
		fprintf(stderr, "tb-benchdrive: uid %d: %s\n", uid, strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		int via_smb = !strcmp(mode, "smb") || (!strcmp(mode, "both") && (i & 1));
		int fd;

		snprintf(rel, sizeof(rel), "%s/c-%04ld", dir, i);
		tb_mark("change", NULL, "op=create path=%s via=%s", rel,
			via_smb ? "smb" : "disk");
		if (via_smb) {
			if (fprintf(smb, "put " EMPTY_FILE " %s\n", rel) < 0) {
				fprintf(stderr, "tb-benchdrive: smbclient went away\n");
				return 1;
			}
		} else {
			snprintf(path, sizeof(path), "%s/%s", root, rel);
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0) {
				fprintf(stderr, "tb-benchdrive: %s: %s\n", path, strerror(errno));
				return 1;
			}
			close(fd);
		}
		sleep_ms(spacing);
	}
	if (smb) {
		fprintf(smb, "quit\n");
		pclose(smb);
	}
	printf("done %ld\n", n);
	return 0;
}
