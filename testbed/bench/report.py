"""What `orchestrate.py bench` writes: results.json, one CSV per measure,
the pictures, and a short text summary (also a Markdown table for the
README). Figures over repeated passes are medians with their range."""
import csv
import json

from . import plot, stats


def _ms(v):
    return None if v is None else round(v * 1000, 1)


def latency_rows(passes, watchers):
    """One row per watcher: median (low-high) over passes of p50, p90, p99,
    max in ms; changes missed in all; CPU per change; ratios."""
    rows = []
    for name, what in watchers:
        entries = [p[name] for p in passes if p[name]["available"]]
        row = {"watcher": name, "what": what, "available": bool(entries)}
        if entries:
            for key in ("p50", "p90", "p99", "max"):
                row[key] = stats.spread([e[key] for e in entries])
            row["missed"] = sum(e["missed"] for e in entries)
            row["changes"] = sum(e["n"] + e["missed"] for e in entries)
            row["cpu_us"] = stats.spread(
                [e.get("cpu_us_per_change") for e in entries])
        rows.append(row)
    by = {r["watcher"]: r for r in rows}
    for r in rows:
        for peer in ("smbclient", "poll1000"):
            mine, theirs = r.get("p50"), by.get(peer, {}).get("p50")
            r[f"p50_vs_{peer}"] = stats.ratio(
                mine and mine[0], theirs and theirs[0])
        mine, theirs = r.get("p99"), by.get("smbclient", {}).get("p99")
        r["p99_vs_smbclient"] = stats.ratio(mine and mine[0],
                                            theirs and theirs[0])
    return rows


def _spread_str(s, scale=1000, unit=" ms"):
    if s is None:
        return "-"
    med, lo, hi = (x * scale for x in s)
    if abs(hi - lo) < 0.05 * max(abs(med), 1e-9):
        return f"{med:.1f}{unit}"
    return f"{med:.1f}{unit} ({lo:.1f}-{hi:.1f})"


