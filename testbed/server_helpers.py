"""What the client tests need running on the server guest besides smbd:
tb-serverd (server-side changes on request), tb-sigproxy (a relay before
smbd, faithful or spoiling notify signatures) and the extra smbd
instances. Started before each run: the binaries may have changed."""
from .errors import TestbedError
from .network import SERVER_IP, SERVERD_PORT, SIGPROXY_PORTS
from . import vm

BIN = vm.GUEST_BIN


# smbd instances besides the main one: (systemd unit, config file, port)
EXTRA_SMBDS = (
    ("smbd-nonotify", "smb-nonotify.conf", 4445),  # refuses notification
    ("smbd-torture", "smb-torture.conf", 4446),    # smbtorture's, no inotify
)


def start(run, uid):
    """tb-serverd on the server guest, for server-side changes made as the
    share's user `uid`, the tb-sigproxy relays (SIGPROXY_PORTS) and the
    extra smbd instances (EXTRA_SMBDS)."""
    # restarted each time: the binary may have changed since the last run
    code, out, err = vm.guest_exec(
        run, "server", "systemctl stop tb-serverd 2>/dev/null; "
        "systemctl reset-failed tb-serverd 2>/dev/null; systemd-run "
        f"--quiet --unit=tb-serverd {BIN}/tb-serverd "
        f"{SERVER_IP} {SERVERD_PORT} {uid}", timeout=30)
    if code != 0:
        raise TestbedError(f"tb-serverd did not start on the server: {err}")
    for mode, port in SIGPROXY_PORTS.items():
        unit = f"tb-sigproxy-{mode}"
        code, out, err = vm.guest_exec(
            run, "server", f"systemctl stop {unit} 2>/dev/null; "
            f"systemctl reset-failed {unit} 2>/dev/null; systemd-run "
            f"--quiet --unit={unit} {BIN}/tb-sigproxy {SERVER_IP} {port} "
            f"{SERVER_IP} 445 {mode}", timeout=30)
        if code != 0:
            raise TestbedError(f"{unit} did not start on the server: {err}")
    for unit, conf, port in EXTRA_SMBDS:
        state = f"/run/{unit.replace('smbd-', 'samba-')}"
        code, out, err = vm.guest_exec(
            run, "server", f"systemctl is-active -q {unit} || {{ mkdir -p "
            f"{state}/lock {state}/state {state}/cache {state}/ncalrpc && "
            f"systemd-run --quiet --unit={unit} smbd --foreground "
            f"--no-process-group --configfile=/mnt/testbed/{conf}; }}; "
            f"for i in $(seq 60); do ss -lnt | grep -q ':{port} ' && exit 0; "
            "sleep 0.5; done; exit 1", timeout=60)
        if code != 0:
            raise TestbedError(f"{unit} ({conf}, port {port}) did not start "
                               f"on the server: {err}")
