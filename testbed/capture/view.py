"""The compact text timeline of a capture: one line per SMB2 PDU or marker.

Columns: capture time (s), frame number (to find it in wireshark),
direction, connection (only when several are shown), command, req/resp,
message id and async id, status by name, and what matters for the
command: names, FileId, the completion filter, the notify actions.
A signal marker carries its latencies (see notify).
"""

from ..common.addresses import CLIENT_IP, SERVER_IP
from . import smb2
from .records import Marker


def direction(pdu):
    """'C->S' or 'S->C' (the capture is the client's NIC), '?' otherwise."""
    if pdu.src == CLIENT_IP:
        return "C->S"
    if pdu.src == SERVER_IP:
        return "S->C"
    return "?"


def ids_text(pdu):
    """'mid=256 aid=0x100': what ties a response to its request."""
    mid = "?" if pdu.msg_id is None else pdu.msg_id
    text = f"mid={mid}"
    if pdu.async_id is not None:
        text += f" aid=0x{pdu.async_id:x}"
    return text


def names_text(names, most=6):
    """File names as printed by tshark, the first few of a long listing;
    '?' when they could not be attributed."""
    if names is None:
        return "?"
    if len(names) > most:
        return " ".join(names[:most - 1]) + f" ... ({len(names)} names)"
    return " ".join(names)


def entries_text(entries, most=12):
    """'ADDED a, REMOVED b' for a notify response's entries (the first
    few of a long one)."""
    if entries is None:
        return "entries ?"
    text = ", ".join(f"{smb2.action_name(action)} {'?' if name is None else name}"
                     for action, name in entries[:most])
    if len(entries) > most:
        text += f", ... ({len(entries)} entries)"
    return text


def filter_text(pdu):
    """The completion filter of a CHANGE_NOTIFY request, and WATCH_TREE."""
    text = smb2.filter_names(pdu.completion_filter) or "filter ?"
    if pdu.watch_tree:
        text += " WATCH_TREE"
    return text


def fid_text(pdu):
    """'fid=18b622e6' (or 'fid=?' when it could not be attributed)."""
    if pdu.fids is None:
        return "fid=?"
    return f"fid={smb2.short_fid(pdu.fid)}" if pdu.fids else ""


def details(pdu, request_of=None):
    """What matters about this PDU for its command. request_of(pdu) finds
    a response's request, to name the file a CREATE response opened."""
    cmd, parts = pdu.command, []
    if cmd == smb2.CANCEL:
        parts.append(f"cancels aid=0x{pdu.async_id:x}" if pdu.async_id is not None
                     else f"cancels mid={pdu.msg_id}")
    elif cmd == smb2.CHANGE_NOTIFY and not pdu.is_response:
        parts += [fid_text(pdu), filter_text(pdu)]
    elif cmd == smb2.CHANGE_NOTIFY:
        if pdu.notify_entries or pdu.notify_entries is None:
            parts.append(entries_text(pdu.notify_entries))
    elif cmd == smb2.CREATE and not pdu.is_response:
        parts.append(names_text(pdu.names) or "''")
    elif cmd == smb2.CREATE:
        request = request_of(pdu) if request_of else None
        parts.append(fid_text(pdu))
        if request is not None and request.names:
            parts.append(names_text(request.names))
    else:
        parts.append(fid_text(pdu))
        if pdu.names is None or pdu.names:
            parts.append(names_text(pdu.names))
    return " ".join(p for p in parts if p)


def pdu_line(pdu, request_of=None, show_stream=False):
    """One timeline line for a PDU."""
    stream = f" c{pdu.stream:<3}" if show_stream else ""
    status = smb2.status_name(pdu.status) if pdu.is_response \
        and pdu.status is not None else ""
    kind = "resp" if pdu.is_response else "req"
    return (f"{pdu.time:11.6f} {pdu.frame:>7}  {direction(pdu)}{stream}  "
            f"{smb2.command_name(pdu.command):<15} {kind:<4}  "
            f"{ids_text(pdu):<22} {status:<24} "
            f"{details(pdu, request_of)}").rstrip()


def marker_role(marker):
    """Which guest sent a marker."""
    return {CLIENT_IP: "client", SERVER_IP: "server"}.get(marker.src, marker.src)


def marker_text(marker, test_id=None):
    """'begin T', 'signal T sig=34 fd=3', 'change op=create path=d/a';
    test_id, if given, replaces the marker's (a repeat's 'T#2')."""
    keys = " ".join(f"{k}={v}" for k, v in marker.keys.items())
    test_id = test_id or marker.test_id
    test = "" if test_id == "-" else f" {test_id}"
    return f"{marker.kind}{test} {keys}".rstrip()


def latency_text(latency):
    """The latencies of a signal marker, for its timeline line."""
    if latency.response is None:
        return "no CHANGE_NOTIFY response reported a change before it"
    text = (f"response #{latency.response.frame} -> signal "
            f"{latency.response_to_signal_ms:.3f} ms")
    if latency.change is not None:
        text += (f"; change #{latency.change.frame} -> response "
                 f"{latency.change_to_response_ms:.3f} ms")
    return text


def marker_line(marker, latency=None, test_id=None):
    """One timeline line for a marker: begin/end stand out, others are
    notes between the messages."""
    bar = "====" if marker.kind in ("begin", "end") else "----"
    line = (f"{marker.time:11.6f} {marker.frame:>7}  {bar} {marker_role(marker)}: "
            f"{marker_text(marker, test_id)}")
    if latency is not None:
        line += f"   [{latency_text(latency)}]"
    return line


def request_finder(pdus):
    """request_of(response) over these PDUs, by connection and message id."""
    requests = {(p.stream, p.msg_id): p for p in pdus if not p.is_response}
    return lambda response: requests.get((response.stream, response.msg_id))


def timeline(events, latencies=(), request_of=None, test_ids=None):
    """The timeline lines of events (PDUs and markers in capture order);
    test_ids: begin/end marker frame -> occurrence id ('T#2')."""
    by_signal = {id(lat.signal): lat for lat in latencies}
    test_ids = test_ids or {}
    streams = {e.stream for e in events if not isinstance(e, Marker)}
    show_stream = len(streams) > 1
    lines = []
    for e in events:
        if isinstance(e, Marker):
            lines.append(marker_line(e, by_signal.get(id(e)), test_ids.get(e.frame)))
        else:
            lines.append(pdu_line(e, request_of, show_stream))
    return lines
