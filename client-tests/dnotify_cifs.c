// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify_cifs: fcntl(F_NOTIFY) on a directory of the CIFS mount signals
 * changes made on the server side: on the server's own disk (tb-serverd)
 * and through a second, independent SMB session (smbclient). On a kernel
 * without remote notification every "signals" case here times out.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/testbed.h"
#include "lib/events.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define SIGNAL_WAIT	10.0	/* seconds: a remote change, under TCG */
#define SILENCE_WAIT	3.0	/* seconds without a signal that counts as none */

FIXTURE(watched) {
	struct tb_dir d;	/* the watched directory */
	int fd;
	sigset_t set;
};

FIXTURE_SETUP(watched)
{
	ASSERT_EQ(0, tb_server_dir(&self->d, "dnt"));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
	self->fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(watched)
{
	if (self->fd >= 0)
		close(self->fd);
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

static int got_signal(struct __test_metadata *_metadata, sigset_t *set,
		      int fd, double seconds)
{
	siginfo_t si;
	int sig = tb_wait_sig(set, seconds, &si);

	if (sig < 0)
		return 0;
	EXPECT_EQ(NOTIFY_SIG, sig);
	EXPECT_EQ(fd, si.si_fd);
	return 1;
}

#define EXPECT_SIGNAL(self) \
	EXPECT_EQ(1, got_signal(_metadata, &(self)->set, (self)->fd, SIGNAL_WAIT)) \
		TH_LOG("no signal within %.0fs", SIGNAL_WAIT)
#define EXPECT_SILENCE(self) \
	EXPECT_EQ(0, got_signal(_metadata, &(self)->set, (self)->fd, SILENCE_WAIT)) \
		TH_LOG("a signal for a change outside the mask")

TEST_F(watched, server_disk_create)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, tb_server(NULL, "create %s/a", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, server_disk_write)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/w", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_MODIFY));
	ASSERT_EQ(0, tb_server(NULL, "write %s/w 1000", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, server_disk_delete)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/d", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_DELETE));
	ASSERT_EQ(0, tb_server(NULL, "unlink %s/d", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, server_disk_rename)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/r1", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_RENAME));
	ASSERT_EQ(0, tb_server(NULL, "rename %s/r1 %s/r2", self->d.name, self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, server_disk_attrib)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/m", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_ATTRIB));
	ASSERT_EQ(0, tb_server(NULL, "chmod %s/m 600", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, change_outside_mask_is_silent)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_DELETE));
	ASSERT_EQ(0, tb_server(NULL, "create %s/quiet", self->d.name));
	EXPECT_SILENCE(self);
}

TEST_F(watched, second_session_create)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, tb_second_session("mkdir %s/sub", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, second_session_delete)
{
	ASSERT_EQ(0, tb_server(NULL, "create %s/x", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_DELETE));
	ASSERT_EQ(0, tb_second_session("del %s/x", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, oneshot_then_silent)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, tb_server(NULL, "create %s/o1", self->d.name));
	EXPECT_SIGNAL(self);
	ASSERT_EQ(0, tb_server(NULL, "create %s/o2", self->d.name));
	EXPECT_SILENCE(self);
}

TEST_F(watched, multishot_keeps_signalling)
{
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/m1", self->d.name));
	EXPECT_SIGNAL(self);
	ASSERT_EQ(0, tb_server(NULL, "create %s/m2", self->d.name));
	EXPECT_SIGNAL(self);
}

TEST_F(watched, notify_zero_stops_and_handle_goes)
{
	long long opens = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(&opens, "opens %s", self->d.name));
	EXPECT_LE(1, opens) TH_LOG("no handle open for the watch on the server");
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, 0));
	ASSERT_EQ(0, tb_server(NULL, "create %s/z", self->d.name));
	EXPECT_SILENCE(self);
	/* the fd itself holds no handle open once its listing is done */
	opens = tb_wait_opens(self->d.name, 0, 10);
	EXPECT_EQ(0, opens) TH_LOG("%lld handle(s) left open on the server", opens);
}

TEST_F(watched, close_stops_and_handle_goes)
{
	long long opens = -1;

	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(&opens, "opens %s", self->d.name));
	EXPECT_LE(1, opens) TH_LOG("no handle open for the watch on the server");
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	opens = tb_wait_opens(self->d.name, 0, 10);
	EXPECT_EQ(0, opens) TH_LOG("%lld handle(s) left open on the server", opens);
}

TEST_F(watched, two_processes_both_signalled)
{
	int status = -1;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(self->d.path, O_RDONLY | O_DIRECTORY);
		siginfo_t si;

		if (fd < 0 || fcntl(fd, F_SETSIG, NOTIFY_SIG) ||
		    fcntl(fd, F_NOTIFY, DN_CREATE))
			_exit(2);
		_exit(tb_wait_sig(&self->set, SIGNAL_WAIT + 5, &si) == NOTIFY_SIG &&
		      si.si_fd == fd ? 0 : 1);
	}
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	usleep(500 * 1000);	/* let the child set its watch */
	ASSERT_EQ(0, tb_server(NULL, "create %s/both", self->d.name));
	EXPECT_SIGNAL(self);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the second watcher was not signalled");
}

