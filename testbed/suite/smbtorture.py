"""Samba's own SMB2 change-notify tests (smbtorture smb2.notify, from the
samba-testsuite package) run in the server guest, each of its cases a
result of its own: when one of ours fails and these pass, the server is
not the reason. They run
against the server's smbd for them (port 4446, smb-torture.conf), which
notifies as the main one does but without the kernel's inotify, as Samba's
own selftest runs them. The host drives them; the case names are those of
Samba 4.17's source4/torture/smb2/notify.c."""

import re
import time

from ..machine import vm

# The suite's one case, run by one smbtorture.
SUITES = ("smb2.notify",)

# The smb2.notify suite of Debian 12's Samba, in its own order.
CASES = ("valid-req", "tcon", "dir", "mask", "tdis", "tdis1", "mask-change",
         "close", "logoff", "session-reconnect", "invalid-reauth", "tree",
         "basedir", "double", "file", "tcp", "rec", "overflow", "rmdir1",
         "rmdir2", "rmdir3", "rmdir4", "handle-permissions")

SUITE_SECONDS = 900

# Cases that fail here for the server's timing, not for anything of ours:
# each assumes the server acts within a moment that an emulated (TCG)
# server guest does not meet. A case passes when it fails exactly this
# way (or passes outright); any other failure fails it.
KNOWN_FAILURES = {
    "valid-req": (
        r"notify\.c:\d+\) wrong value for n\.out\.num_changes +0x[12] "
        r"should be 0x3",
        "expects the 3 changes of one create to reach one pending request; "
        "under TCG smbd answers with the first before the others arrive"),
    "rec": (
        r"notify\.c:\d+\) wrong value for notify\.smb2\.out\.num_changes "
        r"+0xb should be 0x9",
        "sleeps 200 ms so that its two rmdirs come after the answer of 9 "
        "buffered changes; under TCG they make it in (11)"),
}

# smbtorture's subunit-style verdict lines: "success: NAME",
# "failure: NAME [", "skip: NAME [", "error: NAME ["
_VERDICT = re.compile(r"^(success|failure|skip|error|xfail|uxsuccess): "
                      r"(\S+)", re.M)


def parse_verdicts(text):
    """{test name: verdict} from smbtorture's output."""
    return {m.group(2): m.group(1) for m in _VERDICT.finditer(text)}


def verdict(name, text):
    """(ok, reason, counts) of one smbtorture case from its part of the
    output: it passes when smbtorture says success, or when it fails
    exactly as KNOWN_FAILURES says it does here."""
    found = parse_verdicts(text)
    got = found.get(name) or found.get(f"smb2.notify.{name}")
    if got == "skip":
        return True, "", (0, 0, 1)
    if got == "success":
        return True, "", (1, 0, 0)
    if got == "failure" and name in KNOWN_FAILURES and \
            re.search(KNOWN_FAILURES[name][0], text):
        return True, "", (1, 0, 0)
    if got is None:
        return False, "smbtorture gave no verdict for it", (0, 1, 0)
    return False, f"smbtorture: {got}", (0, 1, 0)


def split_cases(text):
    """{case name: its part of smbtorture's output}, from its "test: NAME"
    line to the next one."""
    parts, name = {}, None
    for line in text.splitlines(keepends=True):
        m = re.match(r"^test: (\S+)", line)
        if m:
            name = m.group(1)
            parts[name] = ""
        if name:
            parts[name] += line
    return parts


def ktap_of(text):
    """(KTAP lines for each case of smb2.notify, (passed, failed, skipped)):
    each case judged on its own part of the output; a case smbtorture
    never reached fails."""
    parts = split_cases(text)
    lines = ["KTAP version 1", f"1..{len(CASES)}"]
    counts = [0, 0, 0]
    for i, name in enumerate(CASES, 1):
        part = parts.get(name, "")
        ok, why, c = verdict(name, part)
        counts = [a + b for a, b in zip(counts, c)]
        if not ok or name in KNOWN_FAILURES and "failure: " in part:
            lines += [f"# {line}" for line in part.splitlines()
                      if not line.startswith("time: ")]
        if ok and "failure: " in part:
            lines.append(f"# expected failure here: {KNOWN_FAILURES[name][1]}")
        if not ok:
            lines.append(f"# {why}")
        skip = " # SKIP" if c[2] else ""
        lines.append(f"{'ok' if ok else 'not ok'} {i} {name}{skip}")
    return "\n".join(lines) + "\n", tuple(counts)


# An smbtorture left by an interrupted run (it runs in the background) is
# ended first: two would share smbd-torture and its directories.
COMMAND = ("pkill -x smbtorture; . /mnt/testbed/testbed.conf; t0=$(date +%s); "
           "smbtorture //127.0.0.1/torture -p 4446 "
           "-U \"$SMB_USER%$SMB_PASS\" --option=torture:numops=10 smb2.notify "
           "2>&1; rc=$?; echo \"smbtorture-seconds: $(($(date +%s) - t0))\"; "
           "exit $rc")
_SECONDS = re.compile(r"^smbtorture-seconds: (\d+)$", re.M)


def start(run):
    """Start the whole smb2.notify suite in the server guest and return at
    once: (its pid there, when it started). It needs nothing of the
    client and nothing of the main smbd, so the suite runs it beside the
    client's cases, on the server's CPU they leave idle."""
    return vm.guest_spawn(run, "server", COMMAND, SUITE_SECONDS), \
        time.monotonic()


def finish(run, started):
    """(ok, output, reason, counts) of the suite start() started, once it
    has ended: its cases nested in the KTAP."""
    pid, t0 = started
    code, out, err = vm.guest_wait(run, "server", pid,
                                   t0 + SUITE_SECONDS + 15)
    took = _SECONDS.search(out)
    ran = (f"# smbtorture ran {took.group(1)}s, collected after "
           f"{time.monotonic() - t0:.0f}s\n") if took else ""
    if code == 124:
        return False, out + err + ran, f"timed out after {SUITE_SECONDS}s", \
            (0, 1, 0)
    text, counts = ktap_of(out + err)
    ok = counts[1] == 0 and sum(counts) == len(CASES)
    return ok, text + ran, "" if ok else \
        f"{counts[1]} smb2.notify case(s) failed", counts


def run_case(run, name):
    """(ok, output, reason, counts) of the whole smb2.notify suite, run as
    the share's user against smbtorture's smbd on loopback, in one
    smbtorture (one start-up, not 23), its cases nested in the KTAP."""
    return finish(run, start(run))