def latency_table(rows):
    """A Markdown table of the latency rows."""
    out = ["| watcher | p50 | p90 | p99 | max | missed | CPU/change | "
           "p50 / smbclient's | p50 / 1 s poller's |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["available"]:
            out.append(f"| {r['watcher']} | not available on this kernel "
                       "| | | | | | | |")
            continue
        ratio = [("-" if r[k] is None else f"{r[k]:.2f}")
                 for k in ("p50_vs_smbclient", "p50_vs_poll1000")]
        out.append(
            f"| {r['watcher']} | {_spread_str(r['p50'])} | "
            f"{_spread_str(r['p90'])} | {_spread_str(r['p99'])} | "
            f"{_spread_str(r['max'])} | {r['missed']}/{r['changes']} | "
            f"{_spread_str(r['cpu_us'], 1, ' µs')} | {ratio[0]} | {ratio[1]} |")
    return "\n".join(out)


def targets(rows):
    """The issue's latency targets, each with where it stands."""
    by = {r["watcher"]: r for r in rows if r["available"]}
    out = []
    for name in ("dnotify", "inotify", "fanotify"):
        r = by.get(name)
        if not r:
            out.append(f"{name}: not available on this kernel")
            continue
        checks = [
            ("p50 <= smbclient's p50", r["p50_vs_smbclient"], 1.0),
            ("p99 <= 1.5 x smbclient's p99", r["p99_vs_smbclient"], 1.5),
            ("p50 <= 1/10 of the 1 s poller's", r["p50_vs_poll1000"], 0.1),
        ]
        for what, value, limit in checks:
            state = "unknown" if value is None else \
                ("met" if value <= limit else "not met")
            shown = "-" if value is None else f"{value:.2f}"
            out.append(f"{name}: {what}: {state} (ratio {shown})")
        out.append(f"{name}: no missed change: "
                   f"{'met' if r['missed'] == 0 else 'not met'} "
                   f"({r['missed']} of {r['changes']})")
    return out


def write_latency(outdir, passes, watchers):
    """latency.csv (every delivered change), latency-cdf.png; the rows."""
    rows = latency_rows(passes, watchers)
    with open(outdir / "latency.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["pass", "watcher", "latency_ms"])
        for i, p in enumerate(passes):
            for name, _ in watchers:
                for v in p[name].get("latencies", []):
                    w.writerow([i + 1, name, f"{v * 1000:.3f}"])
    series = {}
    for name, _ in watchers:
        lat = [v for p in passes for v in p[name].get("latencies", [])]
        total = sum(p[name].get("n", 0) + p[name].get("missed", 0)
                    for p in passes)
        if lat and total:
            # fractions of all changes, so that misses keep a curve below 1
            pts = stats.cdf_points(lat)
            series[name] = [(v, f * len(lat) / total) for v, f in pts]
    plot.cdf(outdir / "latency-cdf.png", series)
    return rows


def _fig(row, key, fmt="{}", unit=""):
    """A figure of a row, with its range over passes when they differ."""
    value = row.get(key)
    if value is None:
        return "-"
    text = fmt.format(value) + unit
    low_high = row.get(f"{key}_range")
    if low_high:
        text += f" ({fmt.format(low_high[0])}-{fmt.format(low_high[1])})"
    return text


def write_results(outdir, results):
    (outdir / "results.json").write_text(json.dumps(results, indent=1,
                                                    default=str))


def _write_csv(path, rows, keys):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


SCALE_KEYS = ("watches", "arm_s", "all_heard_s", "release_s",
              "client_bytes_per_watch", "inotify_only_bytes_per_watch",
              "remote_bytes_per_watch", "client_bytes_after_per_watch",
              "smbd_kib_per_watch", "server_handles", "credits", "on_wire",
              "error")


def write_scale(outdir, rows):
    """scale.csv, scale-time.png, scale-memory.png; a Markdown table."""
    _write_csv(outdir / "scale.csv", rows, SCALE_KEYS)
    ok = [r for r in rows if "error" not in r]
    plot.curves(outdir / "scale-time.png", [("seconds", {
        "arm all": [(r["watches"], r["arm_s"]) for r in ok],
        "all heard": [(r["watches"], r.get("all_heard_s")) for r in ok]})],
        "watched directories", "Arming and hearing N watches")
    plot.curves(outdir / "scale-memory.png", [
        ("client memory per watch (B)", {
            "armed": [(r["watches"], r["client_bytes_per_watch"])
                      for r in ok],
            "of it the remote watch's": [
                (r["watches"], r.get("remote_bytes_per_watch")) for r in ok],
            "after release": [(r["watches"],
                               r["client_bytes_after_per_watch"])
                              for r in ok]}),
        ("smbd memory per watch (KiB)", {
            "smbd": [(r["watches"], r["smbd_kib_per_watch"]) for r in ok]})],
        "watched directories", "Memory per watch")
    out = ["| watches | arm all | all heard | client memory/watch | "
           "of it inotify's own (peer) | of it the remote watch's | "
           "after release | smbd memory/watch | server handles | credits | "
           "on the wire |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['watches']} | not reached: {r['error']} "
                       "| | | | | | | | | |")
            continue
        cells = [_fig(r, "arm_s", unit=" s"), _fig(r, "all_heard_s", unit=" s"),
                 _fig(r, "client_bytes_per_watch", unit=" B"),
                 _fig(r, "inotify_only_bytes_per_watch", unit=" B"),
                 _fig(r, "remote_bytes_per_watch", unit=" B"),
                 _fig(r, "client_bytes_after_per_watch", unit=" B"),
                 _fig(r, "smbd_kib_per_watch", unit=" KiB"),
                 _fig(r, "server_handles"), _fig(r, "credits"),
                 _fig(r, "on_wire")]
        out.append(f"| {r['watches']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_io(outdir, results):
    """io.csv, io.png (ratios as bars); a Markdown table."""
    rows = [dict(watches=n, **v) for n, v in results.items()]
    _write_csv(outdir / "io.csv", rows,
               ("watches", "meta", "write", "read", "meta_ratio",
                "write_ratio", "read_ratio", "error"))
    groups = {f"{n} watches": {name: v.get(f"{k}_ratio")
                               for k, name in (("meta", "metadata"),
                                               ("write", "write"),
                                               ("read", "read"))}
              for n, v in results.items() if "error" not in v}
    plot.bars(outdir / "io.png", groups,
              "Ordinary I/O with remote watches armed (throughput)")
    out = ["| watches armed | metadata (files/s) | write (MiB/s) | "
           "read (MiB/s) |", "|---|---|---|---|"]
    for n, v in results.items():
        if "error" in v:
            out.append(f"| {n} | not reached: {v['error']} | | |")
            continue
        cells = [f"{_fig(v, k, '{:.%df}' % p)} "
                 f"(ratio {_fig(v, k + '_ratio', '{:.2f}')})"
                 for k, p in (("meta", 0), ("write", 1), ("read", 1))]
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_bursts(outdir, rows):
    """bursts.csv, bursts.png; a Markdown table."""
    keys = ("files", "create_s", "named", "nameless", "overflows",
            "until_quiet_s", "client_cpu_s", "client_lists", "server_lists",
            "listing_equal", "error")
    _write_csv(outdir / "bursts.csv", rows, keys)
    plot.bursts(outdir / "bursts.png", rows)
    out = ["| creates | events with a name | without | overflows | quiet "
           "after | client CPU | listing equal |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['files']} | not reached: {r['error']} "
                       "| | | | | |")
            continue
        cells = [_fig(r, "named"), _fig(r, "nameless"), _fig(r, "overflows"),
                 _fig(r, "until_quiet_s", unit=" s"),
                 _fig(r, "client_cpu_s", unit=" s"),
                 f"{'yes' if r['listing_equal'] else 'no'} "
                 f"({r['client_lists']}/{r['server_lists']})"]
        out.append(f"| {r['files']} | " + " | ".join(cells) + " |")
    return "\n".join(out)