TEST_F(watched, subdirectory_change_does_not_signal_parent)
{
	ASSERT_EQ(0, tb_server(NULL, "mkdir %s/sub", self->d.name));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	/* the mkdir itself may still be reported: let it pass */
	got_signal(_metadata, &self->set, self->fd, 1.0);
	ASSERT_EQ(0, tb_server(NULL, "create %s/sub/deep", self->d.name));
	EXPECT_SILENCE(self);
}

static volatile sig_atomic_t handler_ran, handler_stat_ok;
static char handler_path[192];

static void stat_handler(int sig, siginfo_t *si, void *uc)
{
	struct stat st;

	handler_stat_ok = stat(handler_path, &st) == 0;
	handler_ran = 1;
}

TEST_F(watched, stat_in_handler_sees_new_file)
{
	struct sigaction sa = { .sa_sigaction = stat_handler,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	double end;

	snprintf(handler_path, sizeof(handler_path), "%s/seen", self->d.path);
	/* looked up once before: a stale negative entry must not hide it */
	ASSERT_NE(0, access(handler_path, F_OK));
	ASSERT_EQ(0, sigaction(NOTIFY_SIG, &sa, NULL));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &self->set, NULL));
	ASSERT_EQ(0, tb_server(NULL, "create %s/seen", self->d.name));
	end = tb_now() + SIGNAL_WAIT;
	while (!handler_ran && tb_now() < end)
		usleep(20 * 1000);
	sigprocmask(SIG_BLOCK, &self->set, NULL);
	EXPECT_EQ(1, handler_ran);
	EXPECT_EQ(1, handler_stat_ok) TH_LOG("stat() in the handler did not see the file");
}

static volatile sig_atomic_t size_signals;
static volatile long long size_seen = -1;
static char size_path[192];

/* What an editor does on each signal: look at the file again. */
static void size_handler(int sig, siginfo_t *si, void *uc)
{
	struct stat st;

	size_signals++;
	size_seen = stat(size_path, &st) ? -1 : (long long)st.st_size;
}

/*
 * Another client truncates a file and writes 12,345 bytes into it (an
 * editor's save in place): the server reports it as a change, then
 * another.  A watcher that stats the file on each signal must see the
 * final size after the last one.  Dropping the second report as a repeat
 * of the first left the watcher with the size of the truncate, 0.
 */
TEST_F_TIMEOUT(watched, final_size_after_the_last_signal, 90)
{
	struct sigaction sa = { .sa_sigaction = size_handler,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	char local[128];
	struct stat st;
	double end, last = 0;
	int fd, n = 0;

	ASSERT_EQ(0, tb_server(NULL, "create %s/sized", self->d.name));
	ASSERT_EQ(0, tb_server(NULL, "write %s/sized 5000", self->d.name));
	snprintf(size_path, sizeof(size_path), "%s/sized", self->d.path);
	ASSERT_EQ(1, tb_wait_file(size_path, SIGNAL_WAIT));
	ASSERT_EQ(0, stat(size_path, &st));	/* its attributes cached */
	snprintf(local, sizeof(local), "/tmp/final-%s", self->d.name);
	fd = open(local, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	for (; n < 12345; n++)
		ASSERT_EQ(1, write(fd, n % 64 ? "x" : "\n", 1));
	close(fd);

	ASSERT_EQ(0, sigaction(NOTIFY_SIG, &sa, NULL));
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_MODIFY | DN_MULTISHOT));
	ASSERT_EQ(0, tb_wait_remote_watch(self->d.name, SIGNAL_WAIT) ? 0 : -1);
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &self->set, NULL));
	EXPECT_EQ(0, tb_second_session("put %s %s/sized", local, self->d.name));
	/* until SILENCE_WAIT passed without a signal after one came */
	end = tb_now() + 2 * SIGNAL_WAIT;
	for (n = 0; tb_now() < end; usleep(50 * 1000)) {
		if (size_signals != n) {
			n = size_signals;
			last = tb_now();
		}
		if (last && tb_now() - last >= SILENCE_WAIT)
			break;
	}
	sigprocmask(SIG_BLOCK, &self->set, NULL);
	unlink(local);
	TH_LOG("%d signals, the size seen after the last: %lld", n, size_seen);
	EXPECT_LE(1, n);
	EXPECT_EQ(12345, size_seen);
}

TEST_F(watched, inotify_sees_remote_names)
{
	char out[160], cmd[400], buf[512] = "";
	double end;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/inotify-%s.log", self->d.name);
	snprintf(cmd, sizeof(cmd),
		 "timeout 20 inotifywait -q -m -e create --format %%f '%s' > '%s' 2>/dev/null &",
		 self->d.path, out);
	ASSERT_EQ(0, system(cmd));
	usleep(1500 * 1000);	/* inotifywait sets its watch */
	/* the dnotify watch is what asks the server */
	ASSERT_EQ(0, fcntl(self->fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	ASSERT_EQ(0, tb_server(NULL, "create %s/named-by-server", self->d.name));
	end = tb_now() + SIGNAL_WAIT;
	while (tb_now() < end) {
		f = fopen(out, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			buf[n] = '\0';
			fclose(f);
		}
		if (strstr(buf, "named-by-server"))
			break;
		usleep(100 * 1000);
	}
	if (system("pkill -f 'inotifywait -q -m -e create'"))
		TH_LOG("inotifywait already gone");
	unlink(out);
	EXPECT_NE(NULL, strstr(buf, "named-by-server"))
		TH_LOG("inotifywait printed: '%s'", buf);
}

TEST_HARNESS_MAIN
