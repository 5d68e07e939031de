"""The bench's pictures, drawn by matplotlib (Debian's python3-matplotlib,
Agg, no display) into PNG files: the latency distribution of every watcher
on one plot (CDF, log time axis), curves of figures against a count
(scale), grouped bars of ratios (the cost to ordinary I/O) and what bursts
of creates gave. matplotlib is imported only when a picture is drawn, so
the rest of the testbed runs without it; the files are the same for the
same data (no date, no version in them)."""
from ..common.errors import TestbedError

DPI = 110
RC = {"font.size": 10, "axes.titlesize": 12, "legend.fontsize": 9,
      "axes.grid": True, "grid.color": "#dddddd", "grid.linewidth": 0.6,
      "svg.hashsalt": "testbed-bench", "svg.fonttype": "none"}
LINESTYLES = ("-", "--", "-.", ":")


def _matplotlib():
    """(matplotlib, Figure, FigureCanvasAgg), or a one-line error."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise TestbedError("the bench's plots need matplotlib: "
                           "apt-get install python3-matplotlib") from None
    return matplotlib, Figure, FigureCanvasAgg


def _draw(path, draw, ncols=1, size=(8.0, 4.6)):
    """A constrained-layout figure of `ncols` axes side by side, filled by
    draw(fig, axes), saved to `path` (PNG, or SVG by its suffix)."""
    mpl, Figure, FigureCanvasAgg = _matplotlib()
    with mpl.rc_context(RC):
        fig = Figure(figsize=size, dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, ncols, squeeze=False)[0]
        draw(fig, list(axes))
        path = str(path)
        meta = {"Date": None} if path.endswith(".svg") else {"Software": None}
        fig.savefig(path, metadata=meta)


def _plain(v, _pos=None):
    """A tick label without exponent: 0.5, 20, 5000."""
    return f"{v:,.6g}" if v >= 10000 else f"{v:.6g}"


def _scale(ax, which, values, ratio=100):
    """Log scale on `which` ('x' or 'y') when the positive values span
    more than `ratio` (none 0 or below); else linear, an x axis ticked at
    the counts measured when they are few and far enough apart. Plain
    tick labels."""
    from matplotlib import ticker
    vals = sorted({v for v in values if v is not None})
    axis = ax.xaxis if which == "x" else ax.yaxis
    if vals and vals[0] > 0 and vals[-1] / vals[0] > ratio:
        (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        axis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
        axis.set_minor_formatter(ticker.NullFormatter())
    elif which == "x" and 1 < len(vals) <= 8 and min(
            b - a for a, b in zip(vals, vals[1:])) > 0.08 * vals[-1]:
        axis.set_major_locator(ticker.FixedLocator(vals))
    axis.set_major_formatter(ticker.FuncFormatter(_plain))


def _empty(ax, what):
    ax.text(0.5, 0.5, f"no {what}", transform=ax.transAxes, ha="center",
            va="center", color="0.4")


def _legend(ax, least=1):
    """The legend right of the axes, when it has `least` entries."""
    if len(ax.get_legend_handles_labels()[0]) >= least:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1),
                  borderaxespad=0, frameon=False)


def cdf(path, series, title="Latency from a server-side change to the "
        "watcher's event"):
    """`series`: {watcher: [(latency s, fraction of changes at or below
    it)]}, one point per delivered change (stats.cdf_points), drawn as a
    step per watcher on a log millisecond axis; a watcher without points is
    left out."""

    def draw(fig, axes):
        from matplotlib import ticker
        ax = axes[0]
        drawn = [(name, pts) for name, pts in series.items() if pts]
        for i, (name, pts) in enumerate(drawn):
            pts = sorted(pts)
            xs = [pts[0][0] * 1000] + [v * 1000 for v, _ in pts]
            ys = [0.0] + [f for _, f in pts]
            ax.step(xs, ys, where="post", linewidth=1.6,
                    linestyle=LINESTYLES[i % len(LINESTYLES)],
                    color=f"C{i % 10}", label=f"{name} ({len(pts)})")
        if not drawn:
            _empty(ax, "latency samples")
        else:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(_plain))
        ax.set_ylim(0, 1.02)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 0.9, 1.0])
        ax.set_xlabel("latency (ms, log scale)")
        ax.set_ylabel("fraction of changes delivered")
        ax.set_title(title)
        _legend(ax)
        if ax.get_legend():
            ax.get_legend().set_title("watcher (changes delivered)")
    _draw(path, draw, size=(8.4, 4.8))


def curves(path, panels, xlabel, title):
    """`panels`: [(ylabel, {name: [(x, y)]})], one axes each, side by side;
    a point whose y is None is left out, and a curve without points."""
    panels = list(panels) or [("", {})]

    def draw(fig, axes):
        for ax, (ylabel, series) in zip(axes, panels):
            xs, ys = [], []
            for i, (name, pts) in enumerate(series.items()):
                pts = sorted((x, y) for x, y in pts if y is not None)
                if not pts:
                    continue
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                        color=f"C{i % 10}", label=name)
                xs += [x for x, _ in pts]
                ys += [y for _, y in pts]
            if not ys:
                _empty(ax, "figures")
            _scale(ax, "x", xs)
            _scale(ax, "y", ys)
            if ax.get_yscale() == "linear":
                ax.set_ylim(bottom=0, top=max(ys + [0]) * 1.12 or 1)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            _legend(ax, least=2)
        fig.suptitle(title)
    _draw(path, draw, ncols=len(panels),
          size=(6.4, 4.4) if len(panels) == 1 else (5.2 * len(panels), 4.4))


def bars(path, groups, title, ylabel="ratio to 0 watches", target=0.9):
    """`groups`: {group: {bar: value}}, the bars of a group side by side,
    each labelled with its value; a dashed line at 1.0 and a dotted one at
    the target (None: no target line)."""

    def draw(fig, axes):
        ax = axes[0]
        names = []
        for values in groups.values():
            names += [b for b in values if b not in names]
        width = 0.8 / max(1, len(names))
        tops = [1.0]
        for bi, name in enumerate(names):
            xs, hs = [], []
            for gi, values in enumerate(groups.values()):
                if values.get(name) is not None:
                    xs.append(gi - 0.4 + width * (bi + 0.5))
                    hs.append(values[name])
            bars_ = ax.bar(xs, hs, width * 0.92, color=f"C{bi % 10}",
                           label=str(name), zorder=2)
            ax.bar_label(bars_, fmt="%.2f", padding=2, fontsize=8)
            tops += hs
        if not names:
            _empty(ax, "figures")
        ax.axhline(1.0, color="0.3", linestyle="--", linewidth=1,
                   label="1.0 (as with none)", zorder=1)
        if target is not None:
            ax.axhline(target, color="C3", linestyle=":", linewidth=1.2,
                       label=f"target {target:g}", zorder=1)
        ax.set_xticks(range(len(groups)), [str(g) for g in groups])
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylim(0, max(tops) * 1.15)
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        _legend(ax)
    _draw(path, draw, size=(8.0, 4.4))


def bursts(path, rows, title="Bursts of creates in one watched directory"):
    """`rows`: the bursts measure's rows (files, named, nameless,
    overflows); a row that failed ('error') is left out. Left: events
    against creates, with one event per create for reference; right: the
    queue overflows."""
    ok = sorted((r for r in rows if "error" not in r),
                key=lambda r: r["files"])
    files = [r["files"] for r in ok]

    def draw(fig, axes):
        left, right = axes
        if ok:
            left.plot(files, files, color="0.5", linestyle="--",
                      label="one per create")
        for i, (key, label) in enumerate((("named", "with a name"),
                                          ("nameless", "without a name"))):
            pts = [(r["files"], r.get(key)) for r in ok
                   if r.get(key) is not None]
            left.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                      color=f"C{i}", label=f"events {label}")
        shown = [r.get(k) for r in ok for k in ("named", "nameless")] + files
        _scale(left, "x", files)
        _scale(left, "y", [v for v in shown if v], ratio=10)
        left.set_ylabel("events")
        _legend(left, least=2)
        over = [(r["files"], r.get("overflows")) for r in ok
                if r.get("overflows") is not None]
        right.plot([x for x, _ in over], [y for _, y in over], marker="o",
                   color="C3")
        _scale(right, "x", files)
        top = max([y for _, y in over] + [1]) * 1.15
        right.set_ylim(-0.04 * top, top)
        right.yaxis.get_major_locator().set_params(integer=True)
        right.set_ylabel("inotify queue overflows")
        for ax in axes:
            ax.set_xlabel("files created at once")
            if not ok:
                _empty(ax, "bursts")
        fig.suptitle(title)
    _draw(path, draw, ncols=2, size=(10.4, 4.4))

