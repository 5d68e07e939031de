"""Reading tshark's -T fields output into PDU and marker records: from
canned text (tests/capture/data/notify_scenario.tsv is what tshark 4.0
printed for test_pcapgen.notify_scenario()), and from the real
tshark on generated captures when it is installed."""

import shutil
from pathlib import Path

import pytest

from test_pcapgen import (CLIENT, SERVER, TcpConnection, create_request,
                                  marker, nbss, needs_tshark, notify_response,
                                  write_pcap, write_scenario)
from testbed.capture import read as capture_read
from testbed.capture.records import parse_marker
from testbed.common.errors import TestbedError, UsageError

DATA = Path(__file__).resolve().parent / "data"
# The fields the fixture was made with; if FIELDS changes, regenerate it:
# capture_read.tshark_command(<write_scenario() pcap>, FIELDS, DISPLAY_FILTER).
FIXTURE_FIELDS = [
    "frame.number", "frame.time_relative", "ip.src", "ip.dst", "tcp.stream",
    "udp.dstport", "udp.payload", "smb2.cmd", "smb2.flags.response",
    "smb2.flags.async", "smb2.msg_id", "smb2.aid", "smb2.nt_status",
    "smb2.flags.signature", "smb2.fid", "smb2.filename",
    "smb.nt.notify.completion_filter", "smb2.notify.watch_tree",
    "smb2.notify.next_offset", "smb2.notify.action", "smb2.class",
    "smb2.file_info.infolevel"]


def canned():
    """The scenario read from the canned tshark output."""
    text = (DATA / "notify_scenario.tsv").read_bytes().decode()
    return capture_read.capture_from_text(text)


def test_fixture_matches_the_fields_asked_for():
    assert capture_read.FIELDS == FIXTURE_FIELDS


def test_compound_frame_gives_each_pdu_its_own_values():
    pdus = [p for p in canned().pdus if p.frame in (5, 6)]
    assert [(p.command, p.msg_id, p.names) for p in pdus[:2]] == \
        [(5, 10, ["dir"]), (5, 13, ["other"])]
    assert [(p.msg_id, p.fid, p.status) for p in pdus[2:]] == \
        [(10, "00000011-0000-0000-1110-000000000000", 0),
         (13, "00000012-0000-0000-1210-000000000000", 0)]


def test_two_notify_requests_in_one_segment():
    first, second = [p for p in canned().pdus if p.frame == 7]
    assert (first.msg_id, first.completion_filter, first.watch_tree) == (11, 0x17, True)
    assert (second.msg_id, second.completion_filter, second.watch_tree) == (12, 0x3, False)
    assert first.fid.startswith("00000011") and second.fid.startswith("00000012")


def test_notify_responses_in_one_frame_keep_their_own_actions():
    first, second = [p for p in canned().pdus if p.frame == 10]
    assert (first.msg_id, first.async_id, first.status) == (11, 0x21, 0)
    assert first.notify_entries == [(1, "a"), (3, "b")]
    assert second.notify_entries == [(4, "old"), (5, "new")]
    assert second.is_notify_final


def test_interim_cancel_and_related_fid():
    pdus = {(p.frame, p.index): p for p in canned().pdus}
    interim = pdus[(13, 0)]
    assert interim.status == 0x103 and interim.is_async and not interim.is_notify_final
    cancel = pdus[(14, 0)]
    assert (cancel.command, cancel.is_async, cancel.async_id) == (12, True, 0x23)
    create, close = pdus[(16, 0)], pdus[(16, 1)]
    assert create.fids == [] and create.names == ["dir\\sub"]
    assert close.fids == ["ffffffff-ffff-ffff-ffff-ffffffffffff"]


def test_markers_are_parsed_with_their_keys():
    markers = canned().markers
    assert [(m.frame, m.kind) for m in markers] == [
        (4, "begin"), (9, "change"), (11, "signal"), (20, "end"), (21, "begin")]
    signal = markers[2]
    assert signal.src == CLIENT and signal.keys == {"sig": "34", "fd": "3"}
    assert signal.test_id == "dnotify_cifs.watched.server_disk_create"
    assert markers[1].src == SERVER and markers[1].keys["path"] == "dir/a"
    assert signal.time == pytest.approx(1.015)


def test_parse_marker_rejects_other_datagrams():
    assert parse_marker("hello world foo") is None
    assert parse_marker("TBMARK begin") is None
    assert parse_marker("TBMARK end t x k=v") == ("end", "t", {"k": "v", "args": "x"})


