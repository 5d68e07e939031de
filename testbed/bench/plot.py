"""The bench's pictures as hand-written SVG (no plotting library on the
host): the latency distribution of every watcher on one plot (CDF, log
time axis), curves of a figure against a count (scale), and bars of
ratios (the cost to ordinary I/O)."""
import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 760, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 210, 40, 60
PALETTE = ("#1f5fbf", "#c0392b", "#27ae60", "#8e44ad", "#d35400",
           "#7f8c8d", "#2c3e50", "#16a085")


def _svg(body, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{HEIGHT}" font-family="sans-serif" font-size="12">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n'
            f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" '
            f'font-size="15">{escape(title)}</text>\n'
            + "\n".join(body) + "\n</svg>\n")


def _plot_box():
    return LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM


def _legend(names, x, y):
    out = []
    for i, name in enumerate(names):
        color = PALETTE[i % len(PALETTE)]
        yy = y + 18 * i
        out.append(f'<line x1="{x}" y1="{yy}" x2="{x + 22}" y2="{yy}" '
                   f'stroke="{color}" stroke-width="2.5"/>')
        out.append(f'<text x="{x + 28}" y="{yy + 4}">{escape(name)}</text>')
    return out


def log_ticks(lo, hi):
    """Decade ticks (and 2, 5 between) covering [lo, hi], lo > 0."""
    ticks = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def _fmt_seconds(v):
    return f"{v * 1000:g} ms" if v < 1 else f"{v:g} s"


def cdf_svg(series, title="Latency from server-side change to event"):
    """`series`: {watcher: [(latency s, fraction)]}; log time axis."""
    x0, y0, w, h = _plot_box()
    values = [v for pts in series.values() for v, _ in pts if v > 0]
    lo = 10 ** math.floor(math.log10(min(values))) if values else 0.001
    hi = 10 ** math.ceil(math.log10(max(values))) if values else 10.0
    lo, hi = min(lo, hi / 10), max(hi, lo * 10)

    def px(v):
        v = max(v, lo)
        return x0 + w * (math.log10(v) - math.log10(lo)) / \
            (math.log10(hi) - math.log10(lo))

    def py(f):
        return y0 + h * (1 - f)

    body = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" '
            'stroke="#888"/>']
    for t in log_ticks(lo, hi):
        body.append(f'<line x1="{px(t):.1f}" y1="{y0}" x2="{px(t):.1f}" '
                    f'y2="{y0 + h}" stroke="#eee"/>')
        body.append(f'<text x="{px(t):.1f}" y="{y0 + h + 16}" '
                    f'text-anchor="middle">{_fmt_seconds(t)}</text>')
    for f in (0, 0.25, 0.5, 0.75, 0.9, 1.0):
        body.append(f'<line x1="{x0}" y1="{py(f):.1f}" x2="{x0 + w}" '
                    f'y2="{py(f):.1f}" stroke="#eee"/>')
        body.append(f'<text x="{x0 - 6}" y="{py(f) + 4:.1f}" '
                    f'text-anchor="end">{f:g}</text>')
    body.append(f'<text x="{x0 + w / 2}" y="{HEIGHT - 18}" '
                'text-anchor="middle">latency (log scale)</text>')
    body.append(f'<text x="16" y="{y0 + h / 2}" text-anchor="middle" '
                f'transform="rotate(-90 16 {y0 + h / 2})">fraction of '
                'changes delivered</text>')
    for i, (name, pts) in enumerate(series.items()):
        if not pts:
            continue
        color = PALETTE[i % len(PALETTE)]
        path, prev = [], 0.0
        for v, f in pts:        # a step function
            path.append(f"{px(v):.1f},{py(prev):.1f} {px(v):.1f},{py(f):.1f}")
            prev = f
        body.append(f'<polyline fill="none" stroke="{color}" '
                    f'stroke-width="2" points="{" ".join(path)}"/>')
    body += _legend(list(series), x0 + w + 16, y0 + 10)
    return _svg(body, title)


