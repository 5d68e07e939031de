"""The suite's scheduler (scheduler.in_order) and which cases may run
side by side (selection.side_by_side): results in entry order, never more
than `width` at once, an entry that must run alone runs alone."""

import threading
import time

import pytest

from testbed.suite import scheduler
from testbed.suite import selection


class Probe:
    """Entries that record how many run at once and in what order they
    start; each sleeps its own time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = self.most = 0
        self.alone_ok = True
        self.started = []

    def entry(self, name, secs, together=True):
        def fn():
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
                self.started.append(name)
                if not together and self.now != 1:
                    self.alone_ok = False
            time.sleep(secs)
            with self.lock:
                self.now -= 1
            return name.upper()
        return name, fn, together


def run(entries, width):
    return list(scheduler.in_order(entries, width,
                                      lambda name, fn: fn()))


def test_results_come_in_entry_order_whoever_ends_first():
    p = Probe()
    out = run([p.entry("slow", 0.3), p.entry("fast", 0.01),
               p.entry("mid", 0.1)], 3)
    assert out == [("slow", "SLOW"), ("fast", "FAST"), ("mid", "MID")]
    assert p.most == 3


def test_never_more_than_width_at_once():
    p = Probe()
    out = run([p.entry(f"e{i}", 0.05) for i in range(7)], 2)
    assert [name for name, _ in out] == [f"e{i}" for i in range(7)]
    assert p.most == 2


def test_an_entry_that_must_run_alone_runs_alone():
    p = Probe()
    entries = [p.entry("a", 0.1), p.entry("b", 0.2),
               p.entry("alone", 0.05, together=False),
               p.entry("c", 0.05), p.entry("d", 0.05)]
    out = run(entries, 3)
    assert [name for name, _ in out] == ["a", "b", "alone", "c", "d"]
    assert p.alone_ok
    assert p.started.index("alone") == 2    # none after it started before


def test_width_one_runs_each_in_turn():
    p = Probe()
    run([p.entry(f"e{i}", 0.01) for i in range(4)], 1)
    assert p.most == 1


def test_an_error_in_an_entry_reaches_the_caller_in_its_turn():
    def boom():
        raise KeyboardInterrupt
    entries = [("ok", lambda: 1, True), ("boom", boom, True)]
    results = scheduler.in_order(entries, 2, lambda name, fn: fn())
    assert next(results) == ("ok", 1)
    with pytest.raises(KeyboardInterrupt):
        next(results)


def test_which_cases_may_run_side_by_side():
    assert selection.side_by_side("dnotify_matrix.dn_create.create")
    assert selection.side_by_side("inotify_cifs.inotify.server_disk_write_is_one_modify")
    assert selection.side_by_side("mounts.seal#2")
    # a mount others use, the share's root, the client's connections
    assert not selection.side_by_side("inotify_cifs.optin.fanotify_opts_in_with_report_remote")
    assert not selection.side_by_side("dnotify_semantics.sem.share_root_is_watched")
    assert not selection.side_by_side("remote_watch.remote.reconnect_after_a_local_rename_follows_the_directory")
    assert not selection.side_by_side("faults.link_down_20s")
    assert not selection.side_by_side("load_cifs.load.burst_of_creates_signals_and_listing_matches")
    assert not selection.side_by_side("kmemleak_client")


def test_the_long_side_by_side_cases_start_first_and_checks_stay_last():
    ids = ["check_flags.fs.cifs.open_append_alone", "faults.link_down_20s",
           "mounts.vers2.1", "mounts.multichannel",
           "dnotify_matrix.matrix.dn_create.create", "kmemleak_client"]
    assert sorted(ids, key=selection.run_rank) == [
        "mounts.vers2.1", "check_flags.fs.cifs.open_append_alone",
        "dnotify_matrix.matrix.dn_create.create", "faults.link_down_20s",
        "mounts.multichannel", "kmemleak_client"]
