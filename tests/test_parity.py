"""The parity table made of parity.c's lines."""

from testbed.suite import parity

KTAP = """ok 1 parity.parity.create_disk.same_events_or_named
    # # parity|create|disk|inotify D|CREATE new|CREATE new|same
    # # parity|create|disk|fanotify mount|MODIFY D/f|refused: Operation not supported|no decodable handles
    # # parity|chmod|client|inotify D|ATTRIB f|MODIFY f|DIFFERS
"""


def test_rows_are_read_in_order():
    found = parity.rows(KTAP)
    assert [r[:3] for r in found] == [("create", "disk", "inotify D"),
                                      ("create", "disk", "fanotify mount"),
                                      ("chmod", "client", "inotify D")]
    assert found[2][3:] == ("ATTRIB f", "MODIFY f", "DIFFERS")


def test_a_repeated_case_keeps_its_last_lines():
    found = parity.rows(KTAP + "# parity|create|disk|inotify D|CREATE new|-|DIFFERS\n")
    assert len(found) == 3
    assert found[0][4:] == ("-", "DIFFERS")


def test_table_counts_each_verdict_and_escapes_bars():
    text = parity.table(parity.rows(KTAP))
    assert text.startswith("3 cells: 1 the same, 1 differing with a named "
                           "reason, 1 differing without one.")
    assert "| chmod | client | inotify D | ATTRIB f | MODIFY f | DIFFERS |" in text
    assert parity.table(parity.rows("no parity line")) == ""


def test_bars_inside_a_reason_are_escaped():
    found = [("mkdir", "disk", "inotify D", "CREATE+ISDIR sub2",
              "CREATE+ISDIR sub2", "O_APPEND|O_DIRECT")]
    assert "O_APPEND\\|O_DIRECT" in parity.table(found)


def test_write_only_when_there_are_rows(tmp_path):
    assert not parity.write("ok 1 x\n", tmp_path / "p.md")
    assert not (tmp_path / "p.md").exists()
    assert parity.write(KTAP, tmp_path / "p.md")
    assert (tmp_path / "p.md").read_text().startswith("# Parity")
