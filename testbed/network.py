"""The guests' private L2 segment and its capture.

QEMU itself makes the segment: the server's NIC listens on a unix stream
socket in the run directory, the client's connects to it. No user-mode NIC,
no tap, no bridge: the guests reach each other and nothing else, and no
host address is involved. QEMU's filter-dump writes every frame of the
client's NIC to a pcap file in the run directory.
"""

import shutil
import subprocess

from .errors import TestbedError

SERVER_IP = "10.0.77.1"
CLIENT_IP = "10.0.77.2"
PREFIX = 24
MACS = {"server": "52:54:00:77:00:01", "client": "52:54:00:77:00:02"}
# Unix socket paths are limited to 107 bytes (sun_path).
SUN_PATH_MAX = 107


def check_socket_path(path):
    """A clear error, not QEMU's, when a socket path cannot work."""
    if len(str(path).encode()) > SUN_PATH_MAX:
        raise TestbedError(f"socket path too long for a unix socket "
                           f"({len(str(path))} > {SUN_PATH_MAX} bytes): {path}; "
                           "use a shorter --cache-dir")
    if path.exists():
        raise TestbedError(f"socket path {path} is already in use "
                           "(another testbed run?); run 'down' first")


def netdev_args(role, run):
    """QEMU arguments for the role's NIC on the segment (and its capture)."""
    sock = run / "segment.sock"
    server = "on" if role == "server" else "off"
    args = ["-netdev", f"stream,id=seg,server={server},addr.type=unix,"
                       f"addr.path={sock}",
            "-device", f"virtio-net-pci,netdev=seg,mac={MACS[role]}"]
    if role == "client":
        args += ["-object", f"filter-dump,id=capture,netdev=seg,"
                            f"file={run / 'client.pcap'}"]
    return args


def env_file_text(smb_user, smb_pass, smb_domain):
    """The staging folder's testbed.env, read by testbed-setup at boot."""
    return (f"SERVER_IP={SERVER_IP}\nCLIENT_IP={CLIENT_IP}\nPREFIX={PREFIX}\n"
            f"SMB_USER={smb_user}\nSMB_PASS={smb_pass}\n"
            f"SMB_DOMAIN={smb_domain}\n")


# SMB2 command numbers (MS-SMB2 2.2.1.2) for the compact summary.
SMB2_COMMANDS = {
    0: "NEGOTIATE", 1: "SESSION_SETUP", 2: "LOGOFF", 3: "TREE_CONNECT",
    4: "TREE_DISCONNECT", 5: "CREATE", 6: "CLOSE", 7: "FLUSH", 8: "READ",
    9: "WRITE", 10: "LOCK", 11: "IOCTL", 12: "CANCEL", 13: "ECHO",
    14: "QUERY_DIRECTORY", 15: "CHANGE_NOTIFY", 16: "QUERY_INFO",
    17: "SET_INFO", 18: "OPLOCK_BREAK",
}

NT_STATUS = {
    0x00000000: "STATUS_SUCCESS", 0x00000103: "STATUS_PENDING",
    0x0000010C: "STATUS_NOTIFY_ENUM_DIR", 0x0000010B: "STATUS_NOTIFY_CLEANUP",
    0xC0000120: "STATUS_CANCELLED", 0xC0000016: "STATUS_MORE_PROCESSING_REQUIRED",
    0xC0000034: "STATUS_OBJECT_NAME_NOT_FOUND", 0xC0000035:
    "STATUS_OBJECT_NAME_COLLISION", 0x80000006: "STATUS_NO_MORE_FILES",
    0xC0000022: "STATUS_ACCESS_DENIED", 0xC000000D: "STATUS_INVALID_PARAMETER",
    0xC0000128: "STATUS_FILE_CLOSED", 0xC00000BB: "STATUS_NOT_SUPPORTED",
    0xC0000023: "STATUS_BUFFER_TOO_SMALL", 0x80000005: "STATUS_BUFFER_OVERFLOW",
    0xC0000011: "STATUS_END_OF_FILE", 0xC000000F: "STATUS_NO_SUCH_FILE",
    0xC0000043: "STATUS_SHARING_VIOLATION", 0xC0000033:
    "STATUS_OBJECT_NAME_INVALID", 0xC000003A: "STATUS_OBJECT_PATH_NOT_FOUND",
}

TSHARK_FIELDS = ["frame.time_relative", "ip.src", "smb2.cmd", "smb2.flags.response",
                 "smb2.msg_id", "smb2.nt_status", "smb2.filename"]


def status_name(value):
    """'0x00000103' or 259 -> 'STATUS_PENDING' (hex when unknown)."""
    try:
        n = int(value, 0) if isinstance(value, str) else int(value)
    except ValueError:
        return value
    return NT_STATUS.get(n, f"0x{n:08x}")


def summarize_rows(text):
    """tshark -T fields output (TSHARK_FIELDS, tab-separated, ',' between
    the values of one field) -> compact summary lines, one per SMB2 PDU."""
    lines = []
    for row in text.splitlines():
        cols = row.split("\t")
        if len(cols) < len(TSHARK_FIELDS):
            cols += [""] * (len(TSHARK_FIELDS) - len(cols))
        t, src, cmds, resps, mids, statuses, names = cols[:7]
        if not cmds:
            continue
        cmd_l, resp_l = cmds.split(","), resps.split(",")
        mid_l, st_l = mids.split(","), statuses.split(",")
        direction = "C->S" if src == CLIENT_IP else "S->C"
        for i, cmd in enumerate(cmd_l):
            try:
                name = SMB2_COMMANDS.get(int(cmd), f"cmd{cmd}")
            except ValueError:
                name = cmd
            is_resp = i < len(resp_l) and resp_l[i] in ("1", "True", "true")
            kind = "resp" if is_resp else "req "
            mid = mid_l[i] if i < len(mid_l) else ""
            status = status_name(st_l[i]) if is_resp and i < len(st_l) \
                and st_l[i] else ""
            lines.append(f"{float(t or 0):10.3f}  {direction}  {name:<15} "
                         f"{kind} mid={mid:<5} {status:<28} {names}".rstrip())
    return lines


def pcap_summary(pcap, display_filter="smb2"):
    """The compact SMB2 summary of a capture, as lines."""
    if not pcap.exists():
        raise TestbedError(f"no capture at {pcap}")
    if pcap.stat().st_size <= 24:
        raise TestbedError(f"capture {pcap} is empty (no frames)")
    if not shutil.which("tshark"):
        raise TestbedError("tshark is not installed (apt-get install tshark)")
    cmd = ["tshark", "-n", "-r", str(pcap), "-Y", display_filter, "-T", "fields",
           "-E", "separator=/t", "-E", "aggregator=,"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and not proc.stdout:
        raise TestbedError(f"tshark could not read {pcap}: "
                           f"{proc.stderr.strip()[-300:]}")
    return summarize_rows(proc.stdout)
