"""Test case names and selection: what each client-test program holds (its
kselftest harness lists it with -l), the suite's own checks, and which of
them a `-k PATTERN` picks."""

import fnmatch

# The suite's checks after the programs, in the order they run. The server
# runs Debian's kernel, without kmemleak: only the client's kernel is scanned
# (kernel_checks.py can scan both; each guest's console is scanned for splats).
CHECKS = ("kunit_boot", "kmemleak_client",
          "console_server_no_splat", "console_client_no_splat")


# What may run side by side (`test --jobs`): cases that each watch a
# directory made for them and change nothing another case watches or
# counts; a mount of their own is theirs alone (multiuser's, tmpfs's, a
# mount variant's). Not the cases that mount or unmount what others use
# (optin's /mnt/share-local, the signing variants' /mnt/signed), watch the
# share's root (a change anywhere signals it), count what the whole client
# holds (DebugData's watches, Stats, the watch cap), drop the client's
# connections (tb-serverd's disconnect: multichannel, remote_watch),
# inject faults (faults, fail_function) or load the guest (load_cifs,
# inotify_cifs' burst).
# Nor the peers: they start Python (watchmedo) and smbclient, whose start
# beside four other cases outlasted their 15 s bounds (seen in a run).
# Patterns as for -k; a repeat's "#N" is ignored.
SIDE_BY_SIDE = ("check_flags.*", "dnotify_cifs.*", "dnotify_matrix.*",
                "dnotify_semantics.*", "dnotify_tmpfs.*",
                "fsnotify_groups.*", "inotify_cifs.*", "inotify_self.*",
                "mounts.*",
                "multiuser_cifs.*", "share_basics.*")
NOT_SIDE_BY_SIDE = ("dnotify_semantics.sem.share_root_is_watched",
                    "multiuser_cifs.mu.filesystem_mark_*",
                    "multiuser_cifs.mu.child_of_a_report_*",
                    "multiuser_cifs.mu.killed_f_notify_*",
                    "multiuser_cifs.mu.umount_does_not_wait_*",
                    "inotify_cifs.inotify.burst_*", "inotify_cifs.optin.*",
                    "inotify_self.self.file_heard_after_a_reconnect_*",
                    "inotify_self.self.dir_closed_to_the_reopen_*",
                    "inotify_self.self.file_with_another_link_removed_beside_*",
                    "mounts.multichannel")
# Of those, the longest (10 cases each) start first: a batch that ended
# with them would run them with fewer beside them.
SIDE_BY_SIDE_FIRST = ("mounts.*",)


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


def _listed(test_id, patterns):
    """Whether a case (a repeat's "#N" ignored) matches one of patterns."""
    test_id = test_id.split("#", 1)[0]
    return any(fnmatch.fnmatchcase(test_id, p) for p in patterns)


def side_by_side(test_id):
    """Whether a case may run beside others (SIDE_BY_SIDE)."""
    return _listed(test_id, SIDE_BY_SIDE) and \
        not _listed(test_id, NOT_SIDE_BY_SIDE)


def run_rank(test_id):
    """Where a case runs when cases run side by side: 0 the long ones
    that may (SIDE_BY_SIDE_FIRST), 1 the others that may, 2 those that
    run alone, after them all."""
    if not side_by_side(test_id):
        return 2
    return 0 if _listed(test_id, SIDE_BY_SIDE_FIRST) else 1
