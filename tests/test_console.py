from testbed.suite.splats import find_splats

CLEAN = """\
[    0.000000] Linux version 6.12.118-testbed
[    0.512000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc.
[    0.600000] KernelAddressSanitizer initialized (generic)
[    0.000000] rcu: 	RCU lockdep checking is enabled.
[    0.000000] ... MAX_LOCKDEP_SUBCLASSES:  8
Debian GNU/Linux 12 server ttyS0
WARNING: a userspace program printed this, not the kernel
"""


def test_clean_console_has_no_splat():
    assert find_splats(CLEAN) == []


def test_injected_warning_is_found():
    text = CLEAN + "[   12.345678] WARNING: CPU: 0 PID: 1 at fs/notify/x.c:10\n"
    found = find_splats(text)
    assert [(kind, n) for n, kind, _ in found] == [("WARNING", 8)]


def test_each_kind_is_found():
    lines = [
        "[    1.0] BUG: KASAN: slab-out-of-bounds in smb2_foo+0x1/0x2",
        "[    1.1] Oops: general protection fault, probably for non-canonical",
        "[    1.2] WARNING: possible circular locking dependency detected",
        "[    1.3] Kernel panic - not syncing: Fatal exception",
        "[    1.4] INFO: task cat:42 blocked for more than 120 seconds.",
        "[    1.5] BUG: sleeping function called from invalid context",
        "[    1.6] kmemleak: 3 new suspected memory leaks",
        "[    1.7] ==================================================================",
        "[    1.8] WARNING: possible recursive locking detected",
        "[    1.9] DEBUG_LOCKS_WARN_ON(1)",
    ]
    found = find_splats("\n".join(lines))
    assert len(found) == 9
    assert {k for _, k, _ in found} >= {"BUG", "Oops", "WARNING", "Kernel panic",
                                       "hung task", "kmemleak"}


def test_ansi_and_carriage_returns_are_ignored():
    assert find_splats("\r\x1b[0m[    2.0] Oops: 0002 [#1] SMP\n")


def test_splats_are_attributed_to_the_test_whose_marker_precedes_them():
    from testbed.suite.splats import splats_by_test
    text = (CLEAN
            + "[    9.000000] BUG: early, before any test\n"
            + "[   10.000000] testbed: begin dnotify_cifs.watched.create\n"
            + "[   10.500000] testbed: end dnotify_cifs.watched.create\n"
            + "[   11.000000] testbed: begin remote_watch.remote.reconnect\n"
            + "[   12.000000] WARNING: CPU: 0 PID: 1 at fs/smb/client/notify.c:1\n")
    found = splats_by_test(text)
    assert [(kind, test) for _, kind, _, test in found] == [
        ("BUG", None), ("WARNING", "remote_watch.remote.reconnect")]