def curves_svg(series, xlabel, ylabel, title):
    """`series`: {name: [(x, y)]} on linear axes from 0."""
    x0, y0, w, h = _plot_box()
    xs = [x for pts in series.values() for x, _ in pts] or [1]
    ys = [y for pts in series.values() for _, y in pts if y is not None] or [1]
    xmax, ymax = max(xs) * 1.05, max(ys) * 1.15 or 1

    def px(x):
        return x0 + w * x / xmax

    def py(y):
        return y0 + h * (1 - y / ymax)

    body = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" '
            'stroke="#888"/>']
    for k in range(6):
        y = ymax * k / 5
        body.append(f'<text x="{x0 - 6}" y="{py(y) + 4:.1f}" '
                    f'text-anchor="end">{y:.3g}</text>')
    for x in sorted(set(xs)):
        body.append(f'<text x="{px(x):.1f}" y="{y0 + h + 16}" '
                    f'text-anchor="middle">{x:g}</text>')
    body.append(f'<text x="{x0 + w / 2}" y="{HEIGHT - 18}" '
                f'text-anchor="middle">{escape(xlabel)}</text>')
    body.append(f'<text x="16" y="{y0 + h / 2}" text-anchor="middle" '
                f'transform="rotate(-90 16 {y0 + h / 2})">'
                f'{escape(ylabel)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        pts = [(x, y) for x, y in pts if y is not None]
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" '
                    'points="' + " ".join(f"{px(x):.1f},{py(y):.1f}"
                                          for x, y in pts) + '"/>')
        for x, y in pts:
            body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" '
                        f'fill="{color}"/>')
    body += _legend(list(series), x0 + w + 16, y0 + 10)
    return _svg(body, title)


def bars_svg(groups, title, ylabel="ratio to 0 watches"):
    """`groups`: {group: {bar: value}}; a line at 1.0 and one at 0.9."""
    x0, y0, w, h = _plot_box()
    bars = sorted({b for g in groups.values() for b in g}, key=str)
    vals = [v for g in groups.values() for v in g.values() if v is not None]
    ymax = max(vals + [1.1]) * 1.1

    def py(y):
        return y0 + h * (1 - y / ymax)

    body = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" '
            'stroke="#888"/>']
    for ref, color in ((1.0, "#888"), (0.9, "#c0392b")):
        body.append(f'<line x1="{x0}" y1="{py(ref):.1f}" x2="{x0 + w}" '
                    f'y2="{py(ref):.1f}" stroke="{color}" '
                    'stroke-dasharray="4 3"/>')
        body.append(f'<text x="{x0 - 6}" y="{py(ref) + 4:.1f}" '
                    f'text-anchor="end">{ref:g}</text>')
    slot = w / max(1, len(groups))
    bw = slot * 0.8 / max(1, len(bars))
    for gi, (group, values) in enumerate(groups.items()):
        gx = x0 + slot * gi + slot * 0.1
        for bi, bar in enumerate(bars):
            v = values.get(bar)
            if v is None:
                continue
            color = PALETTE[bi % len(PALETTE)]
            body.append(f'<rect x="{gx + bi * bw:.1f}" y="{py(v):.1f}" '
                        f'width="{bw * 0.9:.1f}" height="{py(0) - py(v):.1f}" '
                        f'fill="{color}"/>')
            body.append(f'<text x="{gx + bi * bw + bw * 0.45:.1f}" '
                        f'y="{py(v) - 4:.1f}" text-anchor="middle" '
                        f'font-size="10">{v:.2f}</text>')
        body.append(f'<text x="{gx + slot * 0.4:.1f}" y="{y0 + h + 16}" '
                    f'text-anchor="middle">{escape(str(group))}</text>')
    body.append(f'<text x="16" y="{y0 + h / 2}" text-anchor="middle" '
                f'transform="rotate(-90 16 {y0 + h / 2})">'
                f'{escape(ylabel)}</text>')
    body += _legend([str(b) for b in bars], x0 + w + 16, y0 + 10)
    return _svg(body, title)
