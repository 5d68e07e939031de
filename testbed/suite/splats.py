"""Scanning a guest's kernel console for splats: any of these lines fails
the run, whatever the tests said."""

import re

SPLAT_PATTERNS = [
    ("BUG", re.compile(r"\bBUG:")),
    ("WARNING", re.compile(r"\bWARNING:")),
    ("Oops", re.compile(r"\bOops\b")),
    ("KASAN", re.compile(r"\bKASAN\b")),
    ("lockdep", re.compile(r"possible (circular|recursive) locking|"
                           r"inconsistent lock state|suspicious RCU usage|"
                           r"possible irq lock inversion|"
                           r"bad unlock balance|held lock freed|"
                           r"lock held when returning to user space|"
                           r"DEBUG_LOCKS_WARN_ON|lockdep is turned off")),
    ("Kernel panic", re.compile(r"Kernel panic")),
    ("hung task", re.compile(r"blocked for more than \d+ seconds|hung_task|"
                             r"hung task")),
    ("kmemleak", re.compile(r"kmemleak: \d+ new suspected memory leaks")),
    ("UBSAN", re.compile(r"UBSAN:")),
]

# Lines that name a checker without being a report of it (boot banners).
BENIGN = [
    re.compile(r"Lock dependency validator"),
    re.compile(r"lockdep: fixing up alternatives"),
    re.compile(r"KernelAddressSanitizer initialized"),
    re.compile(r"kasan: .*(enabled|initialized)", re.I),
    re.compile(r"\.\.\. MAX_LOCKDEP_"),
    re.compile(r"\.\.\. (MAX_LOCK_DEPTH|CHAINHASH_SIZE|CLASSHASH_SIZE)"),
    re.compile(r"in-kernel per-lock|per task-struct memory footprint"),
    re.compile(r"memory used by lock dependency info"),
    re.compile(r"hung_task_timeout_secs"),
]


# Kernel lines carry the printk timestamp (CONFIG_PRINTK_TIME): only they
# are scanned, so a service printing "WARNING:" to the console is no splat.
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")


def strip_ansi(line):
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line)


def find_splats(text):
    """[(line number, kind, line)] for each splat line in a console log."""
    found = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = strip_ansi(raw).lstrip("\r")
        if not KERNEL_LINE.match(line):
            continue
        if any(b.search(line) for b in BENIGN):
            continue
        for kind, pat in SPLAT_PATTERNS:
            if pat.search(line):
                found.append((n, kind, line.strip()))
                break
    return found


# What the suite writes to the client's /dev/kmsg before and after a test.
MARK_BEGIN = "testbed: begin "
MARK_END = "testbed: end "


def splats_by_test(text):
    """[(line number, kind, line, test or None)]: each splat with the test
    whose begin marker precedes it (None before the first test)."""
    current, marks = None, {}
    for n, raw in enumerate(text.splitlines(), 1):
        i = raw.find(MARK_BEGIN)
        if i >= 0:
            current = raw[i + len(MARK_BEGIN):].split()[0] \
                if raw[i + len(MARK_BEGIN):].split() else None
        marks[n] = current
    return [(n, kind, line, marks.get(n)) for n, kind, line in find_splats(text)]
