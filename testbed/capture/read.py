"""Reading a capture with tshark into PDU and marker records.

One tshark pass with -T fields (tab between fields, form feed between the
occurrences of one field: tshark escapes \\t \\n \\r \\f in strings, so a
form feed never comes from a file name, while ',' or raw control bytes
can). align then gives each SMB2 PDU of a multi-PDU frame its own
values. SMB2 on the other smbd's and the relays' ports is decoded too (-d).

Errors are one line (TestbedError): no capture, an empty one, not a
capture, no tshark. A capture cut short in the middle of a packet (QEMU
still writing it, or killed) is read up to the cut, with a warning.
"""

import shutil
import subprocess
import tempfile
from collections import Counter

from ..common.addresses import MARKER_PORT
from ..common.errors import TestbedError, UsageError
from . import align
from .align import TRUE
from .records import Capture, Pdu, marker_from_payload
from .smb2 import to_int

AGGREGATOR = "\f"
PCAP_HEADER_SIZE = 24
# SMB2 off port 445: the second smbd (change notify = no), the tb-sigproxy
# relays (faithful, spoiling notify signatures)
EXTRA_SMB_PORTS = (4445, 4447, 4448, 4449)
TRUNCATED_HINT = "cut short in the middle of a packet"

FRAME_FIELDS = ["frame.number", "frame.time_relative", "ip.src", "ip.dst",
                "tcp.stream", "udp.dstport", "udp.payload"]
SMB2_FIELDS = ["smb2.cmd", "smb2.flags.response", "smb2.flags.async",
               "smb2.msg_id", "smb2.aid", "smb2.nt_status",
               "smb2.flags.signature", "smb2.fid", "smb2.filename",
               "smb.nt.notify.completion_filter", "smb2.notify.watch_tree",
               "smb2.notify.next_offset", "smb2.notify.action", "smb2.class",
               "smb2.file_info.infolevel"]
FIELDS = FRAME_FIELDS + SMB2_FIELDS
MARKER_FIELDS = ["frame.number", "frame.time_relative", "ip.src", "udp.payload"]
DISPLAY_FILTER = f"smb2 || udp.dstport == {MARKER_PORT}"


# TCP bookkeeping no field here needs: a whole run reads in 18-19 s
# instead of 22-27 s with it (tshark 4.0, this 2-core host, same output).
SPEEDUPS = ["-o", "tcp.calculate_timestamps:FALSE",
            "-o", "tcp.track_bytes_in_flight:FALSE"]


def tshark_command(pcap, fields, display_filter, extra=()):
    """The tshark -T fields command line for these fields."""
    cmd = ["tshark", "-n", "-r", str(pcap)]
    for port in EXTRA_SMB_PORTS:
        cmd += ["-d", f"tcp.port=={port},nbss"]
    cmd += [*SPEEDUPS, *extra,
            "-Y", display_filter, "-T", "fields", "-E", "separator=/t",
            "-E", f"aggregator={AGGREGATOR}", "-E", "occurrence=a",
            "-E", "quote=n"]
    for name in fields:
        cmd += ["-e", name]
    return cmd


def check_capture_file(pcap):
    """A one-line error for a capture tshark cannot be asked about: missing,
    or empty (QEMU writes the 24-byte header when the guest starts)."""
    if not pcap.exists():
        raise TestbedError(f"no capture at {pcap}")
    size = pcap.stat().st_size
    if size == 0:
        raise TestbedError(f"capture {pcap} is empty (0 bytes, not even "
                           "a header)")
    if size <= PCAP_HEADER_SIZE:
        raise TestbedError(f"capture {pcap} is empty (a header, no frames)")


def tshark_lines(cmd, pcap, warnings):
    """tshark's output lines as they come (so parsing overlaps tshark's
    work on a second core); at the end, a warning appended for a capture
    cut short, or a one-line error if tshark failed."""
    if not shutil.which(cmd[0]):
        raise UsageError("tshark is not installed (apt-get install tshark)")
    with tempfile.TemporaryFile() as errfile:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile) as proc:
            for raw in proc.stdout:
                yield raw.decode("utf-8", "replace").rstrip("\n")
        errfile.seek(0)
        text = errfile.read().decode("utf-8", "replace")
    err = [line for line in text.splitlines()
           if line.strip() and "Running as user" not in line]
    if any(TRUNCATED_HINT in line for line in err):
        warnings.append(f"warning: capture {pcap} was cut short in the middle of "
                        "a packet (still being written, or QEMU was killed); "
                        "showing what was read before the cut")
    elif proc.returncode != 0:
        reason = err[-1] if err else f"exit status {proc.returncode}"
        raise TestbedError(f"tshark could not read {pcap}: "
                           f"{reason.removeprefix('tshark: ')}")


