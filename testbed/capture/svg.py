"""A sequence diagram of the notify conversation, as hand-written SVG.

Two lifelines (client, server); one arrow per SMB2 message, drawn at its
capture time, labelled with command, ids, status and names; markers as
notes across the lanes. Time runs down to scale, except that close
messages get a minimum gap (the axis is dashed there) and long silences
are shortened (a break on the axis with the real duration written on it),
so that a test of fifty messages stays readable. The legend says so.
"""

import statistics
from xml.sax.saxutils import escape

from ..common.addresses import CLIENT_IP, SERVER_IP
from . import smb2
from .records import Marker
from .view import (details, direction, ids_text, latency_text, marker_role,
                   marker_text)

MAX_MESSAGES = 400          # beyond this a picture is unreadable: use -k
WIDTH = 1100
AXIS_X = 118                # time labels end here
CLIENT_X, SERVER_X = 300, 960
TOP = 120                   # first row
MESSAGE_GAP = 36            # px between two arrows at the least
ROW_PAD = 5                 # px between one row's text and the next one's
MAX_GAP = 100               # longer silences are shortened
MAX_LABEL = 96              # characters per arrow label line
MARKER_LABEL = 128          # characters per marker note line
COLORS = {smb2.CHANGE_NOTIFY: "#1f5fbf", smb2.CANCEL: "#c0392b"}
MARKER_COLORS = {"begin": "#e8e8e8", "end": "#e8e8e8", "signal": "#d7f5d0",
                 "change": "#fde7c8"}
OTHER_COLOR = "#555555"


class PictureTooLarge(Exception):
    """More messages than a readable picture holds."""


def scale_for(times):
    """Pixels per second such that the median gap between rows is one
    arrow's height: about half the picture is then to scale, the closer
    half stretched, and only long silences shortened."""
    gaps = sorted(b - a for a, b in zip(times, times[1:]) if b > a)
    if not gaps:
        return 1000.0
    return min(200000.0, max(20.0, MESSAGE_GAP / statistics.median(gaps)))


def extent(event, tall):
    """Room a row needs above and below its y: an arrow's label sits above
    it and its details below; a marker note is one line, or two for a
    signal with latencies (tall: ids of those)."""
    if isinstance(event, Marker):
        return 10, (21 if id(event) in tall else 8)
    return 14, 17


def layout(events, px_per_s, tall=frozenset()):
    """y of each event, and the axis segments between rows: (y0, y1, kind,
    seconds) with kind 'scale' (to scale), 'stretched' or 'shortened'."""
    ys, segments = [], []
    y, previous = TOP, None
    for e in events:
        if previous is not None:
            dt = e.time - previous.time
            natural = dt * px_per_s
            floor = extent(previous, tall)[1] + extent(e, tall)[0] + ROW_PAD
            if natural < floor:
                gap, kind = floor, "stretched"
            elif natural > MAX_GAP:
                gap, kind = MAX_GAP, "shortened"
            else:
                gap, kind = natural, "scale"
            segments.append((y, y + gap, kind, dt))
            y += gap
        ys.append(y)
        previous = e
    return ys, segments


def clip(text, limit):
    """A label line no longer than limit characters (None: any length)."""
    if limit is None or len(text) <= limit:
        return text
    return text[:limit - 1] + "\u2026"


def text_el(x, y, content, anchor="middle", size=11, weight="normal",
            color="#000", limit=MAX_LABEL):
    """An SVG <text> element (content escaped, clipped to fit its room)."""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" '
            f'text-anchor="{anchor}" font-weight="{weight}" fill="{color}">'
            f'{escape(clip(content, limit))}</text>')


def arrow_id(color):
    """The id of the arrowhead drawn in this colour."""
    return "arrow" + color.lstrip("#")


def arrow_defs():
    """One arrowhead per colour (SVG 1.1 has no context-stroke)."""
    heads = []
    for color in sorted(set(COLORS.values()) | {OTHER_COLOR}):
        heads.append(f'<marker id="{arrow_id(color)}" viewBox="0 0 10 10" '
                     'refX="10" refY="5" markerWidth="8" markerHeight="8" '
                     f'orient="auto"><path d="M0,0 L10,5 L0,10 z" '
                     f'fill="{color}"/></marker>')
    return "<defs>" + "".join(heads) + "</defs>"


def message_el(pdu, y, request_of):
    """One arrow with its two label lines, as a <g class="message">."""
    to_server = direction(pdu) == "C->S"
    x1, x2 = (CLIENT_X, SERVER_X) if to_server else (SERVER_X, CLIENT_X)
    color = COLORS.get(pdu.command, OTHER_COLOR)
    interim = pdu.is_response and pdu.status == smb2.STATUS_PENDING
    dash = ' stroke-dasharray="6 4"' if interim else ""
    kind = "resp" if pdu.is_response else "req"
    head = f"{smb2.command_name(pdu.command)} {kind} {ids_text(pdu)}"
    if pdu.is_response and pdu.status is not None:
        head += f" {smb2.status_name(pdu.status)}"
    mid = (CLIENT_X + SERVER_X) / 2
    parts = [f'<g class="message" data-frame="{pdu.frame}">',
             f'<line x1="{x1}" y1="{y:.1f}" x2="{x2}" y2="{y:.1f}" '
             f'stroke="{color}" stroke-width="1.5"{dash} '
             f'marker-end="url(#{arrow_id(color)})"/>',
             text_el(mid, y - 4, head, color=color, weight="bold")]
    more = details(pdu, request_of)
    if more:
        parts.append(text_el(mid, y + 13, more, color=color))
    parts.append(text_el(x2 + (8 if to_server else -8), y + 4, f"#{pdu.frame}",
                         anchor="start" if to_server else "end", size=9,
                         color="#888"))
    parts.append("</g>")
    return "".join(parts)


