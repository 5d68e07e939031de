"""The bench's arithmetic, apart from any guest: pairing the server's change
markers with the watchers' delivery markers (one capture clock), the
percentiles of what was delivered, the changes missed, the spread over
repeated runs and the ratios against a peer of the same run.

A change a watcher did not deliver within the bound is missed: it is
counted, and its latency is not made up; the percentiles are those of the
delivered changes, reported with the count missed beside them."""
import math

PERCENTILES = (50, 90, 99)


def changes_from_markers(markers):
    """[(time, name)] of 'change' markers (op=create path=DIR/NAME), in
    capture order; the name is the last path component."""
    out = []
    for m in markers:
        if m.kind != "change" or m.keys.get("op") != "create":
            continue
        path = m.keys.get("path", "")
        if path:
            out.append((m.time, path.rsplit("/", 1)[-1]))
    return out


def deliveries_from_markers(markers):
    """{watcher: {name: first delivery time}} of 'deliver' markers (the
    watcher is the marker's id field)."""
    out = {}
    for m in markers:
        if m.kind != "deliver" or "name" not in m.keys:
            continue
        seen = out.setdefault(m.test_id, {})
        seen.setdefault(m.keys["name"], m.time)
    return out


def pair(changes, delivered, bound):
    """Latencies (seconds) of the changes delivered within `bound` of their
    change marker, and the number missed. `delivered` is {name: time}."""
    latencies, missed = [], 0
    for t_change, name in changes:
        t = delivered.get(name)
        if t is None or t - t_change > bound:
            missed += 1
        else:
            latencies.append(max(0.0, t - t_change))
    return latencies, missed


def percentile(values, p):
    """Nearest-rank percentile of `values` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(latencies, missed):
    """{'n', 'missed', 'p50', 'p90', 'p99', 'max'} (seconds or None)."""
    out = {"n": len(latencies), "missed": missed}
    for p in PERCENTILES:
        out[f"p{p}"] = percentile(latencies, p)
    out["max"] = max(latencies) if latencies else None
    return out


def spread(values):
    """(median, low, high) of one figure over repeated runs, Nones left out;
    None when no run gave it."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    mid = len(vals) // 2
    median = vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2
    return median, vals[0], vals[-1]


def ratio(value, reference):
    """value / reference, None when either is missing or the reference 0."""
    if value is None or not reference:
        return None
    return value / reference


def cdf_points(latencies):
    """[(latency, fraction of changes at or below it)] for a CDF plot."""
    ordered = sorted(latencies)
    n = len(ordered)
    return [(v, (i + 1) / n) for i, v in enumerate(ordered)]


def per_change_cpu_us(cpu_line, changes):
    """'cpu WATCHER USER_US SYS_US' -> (watcher, CPU microseconds per
    change); None for a line of another shape or no change."""
    words = cpu_line.split()
    if len(words) != 4 or words[0] != "cpu" or not changes:
        return None
    try:
        total = int(words[2]) + int(words[3])
    except ValueError:
        return None
    return words[1], total / changes


def _as_given(median, first):
    """A median shown as its figures are: a count stays a whole number
    where the median of whole numbers is one."""
    if isinstance(first, int) and float(median).is_integer():
        return int(median)
    return round(median, 2)


def merge_passes(passes):
    """One row of figures from the same row of repeated passes: each number
    its median, with (low, high) under "<key>_range" when the passes
    differ; a flag true only when true in every pass; a pass that failed
    makes the row that failure (it is the figure that was not reached)."""
    failed = [p for p in passes if "error" in p]
    if failed:
        return dict(failed[0])
    merged = {}
    for key, first in passes[0].items():
        values = [p.get(key) for p in passes]
        if isinstance(first, bool):
            merged[key] = all(values)
        elif isinstance(first, (int, float)):
            s = spread(values)
            merged[key] = s and _as_given(s[0], first)
            if s and s[1] != s[2]:
                merged[f"{key}_range"] = [s[1], s[2]]
        else:
            merged[key] = first
    return merged


def merge_counted(runs, key):
    """A counted measure's rows over repeated runs, one per count: lists of
    rows (scale, bursts; `key` names the count) or {count: figures} (io)."""
    if isinstance(runs[0], dict):
        return {n: merge_passes([r[n] for r in runs if n in r])
                for n in runs[0]}
    by_count = {}
    for rows in runs:
        for row in rows:
            by_count.setdefault(row[key], []).append(row)
    return [merge_passes(rows) for rows in by_count.values()]
