"""Test case names and selection: what each client-test program holds (its
kselftest harness lists it with -l), the suite's own checks, and which of
them a `-k PATTERN` picks."""

import fnmatch

# The suite's checks after the programs, in the order they run. The server
# runs Debian's kernel, without kmemleak: only the client's kernel is scanned
# (checks.py can scan both; each guest's console is scanned for splats).
CHECKS = ("kunit_boot", "kmemleak_client",
          "console_server_no_splat", "console_client_no_splat")


def parse_harness_list(text):
    """The case names ("fixture.test", "fixture.variant.test") in the table
    a kselftest_harness.h program prints with -l: per fixture, a column of
    variants and a column of tests, each test run once per variant."""
    cases = []
    fixture, variants, tests = None, [], []

    def flush():
        for v in variants or [""]:
            for t in tests:
                cases.append(f"{fixture}.{v}.{t}" if v else f"{fixture}.{t}")

    for line in text.splitlines():
        if line.startswith("#") or line.startswith("---"):
            if line.startswith("---") and fixture:
                flush()
                fixture, variants, tests = None, [], []
            continue
        f, v, t = line[:20].strip(), line[21:46].strip(), line[47:].strip()
        if f:
            if fixture:
                flush()
            fixture, variants, tests = f, [], []
        if v:
            variants.append(v)
        if t:
            tests.append(t)
    if fixture:
        flush()
    return cases


def matches(case_id, pattern):
    """Whether `-k PATTERN` picks a case: a shell pattern over the whole id,
    or a plain substring of it; several, separated by commas, pick what
    any of them picks."""
    return any(fnmatch.fnmatchcase(case_id, p) or p in case_id
               for p in pattern.split(",") if p)


def select(programs, pattern):
    """{program: [case, ...]} of the program cases `pattern` picks (all of
    them without a pattern); an empty list means the whole program."""
    chosen = {}
    for program, cases in programs.items():
        if pattern is None or matches(program, pattern):
            chosen[program] = []
            continue
        picked = [c for c in cases if matches(f"{program}.{c}", pattern)]
        if picked:
            chosen[program] = picked
    return chosen


def all_ids(programs, checks=CHECKS):
    """Every selectable id: each program, each of its cases, each check."""
    ids = []
    for program, cases in programs.items():
        ids.append(program)
        ids.extend(f"{program}.{c}" for c in cases)
    ids.extend(checks)
    return ids
