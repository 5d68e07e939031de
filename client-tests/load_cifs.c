// SPDX-License-Identifier: GPL-2.0
/*
 * load_cifs: remote notification under load, bounded in count and time.
 * 1,000 directories watched at once, a server-side change in each, every
 * watcher signalled, with dnotify and with one inotify watch each; 1,000 watch/unwatch cycles (10,000 with TB_CYCLES)
 * on one directory with the server's open handles and the client's cifs_*
 * slab objects back at their baseline; 5,000 files created at once in a
 * watched directory (more than one CHANGE_NOTIFY response holds:
 * STATUS_NOTIFY_ENUM_DIR) ending in at least one signal and a listing that
 * matches the server's.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "lib/testbed.h"
#include "kselftest_harness.h"

#define NOTIFY_SIG	(SIGRTMIN + 1)
#define DIRS		1000
#define BURST		5000
/*
 * Watch/unwatch cycles: 1,000 by default, 10,000 with TB_CYCLES=10000 in
 * the host's environment (orchestrate.py passes TB_* variables on). Under
 * TCG with KASAN and lockdep a cycle takes 74-118 ms (three round trips:
 * open, query, close), so 10,000 alone would take 12-20 minutes, the
 * whole suite's budget. A leak of one object per cycle shows either way:
 * the slab counts must come back to their baseline exactly.
 */
#define CYCLES_DEFAULT	1000

static int cycles(void)
{
	const char *env = getenv("TB_CYCLES");
	int n = env ? atoi(env) : 0;

	return n > 0 ? n : CYCLES_DEFAULT;
}

FIXTURE(load) {
	struct tb_dir d;	/* the watched directory */
	sigset_t set;
};

FIXTURE_SETUP(load)
{
	struct rlimit nofile = { DIRS + 64, DIRS + 64 };

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &nofile));
	ASSERT_EQ(0, tb_server_dir(&self->d, "load"));
	ASSERT_EQ(0, tb_block_signal(&self->set, NOTIFY_SIG));
}

/* On the server's disk: thousands of entries, minutes through the mount. */
FIXTURE_TEARDOWN(load)
{
	if (!tb_server(NULL, "rmtree %s", self->d.name))
		return;
	if (tb_remove_tree(self->d.path))
		TH_LOG("could not remove %s", self->d.path);
}

/*
 * The objects of the client's cifs_* slab caches, from /proc/slabinfo,
 * each cache shrunk first: KASAN keeps freed objects in its quarantine,
 * where slabinfo still counts them (10,000 cycles showed 7,101 objects
 * before a shrink, 429 before the cycles), and a shrink empties it.
 */
static long cifs_slab_objects(void)
{
	char line[512], name[64], knob[128];
	long active, total = 0;
	FILE *f;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		f = fopen("/proc/slabinfo", "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%63s %ld", name, &active) != 2 ||
			    strncmp(name, "cifs_", 5))
				continue;
			if (pass == 0) {
				snprintf(knob, sizeof(knob),
					 "/sys/kernel/slab/%s/shrink", name);
				tb_write_file(knob, "1");
			} else {
				total += active;
			}
		}
		fclose(f);
	}
	return total;
}

static long long server_opens(const char *name)
{
	long long n = -1;

	return tb_server(&n, "opens %s", name) ? -1 : n;
}

/* Poll the server's handle count on @name to @want, for @seconds. */
static long long opens_reach(const char *name, long long want, double seconds)
{
	double end = tb_now() + seconds;
	long long n;

	do {
		n = server_opens(name);
		if (n == want)
			break;
		usleep(500 * 1000);
	} while (tb_now() < end);
	return n;
}

static long long opens_settle(const char *name, long long want)
{
	return opens_reach(name, want, 30);
}

TEST_F_TIMEOUT(load, thousand_directories_each_signalled, 900)
{
	static int fds[DIRS];
	static unsigned char seen[DIRS];
	char dir[192], last[32];
	int i, got = 0;
	double t0, t_watch, t_signal;
	siginfo_t si;

	ASSERT_EQ(0, tb_server(NULL, "mkdirs %s/d %d", self->d.name, DIRS));
	snprintf(last, sizeof(last), "d-%d", DIRS - 1);
	ASSERT_EQ(1, tb_wait_listed(self->d.path, last, 60));
	t0 = tb_now();
	for (i = 0; i < DIRS; i++) {
		snprintf(dir, sizeof(dir), "%s/d-%d", self->d.path, i);
		fds[i] = tb_open_watchable(dir, NOTIFY_SIG);
		ASSERT_LE(0, fds[i]) TH_LOG("open %s: %s", dir, strerror(errno));
		ASSERT_EQ(0, fcntl(fds[i], F_NOTIFY, DN_CREATE))
			TH_LOG("F_NOTIFY on %s: %s", dir, strerror(errno));
	}
	t_watch = tb_now() - t0;
	ASSERT_EQ(DIRS, server_opens(self->d.name));
	t0 = tb_now();
	ASSERT_EQ(0, tb_server(NULL, "touchall %s/d %d x", self->d.name, DIRS));
	while (got < DIRS && tb_wait_sig(&self->set, 60, &si) == NOTIFY_SIG) {
		for (i = 0; i < DIRS; i++)
			if (fds[i] == si.si_fd && !seen[i]) {
				seen[i] = 1;
				got++;
			}
	}
	t_signal = tb_now() - t0;
	TH_LOG("%d watches set in %.1fs; %d of %d signalled in %.1fs",
	       DIRS, t_watch, got, DIRS, t_signal);
	EXPECT_EQ(DIRS, got);
	for (i = 0; i < DIRS; i++)
		close(fds[i]);
	EXPECT_EQ(0, opens_settle(self->d.name, 0));
}

