"""bench_stats: pairing change and delivery markers, percentiles, misses."""
from testbed.bench.stats import (cdf_points, changes_from_markers,
                                 deliveries_from_markers, pair,
                                 per_change_cpu_us, percentile, ratio,
                                 spread, summarize)
from testbed.capture.records import Marker


def mark(time, kind, test_id, **keys):
    return Marker(frame=0, time=time, src="10.0.77.1", kind=kind,
                  test_id=test_id, keys=keys, text="")


MARKERS = [
    mark(1.0, "change", "-", op="create", path="bench/c-0000", via="disk"),
    mark(1.2, "deliver", "inotify", name="c-0000"),
    mark(1.9, "deliver", "poll1000", name="c-0000"),
    mark(2.0, "change", "-", op="create", path="bench/c-0001", via="smb"),
    mark(2.1, "deliver", "inotify", name="c-0001"),
    mark(2.2, "deliver", "inotify", name="c-0001"),   # a repeat
    mark(2.5, "change", "-", op="mkdir", path="bench/sub"),
    mark(9.0, "deliver", "poll1000", name="c-0001"),  # past the bound
]


def test_changes_are_the_create_markers_by_last_name():
    assert changes_from_markers(MARKERS) == [(1.0, "c-0000"),
                                             (2.0, "c-0001")]


def test_first_delivery_of_a_name_counts():
    got = deliveries_from_markers(MARKERS)
    assert got["inotify"] == {"c-0000": 1.2, "c-0001": 2.1}


def test_a_late_delivery_is_missed_not_dropped():
    changes = changes_from_markers(MARKERS)
    got = deliveries_from_markers(MARKERS)
    lat, missed = pair(changes, got["poll1000"], bound=5.0)
    assert [round(x, 3) for x in lat] == [0.9]
    assert missed == 1
    lat, missed = pair(changes, got["inotify"], bound=5.0)
    assert [round(x, 3) for x in lat] == [0.2, 0.1]
    assert missed == 0


def test_nothing_delivered_is_all_missed():
    lat, missed = pair([(1.0, "a"), (2.0, "b")], {}, bound=5.0)
    assert lat == [] and missed == 2
    s = summarize(lat, missed)
    assert s["p50"] is None and s["max"] is None and s["missed"] == 2


def test_percentiles_are_nearest_rank():
    vals = list(range(1, 101))
    assert percentile(vals, 50) == 50
    assert percentile(vals, 99) == 99
    assert percentile([3.0], 90) == 3.0
    assert percentile([], 50) is None
    s = summarize([0.3, 0.1, 0.2], 0)
    assert (s["p50"], s["p90"], s["max"], s["n"]) == (0.2, 0.3, 0.3, 3)


def test_spread_and_ratio():
    assert spread([3, 1, None, 2]) == (2, 1, 3)
    assert spread([1, 2]) == (1.5, 1, 2)
    assert spread([None]) is None
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(None, 1.0) is None and ratio(1.0, 0) is None


def test_cdf_ends_at_one():
    pts = cdf_points([0.2, 0.1])
    assert pts == [(0.1, 0.5), (0.2, 1.0)]


def test_cpu_line():
    assert per_change_cpu_us("cpu inotify 1000 3000", 4) == ("inotify",
                                                             1000.0)
    assert per_change_cpu_us("unavailable fanotify", 4) is None
    assert per_change_cpu_us("cpu x 1 1", 0) is None
