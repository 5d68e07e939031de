"""Giving the flattened values of a multi-PDU frame to the right PDU."""

from testbed.capture import smb2
from testbed.capture.align import (divide_notify_entries, fid_count, name_count,
                                   split_by_counts)


def test_exact_counts_split_in_order():
    assert split_by_counts(["a", "b", "c"], [1, 0, 2]) == [["a"], [], ["b", "c"]]


def test_counts_that_do_not_add_up_give_nothing():
    assert split_by_counts(["a", "b"], [1, 0, 0]) == [None, None, None]
    assert split_by_counts(["a"], [1, 1]) == [None, None]


def test_one_unknown_gets_what_the_others_leave():
    assert split_by_counts(list("abcde"), [1, None, 1]) == [["a"], ["b", "c", "d"], ["e"]]
    assert split_by_counts(["x", "f1", "f2"], [(0, 1), 1, 1]) == [["x"], ["f1"], ["f2"]]
    assert split_by_counts(["f1", "f2"], [(0, 1), 1, 1]) == [[], ["f1"], ["f2"]]


def test_an_unknown_out_of_its_bounds_gives_nothing():
    assert split_by_counts(["a", "b", "c"], [(0, 1), 1]) == [None, None]


def test_several_unknowns_only_when_a_single_split_fits():
    both_most = split_by_counts(["a", "b"], [(0, 1), (0, 1)])
    assert both_most == [["a"], ["b"]]
    assert split_by_counts([], [(0, 1), (0, 1)]) == [[], []]
    assert split_by_counts(["a"], [(0, 1), 0, (0, 1)]) == [None, [], None]


def test_notify_entries_split_at_the_last_entry_of_each_response():
    entries = [(16, 1), (0, 3), (0, 4)]
    parts = split_by_counts(entries, [None, 0, None], divide_notify_entries)
    assert parts == [[(16, 1), (0, 3)], [], [(0, 4)]]
    # an empty response would make the groups one short: unknown
    assert split_by_counts(entries, [None, None, None], divide_notify_entries) \
        == [None, None, None]


def test_fid_counts_follow_the_commands():
    assert fid_count(smb2.CLOSE, False, None) == 1
    assert fid_count(smb2.CHANGE_NOTIFY, False, None) == 1
    assert fid_count(smb2.CANCEL, False, None) == 0
    assert fid_count(smb2.CREATE, False, None) == (0, 1)
    assert fid_count(smb2.CREATE, True, 0) == 1
    assert fid_count(smb2.CREATE, True, 0xC0000034) == 0
    assert fid_count(smb2.CHANGE_NOTIFY, True, 0) == 0


def test_name_counts_follow_the_commands():
    assert name_count(smb2.CHANGE_NOTIFY, True, 0, [(0, 1), (0, 2)]) == 2
    assert name_count(smb2.CHANGE_NOTIFY, True, 0x10C, []) == 0
    assert name_count(smb2.CHANGE_NOTIFY, True, 0, None) is None
    assert name_count(smb2.SET_INFO, False, None, [], 0x0A) == 1
    assert name_count(smb2.SET_INFO, False, None, [], 0x0D) == 0
    assert name_count(smb2.CREATE, False, None, []) == (0, 1)
    assert name_count(smb2.QUERY_DIRECTORY, True, 0, []) is None
    assert name_count(smb2.CLOSE, True, 0, []) == 0
