from testbed.suite import ktap

HARNESS = """\
TAP version 13
1..3
# Starting 3 tests from 2 test cases.
#  RUN           tmpfs_dir.create_signals_with_si_fd ...
#            OK  tmpfs_dir.create_signals_with_si_fd
ok 1 tmpfs_dir.create_signals_with_si_fd
#  RUN           tmpfs_dir.change_outside_mask_is_silent ...
# dnotify_tmpfs.c:80:change_outside_mask_is_silent:Expected -1 (-1) == wait_sig
not ok 2 tmpfs_dir.change_outside_mask_is_silent
ok 3 tmpfs_dir.oneshot_fires_once # SKIP not today
# FAILED: 1 / 3 tests passed.
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""


def test_parse_harness_output():
    plan, results = ktap.parse(HARNESS)
    assert plan == 3
    assert [(r.ok, r.number, r.name) for r in results] == [
        (True, 1, "tmpfs_dir.create_signals_with_si_fd"),
        (False, 2, "tmpfs_dir.change_outside_mask_is_silent"),
        (True, 3, "tmpfs_dir.oneshot_fires_once")]
    assert results[2].skipped and results[2].reason == "not today"


def test_verdict_fails_on_a_failed_case():
    ok, why = ktap.verdict(*ktap.parse(HARNESS), exit_code=1)
    assert not ok and "change_outside_mask_is_silent" in why


def test_verdict_fails_on_missing_results_or_short_plan():
    assert not ktap.verdict(None, [], 0)[0]
    plan, results = ktap.parse("1..3\nok 1 a\nok 2 b\n")
    ok, why = ktap.verdict(plan, results, 0)
    assert not ok and "planned 3" in why


def test_verdict_fails_on_crash_exit_even_if_all_ok():
    plan, results = ktap.parse("1..1\nok 1 a\n")
    assert ktap.verdict(plan, results, 0) == (True, "")
    assert not ktap.verdict(plan, results, 139)[0]


def test_nested_subtests_stay_under_parent():
    text = "KTAP version 1\n1..1\n    KTAP version 1\n    1..2\n" \
           "    ok 1 a\n    not ok 2 b\nnot ok 1 suite\n"
    plan, results = ktap.parse(text)
    assert plan == 1 and len(results) == 1 and not results[0].ok


def test_report_counts_cases_and_closing():
    r = ktap.Report()
    plan, results = ktap.parse(HARNESS)
    r.add(ktap.case_counts(results, False))
    r.add((1, 0, 0))
    assert r.counts() == (2, 1, 1)
    assert r.closing() == "2 passed, 1 failed, 1 skipped"


def test_a_crash_without_failed_case_counts_one_failure():
    plan, results = ktap.parse("1..2\nok 1 a\n")
    ok, _ = ktap.verdict(plan, results, 139)
    assert ktap.case_counts(results, ok) == (1, 1, 0)


def test_report_line_nests_program_output():
    line = ktap.Report.line(2, "two", False, "ok 1 inner\n")
    assert line.splitlines() == ["    ok 1 inner", "not ok 2 two"]
    plan, results = ktap.parse(ktap.Report.header(2) + "\nok 1 one\n" + line)
    assert plan == 2 and [x.ok for x in results] == [True, False]


CONSOLE = """\
[    0.100000] Linux version 6.12.118-testbed
[    1.000000] KTAP version 1
[    1.000001] 1..1
[    1.000002]     KTAP version 1
[    1.000003]     # Subtest: cifs_notify
[    1.000004]     # module: cifs
[    1.000005]     1..3
[    1.000006]     ok 1 notify_parse_one_entry
[    1.000007]     not ok 2 notify_parse_empty
[    1.000008]     ok 3 notify_parse_unaligned # SKIP no
[    1.000009] # cifs_notify: pass:1 fail:1 skip:1 total:3
[    1.000010] not ok 1 cifs_notify
[    2.000000] systemd[1]: ok 7 not ktap
"""


def test_kunit_block_is_cut_from_the_console():
    block = ktap.kunit_from_console(CONSOLE)
    assert block.startswith("KTAP version 1\n1..1\n")
    assert block.rstrip().endswith("not ok 1 cifs_notify")
    plan, results = ktap.parse(block)
    assert plan == 1 and not results[0].ok
    assert ktap.subtest_counts(block) == (1, 1, 1)


def test_no_kunit_on_console():
    assert ktap.kunit_from_console("[    0.1] Linux version\n") is None
