"""The guests' private L2 segment and its capture.

QEMU itself makes the segment: the server's NIC listens on a unix stream
socket in the run directory, the client's connects to it. No user-mode NIC,
no tap, no bridge: the guests reach each other and nothing else, and no
host address is involved. QEMU's filter-dump writes every frame of the
client's NIC to a pcap file in the run directory; the capture_* modules
read it (orchestrate.py pcap).
"""

from .capture.records import MARKER_PORT
from .errors import TestbedError

SERVER_IP = "10.0.77.1"
CLIENT_IP = "10.0.77.2"
SERVERD_PORT = 7070       # tb-serverd on the server (client-tests/lib/testbed.h)
# tb-sigproxy before smbd: mode -> port (client-tests/notify_signing.c)
SIGPROXY_PORTS = {"relay": 4447, "spoil": 4448}
PREFIX = 24
# The guests' test markers go to the segment's broadcast address, so that
# nothing answers them and the capture holds them on its own clock.
MARKER_ADDR = "10.0.77.255"
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
