import xml.etree.ElementTree as ET

from testbed.suite import junit
from testbed.suite import ktap

SUITE = """\
KTAP version 1
1..4
    TAP version 13
    1..3
    ok 1 w.create
    not ok 2 w.silent
    ok 3 w.later # SKIP no server
    # w.c:80:silent:Expected 0 == got_signal
not ok 1 dnotify_cifs
    TAP version 13
    1..2
    ok 1 w.a
    # crashed after the first case
not ok 2 crashy
    KTAP version 1
    1..1
        KTAP version 1
        1..2
        ok 1 parse_one
        ok 2 parse_two
    ok 1 cifs_notify
ok 3 kunit_boot
    # client-console.log: 10 lines, no splat
ok 4 console_client_no_splat
3 passed... not a result line
"""


def suites(xml):
    root = ET.fromstring(xml)
    return root, {s.get("name"): s for s in root.iter("testsuite")}


def test_one_testsuite_per_top_level_test_and_cases_inside():
    root, by_name = suites(junit.from_ktap(SUITE, seconds=12.34))
    assert list(by_name) == ["dnotify_cifs", "crashy", "kunit_boot",
                             "console_client_no_splat"]
    cifs = by_name["dnotify_cifs"]
    assert (cifs.get("tests"), cifs.get("failures"), cifs.get("skipped")) == \
        ("3", "1", "1")
    failed = [c.get("name") for c in cifs.iter("testcase")
              if c.find("failure") is not None]
    assert failed == ["w.silent"]
    assert "Expected 0 == got_signal" in cifs.find("testcase/failure").text
    assert root.get("time") == "12.3"


def test_kunit_cases_are_counted_under_their_suite():
    _, by_name = suites(junit.from_ktap(SUITE))
    cases = list(by_name["kunit_boot"].iter("testcase"))
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("kunit_boot.cifs_notify", "parse_one"),
        ("kunit_boot.cifs_notify", "parse_two")]


def test_a_program_that_fails_without_a_failing_case_adds_one():
    _, by_name = suites(junit.from_ktap(SUITE))
    crashy = by_name["crashy"]
    assert crashy.get("tests") == "2" and crashy.get("failures") == "1"
    assert [c.get("name") for c in crashy.iter("testcase")][-1] == "program"


def test_totals_match_the_suite_counts():
    root, _ = suites(junit.from_ktap(SUITE))
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == \
        ("8", "2", "1")


def test_a_check_without_cases_is_its_own_case():
    _, by_name = suites(junit.from_ktap(SUITE))
    cases = list(by_name["console_client_no_splat"].iter("testcase"))
    assert [c.get("name") for c in cases] == ["console_client_no_splat"]
    assert ktap.parse(SUITE)[0] == 4


def test_empty_document_gives_an_empty_report():
    root, by_name = suites(junit.from_ktap(""))
    assert by_name == {} and root.get("tests") == "0"


def test_a_cases_duration_becomes_its_time():
    doc = ("KTAP version 1\n1..1\n    TAP version 13\n    1..1\n"
           "    ok 1 w.create\n    # dnotify_cifs.w.create: 4.2s\n"
           "ok 1 dnotify_cifs.w.create\n")
    root, by_name = suites(junit.from_ktap(doc))
    assert by_name["dnotify_cifs.w.create"].get("time") == "4.2"
    assert root.find(".//testcase").get("time") == "4.2"
