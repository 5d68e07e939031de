"""Builds small pcap captures in Python for the capture tests: Ethernet,
IPv4, TCP (port 445) with NetBIOS session framing and SMB2 PDUs (compound
or several in one segment), and the testbed's UDP marker datagrams. The
tests then read them with the real tshark, so the parsing is checked against
what tshark actually prints, not against a guess of it.

Also a test module of its own: the builder's output must be what tshark
reads back.
"""

import shutil
import struct
import subprocess

import pytest

CLIENT = "10.0.77.2"
SERVER = "10.0.77.1"
BROADCAST = "10.0.77.255"
MAC = {CLIENT: bytes.fromhex("525400770002"), SERVER: bytes.fromhex("525400770001"),
       BROADCAST: b"\xff" * 6}
MARKER_PORT = 7099

needs_tshark = pytest.mark.skipif(not shutil.which("tshark"),
                                  reason="tshark is not installed")


def _ip(addr):
    return bytes(int(x) for x in addr.split("."))


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(src, dst, proto, payload):
    """An Ethernet frame holding one IPv4 packet (checksum filled in)."""
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0x4000,
                         64, proto, 0, _ip(src), _ip(dst))
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    return MAC[dst] + MAC[src] + b"\x08\x00" + header + payload


def udp(src, dst, sport, dport, payload):
    """An Ethernet frame holding one UDP datagram (checksum 0: none)."""
    return ipv4(src, dst, 17, struct.pack("!HHHH", sport, dport,
                                          8 + len(payload), 0) + payload)


def marker(src, line):
    """The testbed's marker datagram: one ASCII line to the broadcast port."""
    return udp(src, BROADCAST, 40000, MARKER_PORT, line.encode() + b"\n")


class TcpConnection:
    """One TCP connection between the client and the server's port 445:
    keeps both sequence numbers so segments follow each other."""

    def __init__(self, client_port=40001, server_port=445):
        self.ports = {CLIENT: client_port, SERVER: server_port}
        self.seq = {CLIENT: 1000, SERVER: 5000}

    def segment(self, src, payload, flags=0x18):
        """An Ethernet frame with the next TCP segment from src."""
        dst = SERVER if src == CLIENT else CLIENT
        tcp = struct.pack("!HHIIBBHHH", self.ports[src], self.ports[dst],
                          self.seq[src], self.seq[dst], 5 << 4, flags, 65535,
                          0, 0)
        self.seq[src] = (self.seq[src] + len(payload)) & 0xFFFFFFFF
        return ipv4(src, dst, 6, tcp + payload)

    def handshake(self):
        """SYN, SYN-ACK, ACK, so tshark sees the connection open."""
        frames = [self.segment(CLIENT, b"", 0x02)]
        self.seq[CLIENT] += 1
        frames.append(self.segment(SERVER, b"", 0x12))
        self.seq[SERVER] += 1
        frames.append(self.segment(CLIENT, b"", 0x10))
        return frames


def nbss(*pdus):
    """NetBIOS session message: SMB2 PDUs chained as one compound (each
    NextCommand pointing at the next, 8-byte aligned)."""
    body = b""
    for i, pdu in enumerate(pdus):
        if i < len(pdus) - 1:
            pdu += b"\0" * (-len(pdu) % 8)
            pdu = pdu[:20] + struct.pack("<I", len(pdu)) + pdu[24:]
        body += pdu
    return struct.pack("!I", len(body)) + body


def smb2_header(cmd, msg_id, response=False, status=0, async_id=None,
                related=False):
    """The 64-byte SMB2 header (MS-SMB2 2.2.1)."""
    flags = (1 if response else 0) | (2 if async_id is not None else 0) \
        | (4 if related else 0)
    tail = (struct.pack("<Q", async_id) if async_id is not None
            else struct.pack("<II", 0xFEFF, 1))
    return (b"\xfeSMB" + struct.pack("<HHIHHII", 64, 1, status, cmd, 1,
                                     flags, 0)
            + struct.pack("<Q", msg_id) + tail + struct.pack("<Q", 0x77)
            + b"\0" * 16)


