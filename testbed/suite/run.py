"""`orchestrate.py test`: build client-tests/ on the host, run each program
in the client guest, scan both kernel consoles, print one KTAP document and
the closing `N passed, N failed` line."""

import os
import re
import shlex
import subprocess
import time
from pathlib import Path

from ..common.errors import TestbedError, UsageError
from ..common.progress import fmt_secs, say
from ..capture import slices as capture_slices
from ..kernel import build as kernel_build
from ..machine import client_programs, lifecycle, vm
from . import (faults, junit, ktap, mount_variants, parity, scheduler,
               selection, smbtorture)
from .kernel_checks import entries as check_entries
from .splats import MARK_BEGIN, MARK_END, find_splats

CASE_SECONDS = 1800            # outer bound of one case (the harness has its own)
JOBS = 4                       # cases side by side, at most (test --jobs)
BIN = vm.GUEST_BIN
CLIENT_BIN = vm.CLIENT_BIN


def build_tests(cache, repo):
    """client-tests built (static binaries) into the cache; (bin dir,
    {program: [case, ...]}), the cases as each program lists them (-l),
    the host-driven programs with theirs."""
    out, names = client_programs.build(cache, repo)
    programs = {name: list_cases(out / name) for name in sorted(names)}
    for name, (names, _) in HOST_DRIVEN.items():
        programs[name] = list(names)
    return out, programs


