from testbed.suite import smbtorture

PASSED = """\
smbtorture 4.17.12-Debian
Using seed 1764778800
time: 2026-12-03 16:30:01.123456
test: dir
time: 2026-12-03 16:30:04.654321
success: dir
"""

FAILED = """\
test: overflow
failure: overflow [
../../source4/torture/smb2/notify.c:2071: Incorrect status NT_STATUS_OK
]
"""

KNOWN = """\
test: rec
failure: rec [
(../../source4/torture/smb2/notify.c:644) wrong value for notify.smb2.out.num_changes  0xb should be 0x9
]
"""


def test_success_line_passes():
    assert smbtorture.verdict("dir", PASSED) == (True, "", (1, 0, 0))


def test_failure_line_fails_with_the_verdict_named():
    ok, why, counts = smbtorture.verdict("overflow", FAILED)
    assert not ok and "failure" in why and counts == (0, 1, 0)


def test_no_verdict_for_the_case_fails():
    ok, why, _ = smbtorture.verdict("tcon", PASSED)
    assert not ok and "no verdict" in why


def test_skip_counts_as_skipped():
    assert smbtorture.verdict("tcp", "skip: tcp [\nno\n]\n") == \
        (True, "", (0, 0, 1))


def test_prefixed_names_are_found_too():
    assert smbtorture.parse_verdicts("success: smb2.notify.dir\n") == \
        {"smb2.notify.dir": "success"}


def test_a_known_failure_failing_its_known_way_passes():
    assert smbtorture.verdict("rec", KNOWN) == (True, "", (1, 0, 0))


def test_a_known_failure_failing_another_way_fails():
    other = KNOWN.replace("0xb should be 0x9", "0x1 should be 0x9")
    assert not smbtorture.verdict("rec", other)[0]


def test_an_unknown_case_failing_that_way_fails():
    assert not smbtorture.verdict("dir", KNOWN.replace("rec", "dir"))[0]


def test_one_run_gives_a_result_per_case_and_unreached_ones_fail():
    text, counts = smbtorture.ktap_of(PASSED + FAILED + KNOWN)
    lines = text.splitlines()
    assert lines[:2] == ["KTAP version 1", f"1..{len(smbtorture.CASES)}"]
    assert "ok 3 dir" in lines
    assert "ok 17 rec" in lines                 # its known failure
    assert "not ok 18 overflow" in lines
    assert "not ok 1 valid-req" in lines        # never reached
    assert counts == (2, len(smbtorture.CASES) - 2, 0)
    assert any("expected failure here" in line for line in lines)
