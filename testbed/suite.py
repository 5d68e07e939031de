"""`orchestrate.py test`: build client-tests/ on the host, run each program
in the client guest, scan both kernel consoles, print one KTAP document and
the closing `N passed, N failed` line."""

import fnmatch
import shutil
import time
from pathlib import Path

from . import junit, kernel, ktap, session, vm
from .console import find_splats
from .errors import TestbedError
from .network import SERVER_IP
from .steps import Phase, capture, run_logged, say

PROGRAM_SECONDS = 600          # bound for one test program under TCG
SERVERD_PORT = 7070


def build_tests(cache, repo, run):
    """make client-tests into the run's staging bin/ (static binaries)."""
    tree = kernel.tree_dir(cache, kernel.source_version())
    ksft = tree / "tools/testing/selftests"
    if not (ksft / "kselftest_harness.h").is_file():
        raise TestbedError(f"no kselftest_harness.h under {ksft}: run 'up'")
    out = Path(run) / "staging" / "bin"
    log = cache / "logs" / "client-tests.log"
    log.write_text("")
    run_logged(["make", "-C", repo / "client-tests", f"KSFT_DIR={ksft}",
                f"OUT={out}"], log, "building client-tests")
    names = capture(["make", "-s", "-C", repo / "client-tests", "list",
                     f"KSFT_DIR={ksft}"]).split()
    return sorted(names)


def start_serverd(run, uid):
    """tb-serverd on the server guest (idempotent), for server-side changes
    made as the share's user `uid`."""
    code, out, err = vm.guest_exec(
        run, "server", "systemctl is-active -q tb-serverd || systemd-run "
        "--quiet --unit=tb-serverd /mnt/testbed/bin/tb-serverd "
        f"{SERVER_IP} {SERVERD_PORT} {uid}", timeout=30)
    if code != 0:
        raise TestbedError(f"tb-serverd did not start on the server: {err}")


def run_program(run, name):
    """(ok, output, reason, case counts) of one program in the client."""
    t0 = time.monotonic()
    code, out, err = vm.guest_exec(run, "client", f"/mnt/testbed/bin/{name}",
                                   timeout=PROGRAM_SECONDS)
    secs = time.monotonic() - t0
    plan, results = ktap.parse(out)
    ok, why = ktap.verdict(plan, results, code)
    if code == 124:
        ok, why = False, f"timed out after {PROGRAM_SECONDS}s"
    text = out
    if err.strip():
        text += "".join(f"# {line}\n" for line in err.splitlines())
    text += f"# {name}: {len(results)} cases, exit {code}, {secs:.1f}s\n"
    return ok, text, why, ktap.case_counts(results, ok)


def scan_console(run, role):
    """(ok, output, reason, counts) of the splat scan of a console log."""
    path = vm.paths(run, role)["console"]
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False, "", f"no console log at {path}", (0, 1, 0)
    splats = find_splats(text)
    if not splats:
        return (True, f"# {path.name}: {len(text.splitlines())} lines, "
                "no splat\n", "", (1, 0, 0))
    lines = "".join(f"# {path.name}:{n}: [{kind}] {line}\n"
                    for n, kind, line in splats[:20])
    return False, lines, f"{len(splats)} splat line(s) in {path.name}", \
        (0, 1, 0)


KMEMLEAK_CMD = ("mountpoint -q /sys/kernel/debug || "
                "mount -t debugfs none /sys/kernel/debug; "
                "[ -e /sys/kernel/debug/kmemleak ] || exit 3; "
                "echo scan > /sys/kernel/debug/kmemleak; sleep 1; "
                "echo scan > /sys/kernel/debug/kmemleak; "
                "cat /sys/kernel/debug/kmemleak")


def kmemleak_check(run, role):
    """(ok, output, reason, counts) of a kmemleak scan in a guest, after the
    tests (two scans: an object must stay unreferenced across both)."""
    code, out, err = vm.guest_exec(run, role, KMEMLEAK_CMD, timeout=300)
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


def run_suite(cache, repo, pattern=None, extra_config=()):
    """Run everything; print KTAP; return True when all passed."""
    t0 = time.monotonic()
    state = session.up(cache, repo, extra_config)
    run = Path(state["run"])
    with Phase("building client-tests"):
        names = build_tests(cache, repo, run)
    if pattern:
        names = [n for n in names if fnmatch.fnmatch(n, pattern)
                 or pattern in n]
        if not names:
            raise TestbedError(f"no client test matches '{pattern}'")
    start_serverd(run, session.read_conf(repo)["SMB_UID"])
    report = ktap.Report()
    entries = [(n, lambda n=n: run_program(run, n)) for n in names]
    if not pattern and kunit_results(run, state["kernel"]) is not None:
        entries.append(("kunit_boot", lambda: kunit_results(run, state["kernel"])))
    entries += [(f"kmemleak_{role}", lambda r=role: kmemleak_check(run, r))
                for role in vm.ROLES]
    entries += [(f"console_{role}_no_splat", lambda r=role: scan_console(run, r))
                for role in vm.ROLES]
    out_lines = [report.header(len(entries))]
    print(out_lines[0], flush=True)
    for number, (name, fn) in enumerate(entries, 1):
        say(f"--> {name}")
        ok, text, why, counts = fn()
        if not ok and why:
            text += f"# FAIL: {why}\n"
        report.add(counts)
        line = report.line(number, name, ok, text)
        print(line, flush=True)
        out_lines.append(line)
    closing = report.closing()
    out_lines.append(closing)
    document = "\n".join(out_lines) + "\n"
    (run / "results.ktap").write_text(document)
    (run / "results.xml").write_text(
        junit.from_ktap(document, seconds=time.monotonic() - t0))
    print(closing, flush=True)
    say(f"results: {run / 'results.ktap'} (JUnit: results.xml); "
        f"capture: {run / 'client.pcap'}")
    return report.counts()[1] == 0 and report.counts()[0] > 0
