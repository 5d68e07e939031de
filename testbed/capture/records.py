"""What a capture is read into: one record per SMB2 PDU and one per test
marker, in capture order.

The rest of the capture tools (timeline, --notify, latency, picture,
slices) work on these records only, so they can be tested without tshark.
"""

from dataclasses import dataclass, field

from .smb2 import CHANGE_NOTIFY, STATUS_PENDING

MARKER_TAG = "TBMARK"
MARKER_KINDS = ("begin", "end", "signal", "change")


@dataclass
class Pdu:
    """One SMB2 message (a compound frame holds several, each its own Pdu).

    A list field is None when tshark's flattened output could not tell
    which PDU of a multi-PDU frame its values belong to (see align);
    the timeline then prints '?' rather than guess.
    """
    frame: int
    time: float
    index: int                    # position in the frame: 0, 1, ...
    src: str
    dst: str
    stream: int | None            # tcp.stream: msg ids and fids are per connection
    command: int
    is_response: bool
    is_async: bool
    msg_id: int | None
    async_id: int | None = None
    status: int | None = None
    fids: list | None = field(default_factory=list)
    names: list | None = field(default_factory=list)
    completion_filter: int | None = None
    watch_tree: bool | None = None
    # CHANGE_NOTIFY response: (action number, file name or None) pairs.
    notify_entries: list | None = field(default_factory=list)
    signed: bool = False

    @property
    def fid(self):
        """The PDU's (first) FileId, None when it has none or it is unknown."""
        return self.fids[0] if self.fids else None

    @property
    def is_notify_final(self):
        """A CHANGE_NOTIFY response that completes the request (not the
        interim STATUS_PENDING one): what wakes the client's watcher."""
        return (self.command == CHANGE_NOTIFY and self.is_response
                and self.status is not None and self.status != STATUS_PENDING)


@dataclass
class Marker:
    """One testbed marker datagram: 'TBMARK <kind> <test-id> [key=value ...]'
    sent by a guest to the segment's broadcast address, UDP port 7099."""
    frame: int
    time: float
    src: str
    kind: str
    test_id: str
    keys: dict
    text: str


@dataclass
class Capture:
    """A capture read: its PDUs and markers in frame order, and warnings
    (a capture cut short, a frame whose fields could not be assigned)."""
    path: str
    pdus: list
    markers: list
    warnings: list = field(default_factory=list)

    def events(self):
        """PDUs and markers merged in capture order (frame, then position)."""
        items = [(p.frame, p.index, p) for p in self.pdus]
        items += [(m.frame, -1, m) for m in self.markers]
        items.sort(key=lambda item: (item[0], item[1]))
        return [item[2] for item in items]


def parse_marker(text):
    """'TBMARK signal dnotify_cifs.x sig=34 fd=3' -> (kind, test id, keys);
    None when the datagram is not a marker (another program on port 7099).
    Words without '=' after the id are kept under keys['args']."""
    words = text.strip().split()
    if len(words) < 3 or words[0] != MARKER_TAG:
        return None
    keys, loose = {}, []
    for word in words[3:]:
        key, eq, value = word.partition("=")
        if eq:
            keys[key] = value
        else:
            loose.append(word)
    if loose:
        keys["args"] = " ".join(loose)
    return words[1], words[2], keys


def marker_from_payload(frame, time, src, payload_hex):
    """A Marker from tshark's udp.payload hex, or None if it is not one."""
    try:
        text = bytes.fromhex(payload_hex.replace(":", "")).decode("ascii", "replace")
    except ValueError:
        return None
    parsed = parse_marker(text)
    if parsed is None:
        return None
    kind, test_id, keys = parsed
    return Marker(frame, time, src, kind, test_id, keys, text.strip())
