// SPDX-License-Identifier: GPL-2.0
/*
 * peers: what other notification clients see of the same server-side
 * changes, so that a failure elsewhere can be told apart: inotifywait on
 * the client's mount sees remote creates and deletes with their names
 * while a dnotify watch asks the server for changes, and smbclient's own
 * "notify" command (Samba's client, a session of its own) sees the same
 * changes, which shows the server sends them.  The watchers people use,
 * unmodified, on /mnt/share (remoteinotify) with no F_NOTIFY anywhere:
 * inotifywait prints the names and ISDIR, GIO's
 * "gio monitor", watchdog's "watchmedo" (inotify observer) and a systemd
 * .path unit with PathChanged= react to a server-side change.
 * (fsnotifywait, inotify-tools 3.22.6, needs name_to_handle_at() to give
 * a decodable handle, which cifs refuses without CIFS_NFSD_EXPORT, a
 * BROKEN option: inotify_cifs checks fanotify with FAN_REPORT_DFID_NAME
 * itself.)
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define WAIT		15.0
#define PEER_SECONDS	"60"	/* the peer's own bound: timeout(1) ends it */

FIXTURE(peer) {
	struct tb_dir d;	/* the watched directory */
	char out[160];		/* the peer's output */
	pid_t pid;		/* the peer, leader of its process group */
};

FIXTURE_SETUP(peer)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "peer"));
	snprintf(self->out, sizeof(self->out), "/tmp/%s.out", self->d.name);
	self->pid = -1;
}

FIXTURE_TEARDOWN(peer)
{
	if (self->pid > 0) {
		kill(-self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	unlink(self->out);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/*
 * Start a peer (a shell command line) in a process group of its own, its
 * stdout and stderr to @out, stdin from /dev/null, bounded by timeout(1);
 * its pid, or -1.
 */
static pid_t start_peer(const char *cmdline, const char *out)
{
	char cmd[768];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec timeout " PEER_SECONDS " %s", cmdline);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int n = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (o < 0 || n < 0 || dup2(n, 0) < 0 || dup2(o, 1) < 0 ||
		    dup2(o, 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait until the file at @path holds @needle; 1 when it does. */
static int wait_output(const char *path, const char *needle, double seconds)
{
	double end = tb_now() + seconds;

	do {
		if (tb_file_has_line(path, needle, NULL) == 1)
			return 1;
		usleep(200 * 1000);
	} while (tb_now() < end);
	return 0;
}

/* Show a peer's output in the test's log, for a failure. */
static void show_output(struct __test_metadata *_metadata, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		TH_LOG("peer: %s", strtok(line, "\n") ?: "");
	fclose(f);
}

TEST_F_TIMEOUT(peer, inotifywait_sees_server_changes_with_dnotify_armed, 60)
{
	char cmd[512];
	int fd;

	/* it prints "Watches established." once its watch is in place */
	snprintf(cmd, sizeof(cmd), "inotifywait -m -e create -e delete "
		 "--format '%%e %%f' '%s'", self->d.path);
	self->pid = start_peer(cmd, self->out);
	ASSERT_LT(0, self->pid);
	ASSERT_EQ(1, wait_output(self->out, "Watches established", WAIT))
		show_output(_metadata, self->out);
	fd = open(self->d.path, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT));
	signal(SIGIO, SIG_IGN);
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "CREATE made", WAIT));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "DELETE made", WAIT));
	if (_metadata->exit_code)
		show_output(_metadata, self->out);
	close(fd);
}

/*
 * smbclient's "notify DIR" prints "ACTION NAME" (action in hex: 0001
 * added, 0002 removed) for each change, from its own session; line
 * buffered (stdbuf) so each shows as it comes. Its request is pending once
 * smbd lists it (smbstatus -N), and only then is the change made.
 */
TEST_F_TIMEOUT(peer, smbclient_notify_sees_server_changes, 60)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "stdbuf -oL smbclient -m SMB3 "
		 "-A /etc/testbed/cifs.cred //server/share -c 'notify %s'",
		 self->d.name);
	self->pid = start_peer(cmd, self->out);
	ASSERT_LT(0, self->pid);
	ASSERT_EQ(1, tb_wait_notifies(self->d.name, 1, WAIT))
		show_output(_metadata, self->out);
	ASSERT_EQ(0, tb_server(NULL, "create %s/seen", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "0001 seen", WAIT));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/seen", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "0002 seen", WAIT));
	if (_metadata->exit_code)
		show_output(_metadata, self->out);
}

/*
 * Start @cmdline as a peer that watches with inotify or fanotify, and wait
 * until smbd holds the notify request its mark armed (asynchronously).
 */
static int start_watching_peer(FIXTURE_DATA(peer) *self, const char *cmdline)
{
	self->pid = start_peer(cmdline, self->out);
	if (self->pid <= 0)
		return -1;
	return tb_wait_notifies(self->d.name, 1, WAIT) == 1 ? 0 : -1;
}

TEST_F_TIMEOUT(peer, inotifywait_sees_server_changes_alone, 90)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "inotifywait -m -e create -e delete "
		 "--format '%%e %%f' '%s'", self->d.path);
	ASSERT_EQ(0, start_watching_peer(self, cmd))
		show_output(_metadata, self->out);
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "CREATE made", WAIT));
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "CREATE,ISDIR sub", WAIT));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "DELETE made", WAIT));
	if (_metadata->exit_code)
		show_output(_metadata, self->out);
}

TEST_F_TIMEOUT(peer, gio_monitor_sees_server_create, 90)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "stdbuf -oL gio monitor '%s'", self->d.path);
	ASSERT_EQ(0, start_watching_peer(self, cmd))
		show_output(_metadata, self->out);
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "made: created", WAIT));
	if (_metadata->exit_code)
		show_output(_metadata, self->out);
}

TEST_F_TIMEOUT(peer, watchmedo_sees_server_create, 90)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "watchmedo shell-command --command="
		 "'echo ${watch_event_type} ${watch_src_path}' '%s'",
		 self->d.path);
	ASSERT_EQ(0, start_watching_peer(self, cmd))
		show_output(_metadata, self->out);
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->d.name));
	EXPECT_EQ(1, wait_output(self->out, "created ", WAIT));
	EXPECT_EQ(1, wait_output(self->out, "/made", 1));
	if (_metadata->exit_code)
		show_output(_metadata, self->out);
}

TEST_F_TIMEOUT(peer, systemd_path_unit_fires_on_server_change, 90)
{
	char cmd[512], fired[128], unit[80];

	snprintf(unit, sizeof(unit), "tb-%s", self->d.name);
	snprintf(fired, sizeof(fired), "/tmp/%s.fired", self->d.name);
	unlink(fired);
	snprintf(cmd, sizeof(cmd), "systemd-run --quiet --unit=%s "
		 "--path-property=PathChanged=%s touch %s", unit, self->d.path,
		 fired);
	ASSERT_EQ(0, system(cmd));
	EXPECT_EQ(1, tb_wait_notifies(self->d.name, 1, WAIT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/made", self->d.name));
	EXPECT_EQ(1, tb_wait_file(fired, WAIT)) TH_LOG("%s.path did not fire",
						      unit);
	snprintf(cmd, sizeof(cmd), "systemctl stop %s.path %s.service "
		 ">/dev/null 2>&1", unit, unit);
	if (system(cmd))
		TH_LOG("could not stop %s", unit);
	unlink(fired);
}

TEST_HARNESS_MAIN