def parse_rows(lines, fields):
    """tshark -T fields output lines -> one dict per frame: field -> list
    of values, absent fields left out. Text is split on '\\n' only: the
    form feed between values is a line break for str.splitlines."""
    if isinstance(lines, str):
        lines = lines.split("\n")
    for line in lines:
        if not line.strip():
            continue
        yield {name: col.split(AGGREGATOR)
               for name, col in zip(fields, line.split("\t")) if col}


def _first(row, name):
    """The first value of a frame-level field ('' when absent): an ICMP
    error quoting a packet prints a second ip.src, which is not the frame's."""
    values = row.get(name) or [""]
    return values[0]


def pdus_from_row(row, problems):
    """The Pdu records of one frame; fields that could not be attributed
    are counted in problems (field -> frames)."""
    assigned, trouble = align.assign(row)
    for name in trouble:
        problems[name] += 1
    frame = int(_first(row, "frame.number"))
    time = float(_first(row, "frame.time_relative") or 0)
    stream = to_int(_first(row, "tcp.stream"))
    pdus = []
    for index, fields in enumerate(assigned):
        pdus.append(Pdu(
            frame=frame, time=time, index=index, src=_first(row, "ip.src"),
            dst=_first(row, "ip.dst"), stream=stream, command=fields["command"],
            is_response=fields["is_response"], is_async=fields["is_async"],
            msg_id=to_int(fields["msg_id"]), async_id=to_int(fields["async_id"]),
            status=fields["status"], fids=fields["fids"], names=fields["names"],
            completion_filter=to_int(fields["completion_filter"]),
            watch_tree=(None if fields["watch_tree"] is None
                        else fields["watch_tree"] in TRUE),
            notify_entries=fields["notify_entries"],
            signed=fields["signed"] in TRUE))
    return pdus


def marker_from_row(row):
    """The Marker of a frame to UDP port 7099, or None."""
    payload = _first(row, "udp.payload")
    if not payload or _first(row, "udp.dstport") not in ("", str(MARKER_PORT)):
        return None
    return marker_from_payload(int(_first(row, "frame.number")),
                               float(_first(row, "frame.time_relative") or 0),
                               _first(row, "ip.src"), payload)


def capture_from_text(lines, path="<text>", warnings=None):
    """A Capture from tshark's output for FIELDS, text or lines (the
    parsing, apart from running tshark, so it is tested on canned text)."""
    pdus, markers, problems = [], [], Counter()
    for row in parse_rows(lines, FIELDS):
        if "smb2.cmd" in row:
            pdus.extend(pdus_from_row(row, problems))
        else:
            found = marker_from_row(row)
            if found:
                markers.append(found)
    warnings = [] if warnings is None else warnings
    if problems:
        detail = ", ".join(f"{name} in {n}"
                           for name, n in sorted(problems.items()))
        warnings.append("warning: some values of multi-PDU frames could not be "
                        f"given to one PDU and show as '?' ({detail} frames)")
    return Capture(str(path), pdus, markers, warnings)


def read_capture(pcap):
    """The SMB2 PDUs and markers of a capture file (one tshark pass)."""
    check_capture_file(pcap)
    warnings = []
    lines = tshark_lines(tshark_command(pcap, FIELDS, DISPLAY_FILTER), pcap,
                         warnings)
    return capture_from_text(lines, pcap, warnings)


def read_markers(pcap):
    """Only the markers of a capture: a quick pass with TCP not dissected
    (about 2 s for a whole run, against 20 s or more with SMB2)."""
    check_capture_file(pcap)
    warnings = []
    cmd = tshark_command(pcap, MARKER_FIELDS, f"udp.dstport == {MARKER_PORT}",
                         ["--disable-protocol", "tcp"])
    rows = parse_rows(tshark_lines(cmd, pcap, warnings), MARKER_FIELDS)
    markers = [m for m in map(marker_from_row, rows) if m]
    return markers, warnings
