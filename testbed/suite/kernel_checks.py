"""The health checks that judge every run after its cases: KUnit's results
from the client's boot, a kmemleak scan in each guest (both at once), and
a splat scan of each kernel console."""

import time
from pathlib import Path

from ..common.errors import TestbedError
from ..machine import vm
from . import ktap
from .splats import splats_by_test


def scan_console(run, role):
    """(ok, output, reason, counts) of the splat scan of a console log."""
    path = vm.paths(run, role)["console"]
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False, "", f"no console log at {path}", (0, 1, 0)
    splats = splats_by_test(text)
    if not splats:
        return (True, f"# {path.name}: {len(text.splitlines())} lines, "
                "no splat\n", "", (1, 0, 0))
    lines = "".join(f"# {path.name}:{n}: [{kind}] (during {test or 'boot'}) "
                    f"{line}\n" for n, kind, line, test in splats[:20])
    return False, lines, f"{len(splats)} splat line(s) in {path.name}", \
        (0, 1, 0)


KMEMLEAK_CMD = ("mountpoint -q /sys/kernel/debug || "
                "mount -t debugfs none /sys/kernel/debug; "
                "[ -e /sys/kernel/debug/kmemleak ] || exit 3; "
                "echo scan > /sys/kernel/debug/kmemleak; sleep 1; "
                "echo scan > /sys/kernel/debug/kmemleak; "
                "cat /sys/kernel/debug/kmemleak")


KMEMLEAK_SECONDS = 300


def kmemleak_start(run, role):
    """Start the kmemleak scans of a guest (see kmemleak_check()): both
    guests scan at once, each on its own CPU."""
    return vm.guest_spawn(run, role, KMEMLEAK_CMD, KMEMLEAK_SECONDS), \
        time.monotonic()


def kmemleak_check(run, role, started=None):
    """(ok, output, reason, counts) of a kmemleak scan in a guest, after the
    tests (two scans: an object must stay unreferenced across both); with
    `started`, of the scans kmemleak_start() started."""
    pid, t0 = started or kmemleak_start(run, role)
    code, out, err = vm.guest_wait(run, role, pid, t0 + KMEMLEAK_SECONDS + 15)
    if code == 3:
        return True, "# kmemleak not in this kernel\n", "", (0, 0, 1)
    if code != 0:
        return False, err, f"kmemleak scan failed (exit {code})", (0, 1, 0)
    leaks = out.count("unreferenced object")
    if leaks:
        text = "".join(f"# {line}\n" for line in out.splitlines()[:60])
        return False, text, f"{leaks} leaked object(s)", (0, 1, 0)
    return True, "# kmemleak: no leaks\n", "", (1, 0, 0)


def kunit_results(run, kernel_dir):
    """(ok, output, reason, counts) of the KUnit tests the client's kernel
    ran at boot; None when that kernel has no KUnit."""
    config = Path(kernel_dir) / "config"
    if "CONFIG_KUNIT=y" not in config.read_text(errors="replace"):
        return None
    text = vm.paths(run, "client")["console"].read_text(errors="replace")
    block = ktap.kunit_from_console(text)
    if block is None:
        return False, "", "no KUnit results on the client console", (0, 1, 0)
    plan, results = ktap.parse(block)
    ok, why = ktap.verdict(plan, results)
    counts = ktap.subtest_counts(block)
    if not ok and counts[1] == 0:
        counts = (counts[0], 1, counts[2])
    return ok, block, why, counts


def _kmemleak_in_turn(run, role, scans, start_all):
    """kmemleak_check() of `role`; the first of these checks starts the
    scans of every guest with a kmemleak check in `start_all` (into
    `scans`), so that the guests scan together."""
    for check in start_all:
        if check.startswith("kmemleak_"):
            r = check.split("_", 1)[1]
            try:
                scans[r] = kmemleak_start(run, r)
            except (TestbedError, TimeoutError, OSError):
                pass                # its own check starts it again, and fails
    return kmemleak_check(run, role, scans.pop(role, None))


def entries(run, kernel_dir, checks):
    """[(name, fn)] of the chosen `checks` (cases.CHECKS names), in order;
    KUnit's only when the kernel has KUnit."""
    out, scans = [], {}
    for check in checks:
        if check == "kunit_boot":
            if kunit_results(run, kernel_dir) is not None:
                out.append((check, lambda: kunit_results(run, kernel_dir)))
        elif check.startswith("kmemleak_"):
            role = check.split("_", 1)[1]
            first = not any(n.startswith("kmemleak_") for n, _ in out)
            out.append((check, lambda r=role, f=first: _kmemleak_in_turn(
                run, r, scans, checks if f else ())))
        else:
            role = check.split("_")[1]
            out.append((check, lambda r=role: scan_console(run, r)))
    return out
