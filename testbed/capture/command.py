"""`orchestrate.py pcap`: a run's capture as a timeline, a picture, paths.

The glue between the command line and the capture modules: read the
capture once, cut it to the tests asked for (-k), to the notify
conversation (--notify), pair latencies, then print the timeline with a
latency summary, or write the picture (--svg), or print paths (--path),
or hand everything to tshark (--raw).
"""

import os
import shutil
import subprocess
import sys
from fnmatch import fnmatchcase

from ..common.errors import UsageError
from .notify import latency_summary, notify_events, pair_latencies
from .read import read_capture
from .records import Marker
from .slices import (SLICES_DIR, SliceIndex, build_slices, existing_slices,
                     keep_frames, select_slices)
from .svg import MAX_MESSAGES, PictureTooLarge, sequence_svg
from .view import request_finder, timeline

CAPTURE_NAME = "client.pcap"


def raw_tshark(pcap, args):
    """--raw: tshark -r PCAP ARGS..., its output passed through."""
    if not shutil.which("tshark"):
        raise UsageError("tshark is not installed (apt-get install tshark)")
    return subprocess.run(["tshark", "-r", str(pcap), *args]).returncode


def print_paths(run, pattern, out, err):
    """--path: the capture, then the per-test slices cut so far; with -k
    only the slices of the matching tests (or the capture, if none is cut)."""
    pcap = run / CAPTURE_NAME
    slices = existing_slices(run / SLICES_DIR)
    if pattern is None:
        print(pcap, file=out)
        for path in slices.values():
            print(path, file=out)
        return 0
    chosen = [p for stem, p in slices.items()
              if _stem_matches(stem, pattern)]
    if not chosen:
        print(f"orchestrate.py: note: no slice of a test matching '{pattern}' "
              f"under {run / SLICES_DIR}; the whole capture:", file=err)
        chosen = [pcap]
    for path in chosen:
        print(path, file=out)
    return 0


def _stem_matches(stem, pattern):
    """-k against a slice file's name (the test id, '#N' for a repeat)."""
    base = stem.split("#")[0]
    return any(fnmatchcase(name, pattern) or pattern in name
               for name in (stem, base))


def check_options(args_raw, pattern, notify, svg, path):
    """Options that make no sense together, as a usage error."""
    if args_raw is not None and (pattern or notify or svg or path):
        raise UsageError("--raw hands its arguments to tshark and takes no "
                         "other option (use tshark's -Y for a selection)")
    if path and (notify or svg):
        raise UsageError("--path prints paths only; drop --notify/--svg")


def pcap_command(run, pattern=None, notify=False, svg=None, path=False,
                 raw=None, out=None, err=None):
    """The whole `pcap` subcommand for a run directory; its exit status."""
    out, err = out or sys.stdout, err or sys.stderr
    check_options(raw, pattern, notify, svg, path)
    pcap = run / CAPTURE_NAME
    if raw is not None:
        return raw_tshark(pcap, raw)
    if path:
        return print_paths(run, pattern, out, err)
    capture = read_capture(pcap)
    for warning in capture.warnings:
        print(f"orchestrate.py: {warning}", file=err)
    slices = build_slices(capture.markers)
    index = SliceIndex(slices)
    events = capture.events()
    latencies = pair_latencies(events, index.find)
    if pattern:
        events = keep_frames(events, select_slices(slices, pattern, str(pcap)))
    if notify or svg:
        events = notify_events(capture.pdus, events)
    request_of = request_finder(capture.pdus)
    kept = {id(e) for e in events if isinstance(e, Marker)}
    latencies = [lat for lat in latencies if id(lat.signal) in kept]
    test_ids = occurrence_ids(slices)
    if svg:
        return write_picture(svg, events, latencies, request_of, test_ids,
                             pattern, pcap, out)
    lines = timeline(events, latencies, request_of, test_ids)
    if not events:
        lines.append("(no SMB2 messages or markers in this selection)")
    summary = latency_summary(latencies, lambda f: _test_name(index, f))
    if summary:
        lines += [""] + summary
    print_lines(lines, out)
    return 0


def print_lines(lines, out):
    """Print lines; a reader that stops early ('| head') ends the output
    quietly instead of with a broken-pipe error."""
    try:
        for line in lines:
            print(line, file=out)
        out.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())


def occurrence_ids(slices):
    """Begin/end marker frame -> the test's occurrence id ('T#2')."""
    ids = {}
    for test_slice in slices:
        ids[test_slice.first_frame] = test_slice.test_id
        if test_slice.complete:
            ids[test_slice.last_frame] = test_slice.test_id
    return ids


def _test_name(index, frame):
    """The id of the test a frame lies in, or None."""
    found = index.find(frame)
    return found.test_id if found else None


def write_picture(svg, events, latencies, request_of, test_ids, pattern, pcap,
                  out):
    """--svg FILE: the sequence diagram of the selection's notify
    conversation, refused (usage error) when too large to read."""
    title = f"notify conversation: {pattern or 'whole capture'} ({pcap.parent.name})"
    try:
        text = sequence_svg(events, latencies, title, request_of, test_ids)
    except PictureTooLarge as e:
        hint = "pick one test with -k" if not pattern else "narrow -k to one test"
        raise UsageError(f"--svg: the selection has {e}; {hint}") from None
    with open(svg, "w", encoding="utf-8") as f:
        f.write(text)
    count = sum(1 for e in events if not isinstance(e, Marker))
    print(f"{svg}: {count} messages, {len(events) - count} markers "
          f"(at most {MAX_MESSAGES} messages per picture)", file=out)
    return 0
