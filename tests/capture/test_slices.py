"""Tests in a capture by their begin/end markers: slices, -k, files."""

import shutil
import subprocess

import pytest

from test_pcapgen import needs_tshark, write_scenario
from testbed.capture.records import Marker
from testbed.capture.slices import (SliceIndex, build_slices, existing_slices,
                                    keep_frames, select_slices, slice_file_name,
                                    write_slices)
from testbed.common.errors import UsageError


def mark(frame, kind, test_id):
    return Marker(frame, frame / 10, "10.0.77.2", kind, test_id, {}, "")


def test_begin_end_pairs_and_repeats_kept_apart():
    slices = build_slices([mark(1, "begin", "a"), mark(5, "end", "a"),
                           mark(6, "begin", "b"), mark(9, "end", "b"),
                           mark(10, "begin", "a"), mark(14, "end", "a")])
    assert [(s.test_id, s.first_frame, s.last_frame, s.complete) for s in slices] == \
        [("a", 1, 5, True), ("b", 6, 9, True), ("a#2", 10, 14, True)]


def test_a_missing_end_runs_to_the_next_begin_or_the_end():
    slices = build_slices([mark(1, "begin", "crashed"), mark(7, "begin", "next"),
                           mark(9, "end", "next"), mark(12, "begin", "last")])
    assert [(s.test_id, s.first_frame, s.last_frame, s.complete) for s in slices] == \
        [("crashed", 1, 6, False), ("next", 7, 9, True), ("last", 12, None, False)]
    assert slices[2].holds(10**6)


def test_an_end_for_another_test_is_ignored():
    slices = build_slices([mark(1, "begin", "a"), mark(3, "end", "zzz"),
                           mark(4, "end", "a")])
    assert [(s.test_id, s.last_frame) for s in slices] == [("a", 4)]


def test_tests_side_by_side_overlap_and_a_frame_counts_for_the_latest():
    slices = build_slices([mark(1, "begin", "a"), mark(3, "begin", "b"),
                           mark(6, "end", "a"), mark(8, "begin", "c"),
                           mark(9, "end", "b"), mark(12, "end", "c")])
    assert [(s.test_id, s.first_frame, s.last_frame, s.complete)
            for s in slices] == [("a", 1, 6, True), ("b", 3, 9, True),
                                 ("c", 8, 12, True)]
    index = SliceIndex(slices)
    assert [index.find(f).test_id for f in (2, 4, 7, 8, 10)] == \
        ["a", "b", "b", "c", "c"]
    assert index.find(13) is None


def test_k_takes_patterns_and_substrings():
    create, fault = "dnotify_cifs.watched.create", "faults.smbd_restarted"
    slices = build_slices([mark(1, "begin", create), mark(2, "end", create),
                           mark(3, "begin", fault), mark(4, "end", fault),
                           mark(5, "begin", create), mark(6, "end", create)])

    def ids(pattern):
        return [s.test_id for s in select_slices(slices, pattern)]
    assert ids("faults.*") == [fault]
    assert ids("watched") == [create, create + "#2"]
    assert ids("*create#2") == [create + "#2"]


def test_k_without_a_match_lists_the_ids_in_one_line():
    slices = build_slices([mark(1, "begin", "a.x"), mark(2, "end", "a.x")])
    with pytest.raises(UsageError) as err:
        select_slices(slices, "nothing")
    assert "no test matches 'nothing'" in str(err.value) and "a.x" in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(UsageError, match="no test markers"):
        select_slices([], "a")


def test_frames_are_kept_by_slice():
    slices = build_slices([mark(10, "begin", "a"), mark(20, "end", "a"),
                           mark(30, "begin", "b"), mark(40, "end", "b")])
    events = [mark(f, "signal", "-") for f in (5, 10, 15, 20, 25, 35, 45)]
    assert [e.frame for e in keep_frames(events, slices[1:])] == [35]
    index = SliceIndex(slices)
    assert [getattr(index.find(f), "test_id", None) for f in (9, 10, 20, 21, 40)] == \
        [None, "a", "a", None, "b"]


def test_slice_file_names_are_safe():
    assert slice_file_name("dnotify_cifs.watched.x#2") == "dnotify_cifs.watched.x#2.pcap"
    assert slice_file_name("a/b c") == "a_b_c.pcap"


@needs_tshark
@pytest.mark.skipif(not shutil.which("editcap"), reason="editcap is not installed")
def test_write_slices_cuts_one_pcap_per_test(tmp_path):
    pcap = write_scenario(tmp_path / "client.pcap")
    outdir = tmp_path / "slices"
    outdir.mkdir()
    (outdir / "stale.pcap").write_bytes(b"old")
    written = write_slices(pcap, outdir)
    test_id = "dnotify_cifs.watched.server_disk_create"
    assert list(written) == [test_id, test_id + "#2"]
    assert sorted(existing_slices(outdir)) == [test_id, test_id + "#2"]

    def frames(path):
        out = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e",
                              "frame.time_relative"], capture_output=True, text=True)
        return out.stdout.split()
    assert len(frames(written[test_id])) == 20 - 4 + 1        # frames 4..20
    assert len(frames(written[test_id + "#2"])) == 2          # 21 to the end