def fid_bytes(n):
    """A 16-byte SMB2 FileId made from a small number; None: the all-ones
    FileId of a related compound operation (the CREATE's handle)."""
    if n is None:
        return b"\xff" * 16
    return struct.pack("<QQ", n, n + 0x1000)


def create_request(msg_id, name, related=False):
    """SMB2 CREATE request for a directory name (UTF-16LE)."""
    raw = name.encode("utf-16-le", "surrogatepass")
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, 0x100081, 0x10,
                       7, 1, 1, 120, len(raw), 0, 0)
    return smb2_header(5, msg_id, related=related) + body + (raw or b"\0")


def create_response(msg_id, fid, status=0):
    """SMB2 CREATE response carrying the new FileId (or an error)."""
    if status:
        return error_response(5, msg_id, status)
    body = struct.pack("<HBBI", 89, 0, 0, 1) + b"\0" * 48 \
        + struct.pack("<II", 0x10, 0) + fid_bytes(fid) + struct.pack("<II", 0, 0)
    return smb2_header(5, msg_id, True) + body + b"\0"


def close_request(msg_id, fid):
    """SMB2 CLOSE request of a FileId."""
    return smb2_header(6, msg_id) + struct.pack("<HHI", 24, 0, 0) + fid_bytes(fid)


def close_response(msg_id):
    """SMB2 CLOSE response (no attributes returned)."""
    return smb2_header(6, msg_id, True) + struct.pack("<HHI", 60, 0, 0) \
        + b"\0" * 52


def notify_request(msg_id, fid, completion_filter, watch_tree=False):
    """SMB2 CHANGE_NOTIFY request (MS-SMB2 2.2.35)."""
    return smb2_header(15, msg_id) + struct.pack(
        "<HHI", 32, 1 if watch_tree else 0, 16384) + fid_bytes(fid) \
        + struct.pack("<II", completion_filter, 0)


def notify_info(entries):
    """FILE_NOTIFY_INFORMATION records for (action, name) pairs."""
    records = []
    for action, name in entries:
        raw = name.encode("utf-16-le", "surrogatepass")
        records.append(struct.pack("<III", 0, action, len(raw)) + raw)
    out = b""
    for i, rec in enumerate(records):
        if i < len(records) - 1:
            rec += b"\0" * (-len(rec) % 4)
            rec = struct.pack("<I", len(rec)) + rec[4:]
        out += rec
    return out


def notify_response(msg_id, async_id, status=0, entries=()):
    """SMB2 CHANGE_NOTIFY response: interim (STATUS_PENDING), final with
    FILE_NOTIFY_INFORMATION entries, or final with an error status."""
    if status:
        return error_response(15, msg_id, status, async_id)
    data = notify_info(entries)
    return smb2_header(15, msg_id, True, 0, async_id) \
        + struct.pack("<HHI", 9, 72, len(data)) + data


def error_response(cmd, msg_id, status, async_id=None):
    """SMB2 ERROR response body (MS-SMB2 2.2.2), for any command."""
    return smb2_header(cmd, msg_id, True, status, async_id) \
        + struct.pack("<HBBI", 9, 0, 0, 0) + b"\0"


def cancel_request(msg_id, async_id=None):
    """SMB2 CANCEL of a request, by async id when it went async."""
    return smb2_header(12, msg_id, async_id=async_id) + struct.pack("<HH", 4, 0)