def marker_el(marker, y, latency, test_id=None):
    """A note across both lanes for a marker (begin/end, signal, change);
    a signal's latencies on a second line. test_id: the occurrence id
    ('T#2') of a begin or end marker."""
    color = MARKER_COLORS.get(marker.kind, "#eeeeee")
    lines = [f"{marker_role(marker)}: {marker_text(marker, test_id)}"]
    if latency is not None:
        lines.append(latency_text(latency))
    left, right = CLIENT_X - 70, SERVER_X + 70
    height = 18 + 13 * (len(lines) - 1)
    parts = [f'<g class="marker" data-frame="{marker.frame}">',
             f'<rect x="{left}" y="{y - 10:.1f}" width="{right - left}" '
             f'height="{height}" rx="3" fill="{color}" stroke="#999"/>']
    for i, line in enumerate(lines):
        parts.append(text_el((left + right) / 2, y + 3 + 13 * i, line, size=10,
                             limit=MARKER_LABEL))
    return "".join(parts) + "</g>"


def line_el(x1, y1, x2, y2, color="#444", extra=""):
    """An SVG <line> element."""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{color}"{extra}/>')


def axis_break_els(x, y0, y1, seconds):
    """A shortened stretch of the time axis: two slanted strokes across a
    gap in the axis, and the real duration beside them."""
    mid = (y0 + y1) / 2
    return [line_el(x, y0, x, mid - 6), line_el(x, mid + 2, x, y1),
            f'<path d="M{x - 6},{mid - 2:.1f} l12,-6 M{x - 6},{mid + 6:.1f} '
            'l12,-6" stroke="#444"/>',
            text_el(x + 10, mid + 4, f"\u2248 {seconds:.3f} s", anchor="start",
                    size=9, color="#a00")]


def axis_els(ys, events, segments, start):
    """The time axis: a label per row, solid where to scale, dashed where
    stretched, a break with the real duration where shortened."""
    x = AXIS_X - 6
    parts = []
    for y0, y1, kind, dt in segments:
        if kind == "shortened":
            parts += axis_break_els(x, y0, y1, dt)
        else:
            dash = ' stroke-dasharray="2 3"' if kind == "stretched" else ""
            parts.append(line_el(x, y0, x, y1, extra=dash))
    for y, e in zip(ys, events):
        parts.append(text_el(AXIS_X - 12, y + 4, f"{e.time:.4f}", anchor="end",
                             size=9, color="#444"))
        parts.append(text_el(AXIS_X - 12, y + 13,
                             f"+{(e.time - start) * 1000:.1f} ms",
                             anchor="end", size=8, color="#888"))
    return parts


def legend_els(title, px_per_s, segments, count):
    """Title, lanes and what the vertical scale means (and where it lies)."""
    broken = {kind for _, _, kind, _ in segments} - {"scale"}
    ms_per_100px = 100 / px_per_s * 1000
    scale = (f"Time runs down: 100 px = {ms_per_100px:.3g} ms where the axis "
             "is solid.")
    notes = []
    if "stretched" in broken:
        notes.append("Dashed axis: scale broken, rows pushed apart to stay "
                     "readable.")
    if "shortened" in broken:
        notes.append("\u2248 on the axis: scale broken, a longer silence shortened "
                     "(its real length written).")
    lines = [text_el(20, 24, title, anchor="start", size=14, weight="bold",
                     limit=None),
             text_el(20, 42, f"{count} SMB2 messages; capture time in s "
                     "(the client's NIC), +ms from the first row. " + scale,
                     anchor="start", size=10, limit=None)]
    for i, note in enumerate(notes):
        lines.append(text_el(20, 56 + 13 * i, note, anchor="start", size=10,
                             color="#a00", limit=None))
    for x, name in ((CLIENT_X, f"client {CLIENT_IP}"),
                    (SERVER_X, f"server {SERVER_IP}")):
        lines.append(f'<rect x="{x - 70}" y="84" width="140" height="22" rx="4" '
                     f'fill="#f4f4f4" stroke="#333"/>')
        lines.append(text_el(x, 99, name, weight="bold"))
    return lines


def sequence_svg(events, latencies=(), title="notify conversation",
                 request_of=None, test_ids=None):
    """The SVG document for events (PDUs and markers in capture order);
    test_ids: begin/end marker frame -> occurrence id ('T#2')."""
    messages = [e for e in events if not isinstance(e, Marker)]
    if len(messages) > MAX_MESSAGES:
        raise PictureTooLarge(f"{len(messages)} messages (a picture holds "
                              f"{MAX_MESSAGES})")
    by_signal = {id(lat.signal): lat for lat in latencies}
    test_ids = test_ids or {}
    px_per_s = scale_for([e.time for e in events])
    ys, segments = layout(events, px_per_s, set(by_signal))
    height = (ys[-1] if ys else TOP) + 50
    body = legend_els(title, px_per_s, segments, len(messages))
    for x in (CLIENT_X, SERVER_X):
        body.append(f'<line x1="{x}" y1="106" x2="{x}" y2="{height - 20}" '
                    f'stroke="#bbb" stroke-width="1"/>')
    if events:
        body += axis_els(ys, events, segments, events[0].time)
    for y, e in zip(ys, events):
        body.append(marker_el(e, y, by_signal.get(id(e)), test_ids.get(e.frame))
                    if isinstance(e, Marker) else message_el(e, y, request_of))
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" '
        'font-family="DejaVu Sans Mono, monospace">',
        f"<title>{escape(title)}</title>",
        arrow_defs(),
        f'<rect width="{WIDTH}" height="{height:.0f}" fill="#ffffff"/>',
        *body, "</svg>", ""])
