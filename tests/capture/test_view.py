"""The text timeline and the SMB2 names it prints."""

from test_read import canned
from testbed.capture import smb2
from testbed.capture.notify import pair_latencies
from testbed.capture.view import request_finder, timeline


def scenario_lines():
    capture = canned()
    events = capture.events()
    return timeline(events, pair_latencies(events), request_finder(capture.pdus),
                    {21: "dnotify_cifs.watched.server_disk_create#2"})


def line_of(lines, frame, text=""):
    found = [line for line in lines if line.split()[1] == str(frame) and text in line]
    assert found, (frame, text)
    return found[0]


def test_status_names():
    assert smb2.status_name("0x00000103") == "STATUS_PENDING"
    assert smb2.status_name(0x10C) == "STATUS_NOTIFY_ENUM_DIR"
    assert smb2.status_name(0x10B) == "STATUS_NOTIFY_CLEANUP"
    assert smb2.status_name("0xc0000120") == "STATUS_CANCELLED"
    assert smb2.status_name("0xdeadbeef") == "0xdeadbeef"


def test_filter_and_action_names():
    assert smb2.filter_names(0x3) == "FILE_NOTIFY_CHANGE_FILE_NAME|DIR_NAME"
    assert smb2.filter_names(0x1017) == \
        "FILE_NOTIFY_CHANGE_FILE_NAME|DIR_NAME|ATTRIBUTES|LAST_WRITE|0x1000"
    assert [smb2.action_name(n) for n in (1, 2, 3, 4, 5)] == [
        "ADDED", "REMOVED", "MODIFIED", "RENAMED_OLD_NAME", "RENAMED_NEW_NAME"]


def test_one_line_per_pdu_and_marker():
    capture = canned()
    assert len(scenario_lines()) == len(capture.pdus) + len(capture.markers)


def test_notify_request_shows_filter_and_watch_tree():
    line = line_of(scenario_lines(), 7, "mid=11")
    assert "C->S" in line and "CHANGE_NOTIFY" in line and "req" in line
    assert "FILE_NOTIFY_CHANGE_FILE_NAME|DIR_NAME|ATTRIBUTES|LAST_WRITE WATCH_TREE" in line
    assert "fid=00000011" in line
    assert "WATCH_TREE" not in line_of(scenario_lines(), 7, "mid=12")


def test_responses_show_status_ids_and_actions():
    lines = scenario_lines()
    interim = line_of(lines, 8, "mid=11")
    assert "S->C" in interim and "aid=0x21" in interim and "STATUS_PENDING" in interim
    final = line_of(lines, 10, "mid=12")
    assert "STATUS_SUCCESS" in final
    assert "RENAMED_OLD_NAME old, RENAMED_NEW_NAME new" in final
    assert "ADDED a, MODIFIED b" in line_of(lines, 10, "mid=11")
    assert "STATUS_CANCELLED" in line_of(lines, 15)
    assert "cancels aid=0x23" in line_of(lines, 14)


def test_create_response_names_the_file_of_its_request():
    line = line_of(scenario_lines(), 6, "mid=13")
    assert "fid=00000012" in line and line.endswith("other")


def test_markers_inline_with_latency_and_occurrence():
    lines = scenario_lines()
    signal = line_of(lines, 11)
    assert "signal dnotify_cifs.watched.server_disk_create sig=34 fd=3" in signal
    assert "response #10 -> signal 3.000 ms" in signal
    assert "change #9 -> response 12.000 ms" in signal
    assert "server: change op=create path=dir/a" in line_of(lines, 9)
    assert line_of(lines, 21).endswith("begin dnotify_cifs.watched.server_disk_create#2")


def test_values_that_could_not_be_attributed_print_as_question_marks():
    from testbed.capture.records import Pdu
    from testbed.capture.view import details
    create = Pdu(1, 0.0, 0, "10.0.77.2", "", 0, smb2.CREATE, False, False, 1,
                 names=None)
    response = Pdu(2, 0.1, 1, "10.0.77.1", "", 0, smb2.CHANGE_NOTIFY, True, True, 2,
                   async_id=5, status=0, notify_entries=[(1, None)])
    close = Pdu(3, 0.2, 0, "10.0.77.2", "", 0, smb2.CLOSE, False, False, 3, fids=None)
    assert details(create) == "?"
    assert details(response) == "ADDED ?"
    assert details(close) == "fid=?"