def pcap_bytes(frames, start=1_700_000_000.0, step=0.001):
    """A classic pcap file (microseconds, Ethernet) of frames, each either a
    frame's bytes or (seconds after start, bytes)."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    t = start
    for i, frame in enumerate(frames):
        if isinstance(frame, tuple):
            t = start + frame[0]
            frame = frame[1]
        elif i:
            t += step
        sec, usec = int(t), int(round((t - int(t)) * 1e6))
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return out


def write_pcap(path, frames, **kw):
    """pcap_bytes written to path; returns path."""
    path.write_bytes(pcap_bytes(frames, **kw))
    return path


def tshark_fields(path, *fields):
    """What tshark prints for these fields, one line per frame."""
    cmd = ["tshark", "-n", "-r", str(path), "-T", "fields", "-E", "occurrence=a",
           "-E", "aggregator=,"]
    for f in fields:
        cmd += ["-e", f]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


@needs_tshark
def test_tshark_reads_a_compound_back(tmp_path):
    conn = TcpConnection()
    frames = conn.handshake() + [
        conn.segment(CLIENT, nbss(create_request(5, "dir"),
                                  notify_request(6, None, 3))),
        marker(CLIENT, "TBMARK begin x"),
    ]
    out = tshark_fields(write_pcap(tmp_path / "c.pcap", frames),
                        "smb2.cmd", "smb2.msg_id", "udp.dstport")
    assert out.splitlines()[3:] == ["5,15\t5,6\t", "\t\t7099"]


BEGIN = "TBMARK begin dnotify_cifs.watched.server_disk_create"
END = "TBMARK end dnotify_cifs.watched.server_disk_create"
CHANGE = "TBMARK change - op=create path=dir/a"
SIGNAL = "TBMARK signal dnotify_cifs.watched.server_disk_create sig=34 fd=3"


def notify_scenario():
    """A test's notify conversation, as (seconds, frame) pairs: two watches
    armed by one compound CREATE and two CHANGE_NOTIFYs in one segment,
    both completed in one segment (several actions each), a re-arm that
    is cancelled, an unrelated CREATE/CLOSE compound, the watches closed;
    then the same test begun again and never ended (a crash)."""
    c = TcpConnection()
    steps = [(0.0, f) for f in c.handshake()] + [
        (0.100, marker(CLIENT, BEGIN)),
        (0.200, c.segment(CLIENT, nbss(create_request(10, "dir"),
                                       create_request(13, "other")))),
        (0.210, c.segment(SERVER, nbss(create_response(10, 0x11),
                                       create_response(13, 0x12)))),
        (0.300, c.segment(CLIENT, nbss(notify_request(11, 0x11, 0x17, True))
                          + nbss(notify_request(12, 0x12, 0x3)))),
        (0.310, c.segment(SERVER, nbss(notify_response(11, 0x21, 0x103))
                          + nbss(notify_response(12, 0x22, 0x103)))),
        (1.000, marker(SERVER, CHANGE)),
        (1.012, c.segment(SERVER,
                          nbss(notify_response(11, 0x21, 0, [(1, "a"), (3, "b")]))
                          + nbss(notify_response(12, 0x22, 0,
                                                 [(4, "old"), (5, "new")])))),
        (1.015, marker(CLIENT, SIGNAL)),
        (1.100, c.segment(CLIENT, nbss(notify_request(15, 0x11, 0x17, True)))),
        (1.110, c.segment(SERVER, nbss(notify_response(15, 0x23, 0x103)))),
        (1.200, c.segment(CLIENT, nbss(cancel_request(15, 0x23)))),
        (1.210, c.segment(SERVER, nbss(notify_response(15, 0x23, 0xC0000120)))),
        (1.300, c.segment(CLIENT, nbss(create_request(16, "dir\\sub"),
                                       close_request(17, None)))),
        (1.310, c.segment(SERVER, nbss(create_response(16, 0x13), close_response(17)))),
        (1.400, c.segment(CLIENT, nbss(close_request(18, 0x11))
                          + nbss(close_request(19, 0x12)))),
        (1.410, c.segment(SERVER, nbss(close_response(18)) + nbss(close_response(19)))),
        (1.500, marker(CLIENT, END)),
        (2.000, marker(CLIENT, BEGIN)),
        (2.100, c.segment(CLIENT, nbss(create_request(20, "dir")))),
    ]
    return steps


def write_scenario(path):
    """The notify scenario as a pcap file; returns path."""
    return write_pcap(path, notify_scenario())
