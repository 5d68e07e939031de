"""The notify conversation of a capture, and how long notification took.

--notify keeps what a watch is made of on the wire: CHANGE_NOTIFY requests
with their interim (STATUS_PENDING) and final responses, the CANCELs of
them, and the CREATE and CLOSE of the directory handles CHANGE_NOTIFY was
sent on (matched by FileId, per TCP connection: message ids and FileIds
are only unique within one).

Latency pairs a watcher's 'signal' marker (client) with the latest
CHANGE_NOTIFY response before it that reported changes (STATUS_SUCCESS or
STATUS_NOTIFY_ENUM_DIR: a STATUS_CANCELLED or STATUS_NOTIFY_CLEANUP
completion does not signal anyone), and that response with the latest
'change' marker (server) before it. Both markers and frames are stamped
by the capture, so the guests' drifting clocks play no part. Pairs do not
cross test boundaries.
"""

import statistics
from collections import defaultdict
from dataclasses import dataclass

from . import smb2
from .records import Marker, Pdu

# Completions that tell the client something changed.
REPORTING = {smb2.STATUS_SUCCESS, 0x0000010C}      # ..., STATUS_NOTIFY_ENUM_DIR


def _by_message(pdus):
    """(stream, msg id) -> [request, responses...] of a capture."""
    messages = defaultdict(list)
    for p in pdus:
        messages[(p.stream, p.msg_id)].append(p)
    return messages


def _handle(pdu, messages, frame_pdus):
    """The FileId a request works on; for a related compound operation
    (FileId all ones) the one its frame's CREATE was given."""
    fid = pdu.fid
    if fid != smb2.RELATED_FID:
        return fid
    creates = [p for p in frame_pdus.get(pdu.frame, ())
               if p.command == smb2.CREATE and p.index < pdu.index]
    if not creates:
        return None
    for answer in messages[(pdu.stream, creates[-1].msg_id)]:
        if answer.is_response and answer.fid:
            return answer.fid
    return None


def notify_pdus(pdus):
    """The PDUs of the notify conversation, in capture order."""
    messages = _by_message(pdus)
    frame_pdus = defaultdict(list)
    for p in pdus:
        if p.command in (smb2.CREATE, smb2.CHANGE_NOTIFY, smb2.CLOSE):
            frame_pdus[p.frame].append(p)
    watched, notify_msgs, notify_async = set(), set(), set()
    for p in pdus:
        if p.command == smb2.CHANGE_NOTIFY:
            notify_msgs.add((p.stream, p.msg_id))
            if p.async_id is not None:
                notify_async.add((p.stream, p.async_id))
            handle = None if p.is_response else _handle(p, messages, frame_pdus)
            if handle is not None:
                watched.add((p.stream, handle))
    keep = set()
    for p in pdus:
        key = (p.stream, p.msg_id)
        if p.command == smb2.CHANGE_NOTIFY:
            keep.add(id(p))
        elif p.command == smb2.CANCEL and _cancels_notify(p, notify_msgs,
                                                          notify_async, messages):
            keep.add(id(p))
        elif (p.command == smb2.CREATE and p.is_response
              and (p.stream, p.fid) in watched) or \
                (p.command == smb2.CLOSE and not p.is_response
                 and (p.stream, _handle(p, messages, frame_pdus)) in watched):
            keep.update(id(q) for q in messages[key])
    return [p for p in pdus if id(p) in keep]


def _cancels_notify(cancel, notify_msgs, notify_async, messages):
    """A CANCEL of a CHANGE_NOTIFY (by async id once it went async, else
    by message id), or of a request the capture does not show."""
    if cancel.is_async:
        return (cancel.stream, cancel.async_id) in notify_async
    if (cancel.stream, cancel.msg_id) in notify_msgs:
        return True
    return not any(p.command != smb2.CANCEL
                   for p in messages[(cancel.stream, cancel.msg_id)])


def notify_events(pdus, events):
    """events (PDUs and markers, already cut to the selection) reduced to
    the notify conversation and the markers."""
    wanted = {id(p) for p in notify_pdus(pdus)}
    return [e for e in events if isinstance(e, Marker) or id(e) in wanted]


@dataclass
class Latency:
    """One signal marker with the response and change it is paired with."""
    signal: Marker
    response: Pdu | None = None
    change: Marker | None = None

    @property
    def response_to_signal_ms(self):
        """From the server's response leaving to the watcher's signal."""
        if self.response is None:
            return None
        return (self.signal.time - self.response.time) * 1000

    @property
    def change_to_response_ms(self):
        """From the change on the server's disk to its response."""
        if self.response is None or self.change is None:
            return None
        return (self.response.time - self.change.time) * 1000


def pair_latencies(events, slice_of=lambda frame: None):
    """A Latency per 'signal' marker of events (whole capture, in order).
    slice_of(frame) gives the test a frame is in; pairs stay in one test."""
    last_response, last_change, change_of = None, None, {}
    paired = []
    for e in events:
        if isinstance(e, Marker):
            if e.kind == "change":
                last_change = e
            elif e.kind == "signal":
                response = last_response
                if response is not None and slice_of(response.frame) \
                        is not slice_of(e.frame):
                    response = None
                paired.append(Latency(e, response,
                                      change_of.get(id(response))))
        elif e.command == smb2.CHANGE_NOTIFY and e.is_response \
                and e.status in REPORTING:
            last_response = e
            if last_change is not None and slice_of(last_change.frame) \
                    is slice_of(e.frame):
                change_of[id(e)] = last_change
    return paired


def _stats(values):
    """'min/median/max' in ms, or '-' without values."""
    if not values:
        return "-"
    return (f"{min(values):.1f}/{statistics.median(values):.1f}/"
            f"{max(values):.1f}")


def latency_summary(latencies, test_of):
    """Lines: per test, the number of signals and min/median/max of both
    latencies. test_of(frame) names the test a marker is in."""
    per_test = defaultdict(list)
    for lat in latencies:
        per_test[test_of(lat.signal.frame) or "(outside tests)"].append(lat)
    if not per_test:
        return []
    width = max(len(t) for t in per_test) + 2
    lines = ["notify latency per test, ms min/median/max: response->signal "
             "is the server's CHANGE_NOTIFY response to the watcher's signal, "
             "change->response the change on the server's disk to that response",
             f"{'test':<{width}}{'signals':>7}  {'response->signal':<24}"
             f"change->response"]
    for test, lats in per_test.items():
        to_signal = [x.response_to_signal_ms for x in lats
                     if x.response_to_signal_ms is not None]
        to_response = [x.change_to_response_ms for x in lats
                       if x.change_to_response_ms is not None]
        lines.append(f"{test:<{width}}{len(lats):>7}  {_stats(to_signal):<24}"
                     f"{_stats(to_response)}")
    return lines