/*
 * inotify marks arm their remote watches without waiting for the server:
 * wait until smbd holds all 1,000 handles, then change each directory on
 * the server's disk and count the directories whose watch heard of it.
 */
TEST_F_TIMEOUT(load, thousand_inotify_watches_each_hear_a_change, 900)
{
	static int wds[DIRS];
	static unsigned char seen[DIRS];
	char dir[192], last[32], buf[16384] __attribute__((aligned(8)));
	double t0, t_watch, t_event, end;
	int i, in, got = 0;

	ASSERT_EQ(0, tb_server(NULL, "mkdirs %s/d %d", self->d.name, DIRS));
	snprintf(last, sizeof(last), "d-%d", DIRS - 1);
	ASSERT_EQ(1, tb_wait_listed(self->d.path, last, 60));
	in = inotify_init1(IN_CLOEXEC);
	ASSERT_LE(0, in);
	t0 = tb_now();
	for (i = 0; i < DIRS; i++) {
		snprintf(dir, sizeof(dir), "%s/d-%d", self->d.path, i);
		wds[i] = inotify_add_watch(in, dir, IN_CREATE);
		ASSERT_LE(0, wds[i]) TH_LOG("watch %s: %s", dir, strerror(errno));
	}
	EXPECT_EQ(DIRS, opens_reach(self->d.name, DIRS, 300));
	t_watch = tb_now() - t0;
	t0 = tb_now();
	ASSERT_EQ(0, tb_server(NULL, "touchall %s/d %d x", self->d.name, DIRS));
	end = tb_now() + 120;
	while (got < DIRS && tb_now() < end) {
		struct pollfd pfd = { .fd = in, .events = POLLIN };
		ssize_t len, off;

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		len = read(in, buf, sizeof(buf));
		for (off = 0; len > 0 && off < len;) {
			struct inotify_event *ie = (void *)(buf + off);

			for (i = 0; i < DIRS && wds[i] != ie->wd; i++)
				;
			if (i < DIRS && !seen[i] && (ie->mask & IN_CREATE)) {
				seen[i] = 1;
				got++;
			}
			off += sizeof(*ie) + ie->len;
		}
	}
	t_event = tb_now() - t0;
	TH_LOG("%d inotify watches armed on the server in %.1fs; %d of %d "
	       "heard of a change in %.1fs", DIRS, t_watch, got, DIRS, t_event);
	EXPECT_EQ(DIRS, got);
	close(in);
	EXPECT_EQ(0, opens_settle(self->d.name, 0));
}

TEST_F_TIMEOUT(load, watch_cycles_leave_nothing, 1500)
{
	long slabs_before, slabs_after;
	double t0;
	int fd, i;

	fd = open(self->d.path, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	/* one cycle first, so that caches filled once count in the baseline */
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE));
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, 0));
	ASSERT_EQ(0, opens_settle(self->d.name, 0));
	slabs_before = cifs_slab_objects();
	ASSERT_LE(0, slabs_before) TH_LOG("no /proc/slabinfo");
	t0 = tb_now();
	for (i = 0; i < cycles(); i++) {
		ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT))
			TH_LOG("cycle %d: %s", i, strerror(errno));
		ASSERT_EQ(0, fcntl(fd, F_NOTIFY, 0));
	}
	TH_LOG("%d watch/unwatch cycles in %.1fs", cycles(), tb_now() - t0);
	close(fd);
	EXPECT_EQ(0, opens_settle(self->d.name, 0));
	slabs_after = cifs_slab_objects();
	TH_LOG("cifs_* slab objects: %ld before, %ld after", slabs_before,
	       slabs_after);
	EXPECT_GE(slabs_before + 16, slabs_after);
}

TEST_F_TIMEOUT(load, burst_of_creates_signals_and_listing_matches, 600)
{
	long long on_server = -1, listed;
	siginfo_t si;
	double t0;
	int fd, n = 0;

	/*
	 * When the real-time signal queue is full, the kernel sends SIGIO
	 * instead (fcntl(2)): it counts as a signal, and must not kill us.
	 */
	sigaddset(&self->set, SIGIO);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &self->set, NULL));
	fd = tb_open_watchable(self->d.path, NOTIFY_SIG);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT));
	t0 = tb_now();
	ASSERT_EQ(0, tb_server(NULL, "creates %s %d", self->d.name, BURST));
	/* signals until 5 s without one (bounded by the test's timeout) */
	while (tb_wait_sig(&self->set, n ? 5 : 30, &si) > 0)
		n++;
	TH_LOG("%d signal(s) for %d creates in %.1fs", n, BURST, tb_now() - t0);
	EXPECT_LE(1, n);
	ASSERT_EQ(0, tb_server(&on_server, "count %s", self->d.name));
	listed = tb_count_entries(self->d.path);
	EXPECT_EQ(BURST, on_server);
	EXPECT_EQ(on_server, listed)
		TH_LOG("the client lists %lld entries", listed);
	close(fd);
}

TEST_HARNESS_MAIN
