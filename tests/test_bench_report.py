"""bench_report and bench_plot on small canned results."""
import builtins
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from testbed.bench import plot
from testbed.bench import report
from testbed.bench import run as bench_run
from testbed.bench import stats
from testbed.kernel import build as kernel_build
from testbed.common.errors import TestbedError, UsageError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def is_png(path):
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_MAGIC)

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
    assert is_png(tmp_path / "latency-cdf.png")


def test_scale_io_burst_files(tmp_path):
    rows = [{"watches": 1000, "arm_s": 30.0, "all_heard_s": 9.5,
             "release_s": 4.0, "client_bytes_per_watch": 1500,
             "client_bytes_after_per_watch": 3, "smbd_kib_per_watch": 2.5,
             "server_handles": 1000, "credits": 500, "on_wire": 1000},
            {"watches": 5000, "error": "the server holds 4000 requests"}]
    table = report.write_scale(tmp_path, rows)
    assert "| 5000 | not reached: the server holds 4000" in table
    assert is_png(tmp_path / "scale-time.png")
    assert is_png(tmp_path / "scale-memory.png")
    io = {0: {"meta": 100.0, "write": 50.0, "read": 60.0, "meta_ratio": 1.0,
              "write_ratio": 1.0, "read_ratio": 1.0},
          1000: {"meta": 95.0, "write": 49.0, "read": 30.0,
                 "meta_ratio": 0.95, "write_ratio": 0.98, "read_ratio": 0.5}}
    table = report.write_io(tmp_path, io)
    assert ("| 1000 | 95 (ratio 0.95) | 49.0 (ratio 0.98) | "
            "30.0 (ratio 0.50) |") in table
    assert is_png(tmp_path / "io.png")
    table = report.write_bursts(tmp_path, [
        {"files": 5000, "create_s": 3.0, "named": 4990, "nameless": 1,
         "overflows": 0, "until_quiet_s": 12.0, "client_cpu_s": 2.5,
         "client_lists": 5000, "server_lists": 5000, "listing_equal": True}])
    assert "| 5000 | 4990 | 1 | 0 | 12.0 s | 2.5 s | yes (5000/5000) |" \
        in table
    assert is_png(tmp_path / "bursts.png")
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "bursts.png", "io.png", "scale-memory.png", "scale-time.png"]


def test_each_plot_writes_a_png(tmp_path):
    lat = [0.012, 0.02, 0.031, 0.05, 0.4, 1.2]
    plot.cdf(tmp_path / "cdf.png",
             {"inotify": stats.cdf_points(lat),
              "poll1000": [(v * 10, f * 0.5) for v, f in
                           stats.cdf_points(lat)]})
    plot.curves(tmp_path / "curves.png",
                [("seconds", {"arm": [(1000, 20.0), (5000, 90.0)],
                              "heard": [(1000, 2.7), (5000, None)]}),
                 ("smbd (KiB)", {"smbd": [(1000, 13.0), (5000, 9.6)]})],
                "watched directories", "Scale")
    plot.bars(tmp_path / "bars.png",
              {"0 watches": {"metadata": 1.0, "read": 1.0},
               "1000 watches": {"metadata": 0.58, "read": None}}, "I/O")
    plot.bursts(tmp_path / "bursts.png",
                [{"files": 5000, "named": 179, "nameless": 2,
                  "overflows": 0},
                 {"files": 50000, "named": 2283, "nameless": 21,
                  "overflows": 3},
                 {"files": 99999, "error": "not reached"}])
    for name in ("cdf", "curves", "bars", "bursts"):
        assert is_png(tmp_path / f"{name}.png"), name


def test_plots_are_the_same_for_the_same_data(tmp_path):
    series = {"inotify": stats.cdf_points([0.02, 0.03, 0.5])}
    plot.cdf(tmp_path / "a.png", series)
    plot.cdf(tmp_path / "b.png", series)
    assert (tmp_path / "a.png").read_bytes() == \
        (tmp_path / "b.png").read_bytes()
    plot.cdf(tmp_path / "a.svg", series)
    plot.cdf(tmp_path / "b.svg", series)
    text = (tmp_path / "a.svg").read_text()
    assert text == (tmp_path / "b.svg").read_text()
    assert "<dc:date>" not in text


def test_watcher_without_samples_is_left_out(tmp_path):
    plot.cdf(tmp_path / "cdf.svg", {"inotify": stats.cdf_points([0.02]),
                                    "fanotify": []})
    text = (tmp_path / "cdf.svg").read_text()
    assert "inotify (1)" in text and "fanotify" not in text
    plot.cdf(tmp_path / "none.png", {"fanotify": []})
    assert is_png(tmp_path / "none.png")
    plot.bursts(tmp_path / "bursts.png", [{"files": 5, "error": "x"}])
    assert is_png(tmp_path / "bursts.png")
    plot.curves(tmp_path / "curves.png", [], "watches", "nothing")
    plot.bars(tmp_path / "bars.png", {}, "nothing")
    assert is_png(tmp_path / "curves.png") and is_png(tmp_path / "bars.png")


def test_missing_matplotlib_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(TestbedError) as e:
        plot.cdf(tmp_path / "cdf.png", {"inotify": [(0.02, 1.0)]})
    assert "apt-get install python3-matplotlib" in str(e.value)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "cdf.png").exists()


def test_missing_matplotlib_through_import(tmp_path, monkeypatch):
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    for draw in (lambda: plot.bars(tmp_path / "b.png", {}, "I/O"),
                 lambda: plot.bursts(tmp_path / "u.png", []),
                 lambda: plot.curves(tmp_path / "c.png", [], "x", "t")):
        with pytest.raises(TestbedError,
                           match="apt-get install python3-matplotlib"):
            draw()


def test_the_testbed_imports_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "import testbed.bench.run, testbed.bench.report")
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=Path(__file__).resolve().parent.parent)


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