def list_cases(program):
    """The case names a kselftest harness program lists with -l (it only
    prints its table; nothing of the test runs)."""
    try:
        proc = subprocess.run([str(program), "-l"], text=True, timeout=30,
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TestbedError(f"cannot list the cases of {program}: {e}") from None
    return selection.parse_harness_list(proc.stderr + proc.stdout)


def choose(programs, pattern):
    """({program: [case, ...]}, [check, ...]) that `-k PATTERN` picks; the
    health checks (kmemleak, consoles) judge every run. Nothing picked is a
    usage error that lists what there is."""
    chosen = selection.select(programs, pattern)
    checks = [c for c in selection.CHECKS if pattern is None
              or not c.startswith("kunit") or selection.matches(c, pattern)]
    if pattern is not None and not chosen and \
            not any(selection.matches(c, pattern) for c in selection.CHECKS):
        raise UsageError(f"no test matches '{pattern}'; the tests are:",
                         "\n".join(selection.all_ids(programs)))
    return chosen, checks


def list_tests(cache, repo):
    """Print every test id (`test --list`)."""
    _, programs = build_tests(cache, repo)
    for test_id in selection.all_ids(programs):
        print(test_id)


def run_case(run, program, case):
    """(ok, output, reason, counts) of one case of a program in the client,
    between begin and end markers on its kernel log, and failed if a
    console shows a splat meanwhile."""
    test_id = f"{program}.{case}"

    def body():
        # the markers in the same call: one guest round trip per case
        code, out, err = vm.guest_exec(
            run, "client", f"{_begin(test_id)}; TB_TEST_ID={test_id} "
            f"{_tb_env()}{CLIENT_BIN}/{program} -r {case}; rc=$?; "
            f"{_end(test_id, 'rc=$rc')}; exit $rc", timeout=CASE_SECONDS)
        plan, results = ktap.parse(out)
        ok, why = ktap.verdict(plan, results, code)
        if code == 124:
            ok, why = False, f"timed out after {CASE_SECONDS}s"
        text = out
        if err.strip():
            text += "".join(f"# {line}\n" for line in err.splitlines())
        counts = (1, 0, 0) if ok else (0, 1, 0)
        if ok and results and all(r.skipped for r in results):
            counts = (0, 0, 1)
        return ok, text + f"# exit {code}\n", why, counts
    return _marked(run, test_id, body, markers=False)


def _begin(test_id):
    """Shell commands in the client that mark a test's start: on its kernel
    log (to tell splats apart) and on the wire (to cut the capture)."""
    return (f"echo '{MARK_BEGIN}{test_id}' > /dev/kmsg; "
            f"{CLIENT_BIN}/tb-mark begin {test_id}")


def _end(test_id, extra=""):
    """The same for a test's end, with `extra` (KEY=VALUE words, shell
    expanded) on both markers."""
    return (f"{CLIENT_BIN}/tb-mark end {test_id} {extra}; "
            f"echo \"{MARK_END}{test_id} {extra}\" > /dev/kmsg")


def _tb_env():
    """The host's TB_* variables (e.g. TB_CYCLES=10000 for the load case),
    passed to the test programs in the guest."""
    return "".join(f"{k}={shlex.quote(v)} " for k, v in sorted(os.environ.items())
                   if re.fullmatch(r"TB_[A-Z0-9_]+", k))


# Programs the host drives rather than the client guest: their cases, and
# the function that runs one, (ok, output, reason, counts).
HOST_DRIVEN = {
    "faults": (faults.FAULTS, faults.run_fault),
    "mounts": (mount_variants.VARIANTS, mount_variants.run_variant),
    "smbtorture": (smbtorture.SUITES, smbtorture.run_case),
}


# Host-driven programs that run in the server guest only, needing nothing
# of the client or of the main smbd: the suite starts them before the
# client's cases and collects each in its turn. program -> (start(run),
# finish(run, started) -> (ok, output, reason, counts)).
BACKGROUND = {"smbtorture": (smbtorture.start, smbtorture.finish)}


def run_host_case(run, program, case, started=None):
    """(ok, output, reason, counts) of a host-driven case, between markers;
    with `started`, the collection of a BACKGROUND program started so."""
    if started is not None:
        return _marked(run, f"{program}.{case}",
                       lambda: BACKGROUND[program][1](run, started))
    fn = HOST_DRIVEN[program][1]
    return _marked(run, f"{program}.{case}", lambda: fn(run, case))


def _start_background(run, chosen, repeat):
    """{program: what its start returned} for the BACKGROUND programs
    chosen, when other cases run beside them (and once: not with
    --repeat); a program that cannot start runs in its turn instead."""
    started = {}
    if repeat != 1:
        return started
    for program, (start, _) in BACKGROUND.items():
        if program not in chosen or set(chosen) == {program}:
            continue
        try:
            started[program] = start(run)
            say(f"    {program} started in the server guest, beside the "
                "client's cases")
        except (TestbedError, TimeoutError, OSError) as e:
            say(f"    {program} not started beside the cases ({e}): it runs "
                "in its turn")
    return started


def _marked(run, test_id, body, markers=True):
    """Run body() between begin/end markers on the client's kernel log
    (written here, unless body writes them itself); fail it when either
    console gains a splat meanwhile (with cases side by side, every case
    that ran then fails: the markers on the console tell them apart)."""
    offsets = {}
    for role in vm.ROLES:
        console = vm.paths(run, role)["console"]
        offsets[role] = console.stat().st_size if console.exists() else 0
    if markers:
        vm.guest_exec(run, "client", _begin(test_id), timeout=20)
    t0 = time.monotonic()
    ok, text, why, counts = body()
    secs = time.monotonic() - t0
    if markers:
        vm.guest_exec(run, "client", _end(test_id), timeout=20)
    for role in vm.ROLES:
        splats = _new_splats(vm.paths(run, role)["console"], offsets[role])
        if splats:
            ok, why = False, f"{len(splats)} splat line(s) on the {role} console"
            counts = (0, 1, 0)
            text += "".join(f"# {role} console: [{kind}] {line}\n"
                            for _, kind, line in splats[:20])
    text += f"# {test_id}: {secs:.1f}s\n"
    return ok, text, why, counts


def _new_splats(console, offset):
    """The splats a console log gained past `offset` bytes."""
    try:
        with open(console, "rb") as f:
            f.seek(offset)
            return find_splats(f.read().decode(errors="replace"))
    except OSError:
        return []


def _entries(run, state, chosen, checks, repeat, background=None):
    """[(name, fn)] of what runs, in order: the programs (`repeat` times),
    then the checks; a program in `background` ({program: started}) is
    collected in its turn."""
    entries = []
    background = background or {}
    for i in range(1, repeat + 1):
        suffix = f"#{i}" if repeat > 1 else ""
        for program, picked in chosen.items():
            if program in HOST_DRIVEN:
                entries += [(f"{program}.{case}{suffix}",
                             lambda p=program, c=case: run_host_case(
                                 run, p, c, background.get(p)))
                            for case in picked]
                continue
            entries += [(f"{program}.{case}{suffix}",
                         lambda p=program, c=case: run_case(run, p, c))
                        for case in picked]
    return entries + check_entries(run, state["kernel"], checks)


def _slice_capture(run):
    """Cut the run's capture into one file per test at the markers the
    tests sent; a note for the closing line. A capture that cannot be cut
    costs the slices, not the results."""
    try:
        slices = capture_slices.write_slices(
            run / "client.pcap", run / capture_slices.SLICES_DIR)
    except (TestbedError, OSError, subprocess.SubprocessError) as e:
        return f" (not cut into tests: {e})"
    return f", cut into {len(slices)} in {run / capture_slices.SLICES_DIR}"


def _dead_guest(run):
    """Why the testbed cannot go on (a guest gone, or its agent silent for
    10 s), or None when both guests still answer."""
    for role in vm.ROLES:
        try:
            code, _, _ = vm.guest_exec(run, role, "true", timeout=10)
        except (TestbedError, TimeoutError, OSError):
            code = None
        if code != 0:
            return f"the {role} guest died or stopped answering"
    return None


def _console_tail(run, lines=15):
    """The last lines of both consoles, as KTAP diagnostics."""
    text = ""
    for role in vm.ROLES:
        path = vm.paths(run, role)["console"]
        try:
            tail = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            continue
        text += f"# {path.name}, last {len(tail)} lines:\n"
        text += "".join(f"#   {line}\n" for line in tail)
    return text


def _call(run, name, fn, dead, t0):
    """(ok, text, why, counts) of one entry, said as it starts (with the
    suite's time so far, from `t0`); an entry that raises fails alone,
    unless a guest is gone: then `dead` (shared by the entries) says why,
    and every entry after it fails at once but the console checks."""
    say(f"--> {name} (at {fmt_secs(time.monotonic() - t0)})")
    if dead and not name.startswith("console_"):
        return False, "", dead[0], (0, 1, 0)
    try:
        return fn()
    except (TestbedError, TimeoutError, OSError) as e:
        why = f"{name}: {e}"
        gone = _dead_guest(run)
        if not gone:
            return False, "", why, (0, 1, 0)
        dead.append(gone)
        return False, _console_tail(run), gone, (0, 1, 0)
    except Exception as e:      # a bug in a case fails that case only
        return False, "", f"{name}: internal error: {e!r}", (0, 1, 0)


def choose_cases(programs, pattern):
    """choose(), with a whole program expanded into its cases."""
    chosen, checks = choose(programs, pattern)
    return {p: picked or programs[p] for p, picked in chosen.items()}, checks


def _refuse_bench_kernel(cache):
    """The suite judges a run by the debug checkers: a testbed left up with
    the bench's kernel (`up --bench`) would pass what KASAN would fail."""
    state, pids = lifecycle.running(cache)
    if state and all(pids.values()) and \
            not kernel_build.debug_checkers(Path(state["kernel"])):
        raise TestbedError("the testbed runs the bench's kernel, without the "
                           "debug checkers the suite relies on: 'down' first")


def run_suite(cache, repo, pattern=None, extra_config=(), repeat=1,
              kernel_dir=None, jobs=JOBS):
    """Run everything, the cases selection.side_by_side() allows `jobs` at a
    time; print KTAP; return True when all passed."""
    t0 = time.monotonic()
    built = None
    if (client_programs.ksft_dir(cache) / "kselftest_harness.h").is_file():
        built = build_tests(cache, repo)    # a bad -k fails before booting
        choose(built[1], pattern)
    _refuse_bench_kernel(cache)
    state = lifecycle.up(cache, repo, extra_config, kernel_dir)
    t_up = time.monotonic()
    run = Path(state["run"])
    bindir, programs = built or build_tests(cache, repo)
    chosen, checks = choose_cases(programs, pattern)
    client_programs.stage(run, repo, bindir)
    report = ktap.Report()
    background = _start_background(run, chosen, repeat)
    entries = _entries(run, state, chosen, checks, repeat, background)
    out_lines = [report.header(len(entries))]
    print(out_lines[0], flush=True)
    dead = []                   # why the testbed cannot go on, once known
    if jobs > 1:
        # those that may run side by side first, all together (one wait
        # for the slowest of them, not one at each case that must run
        # alone), the longest of them first
        entries.sort(key=lambda entry: selection.run_rank(entry[0]))
    together = [(name, fn, selection.side_by_side(name))
                for name, fn in entries]
    results = scheduler.in_order(
        together, jobs, lambda name, fn: _call(run, name, fn, dead, t0))
    for number, (name, (ok, text, why, counts)) in enumerate(results, 1):
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
    say(f"the suite took {fmt_secs(time.monotonic() - t0)}, "
        f"{fmt_secs(time.monotonic() - t_up)} of it after 'up'")
    say(f"results: {run / 'results.ktap'} (JUnit: results.xml); "
        f"capture: {run / 'client.pcap'}{_slice_capture(run)}")
    if parity.write(document, run / "parity.md"):
        say(f"parity table: {run / 'parity.md'}")
    if dead:
        say(f"{dead[0]}: stopping the testbed")
        lifecycle.down(cache)
    return report.counts()[1] == 0 and report.counts()[0] > 0
