"""bench_report and bench_plot on small canned results."""
import csv
import xml.dom.minidom

from testbed.bench import plot
from testbed.bench import report
from testbed.bench import run as bench_run
from testbed.bench import stats
from testbed.kernel import build as kernel_build
from testbed.common.errors import UsageError

WATCHERS = (("inotify", "i"), ("smbclient", "s"), ("poll1000", "p"),
            ("fanotify", "f"))


def entry(lat, missed=0, cpu=10.0):
    s = sorted(lat)
    return {"available": True, "n": len(lat), "missed": missed,
            "p50": s[len(s) // 2], "p90": s[-1], "p99": s[-1], "max": s[-1],
            "latencies": lat, "cpu_us_per_change": cpu}


PASSES = [{"inotify": entry([0.02, 0.03, 0.04]),
           "smbclient": entry([0.04, 0.05, 0.06]),
           "poll1000": entry([0.4, 0.5, 0.9], missed=1),
           "fanotify": {"available": False}}]


def test_rows_ratios_and_unavailable():
    rows = {r["watcher"]: r for r in report.latency_rows(PASSES,
                                                               WATCHERS)}
    assert rows["inotify"]["p50_vs_smbclient"] == 0.03 / 0.05
    assert round(rows["inotify"]["p50_vs_poll1000"], 3) == 0.06
    assert rows["poll1000"]["missed"] == 1
    assert rows["poll1000"]["changes"] == 4
    assert rows["fanotify"]["available"] is False
    table = report.latency_table(list(rows.values()))
    assert "| fanotify | not available on this kernel" in table
    assert "| poll1000 | 500.0 ms" in table


def test_targets_name_each_state():
    rows = report.latency_rows(PASSES, WATCHERS)
    lines = report.targets(rows)
    assert "inotify: p50 <= smbclient's p50: met (ratio 0.60)" in lines
    assert "fanotify: not available on this kernel" in lines
    assert any(line.startswith("inotify: no missed change: met")
               for line in lines)


def test_latency_files(tmp_path):
    report.write_latency(tmp_path, PASSES, WATCHERS)
    with open(tmp_path / "latency.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["pass", "watcher", "latency_ms"]
    assert len(rows) == 1 + 9
    xml.dom.minidom.parse(str(tmp_path / "latency-cdf.svg"))


def test_scale_io_burst_files(tmp_path):
    rows = [{"watches": 1000, "arm_s": 30.0, "all_heard_s": 9.5,
             "release_s": 4.0, "client_bytes_per_watch": 1500,
             "client_bytes_after_per_watch": 3, "smbd_kib_per_watch": 2.5,
             "server_handles": 1000, "credits": 500, "on_wire": 1000},
            {"watches": 5000, "error": "the server holds 4000 requests"}]
    table = report.write_scale(tmp_path, rows)
    assert "| 5000 | not reached: the server holds 4000" in table
    xml.dom.minidom.parse(str(tmp_path / "scale-time.svg"))
    xml.dom.minidom.parse(str(tmp_path / "scale-memory.svg"))
    io = {0: {"meta": 100.0, "write": 50.0, "read": 60.0, "meta_ratio": 1.0,
              "write_ratio": 1.0, "read_ratio": 1.0},
          1000: {"meta": 95.0, "write": 49.0, "read": 30.0,
                 "meta_ratio": 0.95, "write_ratio": 0.98, "read_ratio": 0.5}}
    table = report.write_io(tmp_path, io)
    assert ("| 1000 | 95 (ratio 0.95) | 49.0 (ratio 0.98) | "
            "30.0 (ratio 0.50) |") in table
    xml.dom.minidom.parse(str(tmp_path / "io.svg"))
    table = report.write_bursts(tmp_path, [
        {"files": 5000, "create_s": 3.0, "named": 4990, "nameless": 1,
         "overflows": 0, "until_quiet_s": 12.0, "client_cpu_s": 2.5,
         "client_lists": 5000, "server_lists": 5000, "listing_equal": True}])
    assert "| 5000 | 4990 | 1 | 0 | 12.0 s | 2.5 s | yes (5000/5000) |" \
        in table


def test_log_ticks_cover_decades():
    assert plot.log_ticks(0.01, 1) == [0.01, 0.02, 0.05, 0.1, 0.2,
                                             0.5, 1]


def test_measures_parse_and_refuse():
    assert bench_run.parse_measures(None) == bench_run.MEASURES
    assert bench_run.parse_measures("io,latency,io") == ("io", "latency")
    try:
        bench_run.parse_measures("latency,nope")
    except UsageError as e:
        assert "unknown measure 'nope'" in str(e)
    else:
        raise AssertionError("no error")


def test_debug_kernel_is_named(tmp_path):
    (tmp_path / "config").write_text("#\nCONFIG_KASAN=y\nCONFIG_X=y\n")
    assert kernel_build.debug_checkers(tmp_path) == ["CONFIG_KASAN"]
    (tmp_path / "config").write_text("#\nCONFIG_X=y\n")
    assert kernel_build.debug_checkers(tmp_path) == []
    assert kernel_build.debug_checkers(tmp_path / "none") == []


def test_unreached_names_measure_count_and_reason():
    results = {"measures": {"latency": {"rows": []},
                            "io": {0: {"meta": 1.0}, 1000: {"error": "x"}},
                            "scale": [{"watches": 5, "error": "y"}],
                            "bursts": [{"files": 50, "error": "z"}]}}
    assert bench_run.unreached(results) == ["io 1000: x", "scale 5: y",
                                        "bursts 50: z"]


def test_counted_measures_merge_repeated_passes(tmp_path):
    one = [{"files": 5000, "named": 100, "nameless": 2, "overflows": 0,
            "until_quiet_s": 2.0, "client_cpu_s": 0.5, "client_lists": 5000,
            "server_lists": 5000, "listing_equal": True}]
    two = [dict(one[0], named=140, until_quiet_s=3.0, listing_equal=False)]
    three = [dict(one[0], named=120, until_quiet_s=2.5)]
    merged = stats.merge_counted([one, two, three], "files")
    assert merged[0]["named"] == 120 and merged[0]["named_range"] == [100, 140]
    assert merged[0]["nameless"] == 2 and "nameless_range" not in merged[0]
    two_passes = stats.merge_counted([one, three], "files")[0]
    assert two_passes["files"] == 5000 and isinstance(two_passes["files"], int)
    assert two_passes["named"] == 110 and two_passes["until_quiet_s"] == 2.25
    assert merged[0]["listing_equal"] is False
    table = report.write_bursts(tmp_path, merged)
    assert "| 5000 | 120 (100-140) | 2 | 0 | 2.5 s (2.0-3.0) |" in table
    io = stats.merge_counted(
        [{0: {"meta": 10.0, "meta_ratio": 1.0}},
         {0: {"meta": 12.0, "meta_ratio": 1.0}}], None)
    assert io[0]["meta"] == 11.0 and io[0]["meta_range"] == [10.0, 12.0]
    failed = stats.merge_counted(
        [[{"watches": 9, "arm_s": 1.0}], [{"watches": 9, "error": "limit"}]],
        "watches")
    assert failed == [{"watches": 9, "error": "limit"}]
