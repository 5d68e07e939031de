"""The guests' private L2 segment and its capture.

QEMU itself makes the segment: the server's NIC listens on a unix stream
socket in the run directory, the client's connects to it. No user-mode NIC,
no tap, no bridge: the guests reach each other and nothing else, and no
host address is involved. QEMU's filter-dump writes every frame of the
client's NIC to a pcap file in the run directory; the capture package
reads it (orchestrate.py pcap).
"""

from ..common.addresses import (CLIENT_IP, MARKER_ADDR, MARKER_PORT,
                                PREFIX, SERVER_IP)
from ..common.errors import TestbedError

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
            f"SMB_DOMAIN={smb_domain}\nMARKER_ADDR={MARKER_ADDR}\n"
            f"MARKER_PORT={MARKER_PORT}\n")