def _row(**values):
    """A canned tshark line with the given fields ('\\f' between values)."""
    cols = ["\f".join(values.get(f.replace(".", "_"), [])) for f in capture_read.FIELDS]
    return "\t".join(cols)


def test_values_that_cannot_be_attributed_are_unknown_not_guessed():
    # CREATE + SET_INFO without an info level + CLOSE and one name: it is
    # the CREATE's or the SET_INFO's; both are left unknown.
    line = _row(frame_number=["7"], frame_time_relative=["1.0"], ip_src=[CLIENT],
                smb2_cmd=["5", "17", "6"], smb2_flags_response=["0", "0", "0"],
                smb2_flags_async=["0", "0", "0"], smb2_msg_id=["1", "2", "3"],
                smb2_fid=["f1", "f2"], smb2_filename=["x"])
    capture = capture_read.capture_from_text(line + "\n")
    create, set_info, close = capture.pdus
    assert create.names is None and set_info.names is None
    assert close.names == [] and close.fids == ["f2"] and set_info.fids == ["f1"]
    assert any("could not be" in w and "smb2.filename in 1" in w
               for w in capture.warnings)


def test_rename_set_info_takes_the_second_name():
    line = _row(frame_number=["8"], frame_time_relative=["1.0"], ip_src=[CLIENT],
                smb2_cmd=["5", "17", "6"], smb2_flags_response=["0", "0", "0"],
                smb2_flags_async=["0", "0", "0"], smb2_msg_id=["1", "2", "3"],
                smb2_fid=["f", "f"], smb2_filename=["old", "new"],
                smb2_class=["0x01"], smb2_file_info_infolevel=["0x0a"])
    create, set_info, _ = capture_read.capture_from_text(line).pdus
    assert create.names == ["old"] and set_info.names == ["new"]


def test_missing_capture_is_a_one_line_error(tmp_path):
    with pytest.raises(TestbedError, match="no capture at"):
        capture_read.read_capture(tmp_path / "none.pcap")


def test_empty_capture_is_a_one_line_error(tmp_path):
    empty = tmp_path / "e.pcap"
    empty.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))
    with pytest.raises(TestbedError, match="empty"):
        capture_read.read_capture(empty)
    (tmp_path / "z.pcap").write_bytes(b"")
    with pytest.raises(TestbedError, match="0 bytes"):
        capture_read.read_capture(tmp_path / "z.pcap")


def test_no_tshark_is_a_usage_error(tmp_path, monkeypatch):
    pcap = write_scenario(tmp_path / "s.pcap")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="tshark is not installed"):
        capture_read.read_capture(pcap)


@needs_tshark
def test_tshark_reads_the_scenario_as_the_fixture_says(tmp_path):
    live = capture_read.read_capture(write_scenario(tmp_path / "s.pcap"))
    assert live.warnings == []
    assert live.pdus == canned().pdus
    assert live.markers == canned().markers


@needs_tshark
def test_truncated_capture_shows_what_was_read_with_a_warning(tmp_path):
    whole = write_scenario(tmp_path / "s.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(whole[:-30])            # the last frame cut mid-packet
    capture = capture_read.read_capture(cut)
    assert any("cut short" in w for w in capture.warnings)
    assert [m.kind for m in capture.markers][-1] == "begin"
    assert max(p.frame for p in capture.pdus) == 19


@needs_tshark
def test_not_a_capture_is_a_one_line_error(tmp_path):
    junk = tmp_path / "junk.pcap"
    junk.write_text("this is not a capture file at all\n")
    with pytest.raises(TestbedError) as err:
        capture_read.read_capture(junk)
    assert "tshark could not read" in str(err.value)
    assert "\n" not in str(err.value)


@needs_tshark
def test_names_with_commas_and_control_characters(tmp_path):
    c = TcpConnection()
    names = ["a,b", "tab\there", "x\x1fy"]
    frames = c.handshake() + [c.segment(CLIENT, nbss(*[create_request(i, n)
                                                      for i, n in enumerate(names)])),
                              c.segment(SERVER, nbss(notify_response(
                                  9, 1, 0, [(1, "p,q"), (2, "r")]))),
                              marker(CLIENT, "TBMARK begin t")]
    capture = capture_read.read_capture(write_pcap(tmp_path / "n.pcap", frames))
    creates = [p for p in capture.pdus if p.command == 5]
    assert [p.names for p in creates] == [["a,b"], ["tab\\there"], ["x\x1fy"]]
    assert capture.pdus[-1].notify_entries == [(1, "p,q"), (2, "r")]
