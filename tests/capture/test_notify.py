"""--notify selection and latency pairing, on the canned scenario and on
hand-made records."""

import pytest

from test_read import canned
from testbed.capture import smb2
from testbed.capture.notify import (latency_summary, notify_events, notify_pdus,
                                    pair_latencies)
from testbed.capture.records import Marker, Pdu
from testbed.capture.slices import SliceIndex, build_slices


def ids(pdus):
    return [(p.frame, p.command, p.msg_id) for p in pdus]


def test_notify_keeps_the_conversation_and_the_watched_handles():
    kept = ids(notify_pdus(canned().pdus))
    assert kept == [
        (5, 5, 10), (5, 5, 13), (6, 5, 10), (6, 5, 13),       # CREATE of both watches
        (7, 15, 11), (7, 15, 12), (8, 15, 11), (8, 15, 12),
        (10, 15, 11), (10, 15, 12), (12, 15, 15), (13, 15, 15),
        (14, 12, 15), (15, 15, 15),                          # CANCEL and its answer
        (18, 6, 18), (18, 6, 19), (19, 6, 18), (19, 6, 19)]  # CLOSE of both


def test_notify_drops_other_creates_and_closes():
    kept = {(p.frame, p.msg_id) for p in notify_pdus(canned().pdus)}
    assert (16, 16) not in kept and (16, 17) not in kept and (17, 16) not in kept
    assert (22, 20) not in kept


def test_notify_events_keep_markers():
    capture = canned()
    events = notify_events(capture.pdus, capture.events())
    assert sum(isinstance(e, Marker) for e in events) == 5


def pdu(frame, cmd, mid, response=False, status=None, fid=None, aid=None,
        index=0, stream=0):
    return Pdu(frame, frame / 100, index, "", "", stream, cmd, response,
               aid is not None, mid, aid, status, [fid] if fid else [])


def test_related_compound_notify_is_tied_to_its_create():
    pdus = [pdu(1, smb2.CREATE, 1), pdu(1, smb2.CHANGE_NOTIFY, 2,
                                        fid=smb2.RELATED_FID, index=1),
            pdu(2, smb2.CREATE, 1, True, 0, fid="f9"),
            pdu(2, smb2.CHANGE_NOTIFY, 2, True, 0x103, aid=5, index=1),
            pdu(3, smb2.CLOSE, 3, fid="f9"), pdu(4, smb2.CLOSE, 3, True, 0),
            pdu(5, smb2.CLOSE, 4, fid="other")]
    assert [p.frame for p in notify_pdus(pdus)] == [1, 1, 2, 2, 3, 4]


def test_same_fid_on_another_connection_is_another_handle():
    pdus = [pdu(1, smb2.CHANGE_NOTIFY, 2, fid="f1", stream=0),
            pdu(2, smb2.CLOSE, 3, fid="f1", stream=1)]
    assert [p.frame for p in notify_pdus(pdus)] == [1]


def test_latency_pairs_signal_with_the_latest_reporting_response():
    capture = canned()
    slices = build_slices(capture.markers)
    latencies = pair_latencies(capture.events(), SliceIndex(slices).find)
    assert len(latencies) == 1
    lat = latencies[0]
    assert (lat.response.frame, lat.response.msg_id) == (10, 12)
    assert lat.response_to_signal_ms == pytest.approx(3.0)
    assert lat.change.frame == 9 and lat.change_to_response_ms == pytest.approx(12.0)


def marker(frame, kind, time):
    return Marker(frame, time, "10.0.77.2", kind, "t", {}, "")


def response(frame, time, status):
    p = pdu(frame, smb2.CHANGE_NOTIFY, frame, True, status, aid=frame)
    p.time = time
    return p


def test_cleanup_and_cancelled_do_not_signal_and_tests_are_not_crossed():
    events = [marker(1, "begin", 0.0), marker(2, "change", 0.1),
              response(3, 0.2, 0), response(4, 0.25, 0x10B),   # CLEANUP
              response(5, 0.26, 0xC0000120),                   # CANCELLED
              marker(6, "signal", 0.3), marker(7, "end", 0.4),
              marker(8, "begin", 1.0), marker(9, "signal", 1.1),
              marker(10, "end", 1.2)]
    index = SliceIndex(build_slices([e for e in events if isinstance(e, Marker)]))
    first, second = pair_latencies(events, index.find)
    assert first.response.frame == 3
    assert first.response_to_signal_ms == pytest.approx(100.0)
    assert first.change_to_response_ms == pytest.approx(100.0)
    assert second.response is None and second.response_to_signal_ms is None


def test_enum_dir_counts_as_a_reporting_response():
    events = [response(1, 0.0, 0x10C), marker(2, "signal", 0.002)]
    (lat,) = pair_latencies(events)
    assert lat.response.frame == 1 and lat.change is None
    assert lat.change_to_response_ms is None


def test_summary_per_test_gives_count_and_min_median_max():
    events = [marker(1, "change", 0.0), response(2, 0.010, 0), marker(3, "signal", 0.011),
              marker(4, "change", 1.0), response(5, 1.030, 0), marker(6, "signal", 1.033),
              marker(7, "change", 2.0), response(8, 2.020, 0), marker(9, "signal", 2.025)]
    lines = latency_summary(pair_latencies(events), lambda frame: "t")
    assert lines[-1].split() == ["t", "3", "1.0/3.0/5.0", "10.0/20.0/30.0"]
    assert latency_summary([], lambda f: None) == []
