"""What the client tests need running on the server guest besides smbd:
tb-serverd (server-side changes on request), tb-sigproxy (a relay before
smbd, faithful or spoiling notify signatures) and the extra smbd
instances. Started before each run: the binaries may have changed (the
smbd instances only when not running: `up` starts them)."""
import shlex

from ..common.addresses import SERVER_IP, SERVERD_PORT, SIGPROXY_PORTS
from ..common.errors import TestbedError
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
    start_smbds(run)


def start_smbds(run):
    """The extra smbd instances (EXTRA_SMBDS), unless already running. `up`
    starts them before it saves the guests (each costs the server guest
    some 15 s of CPU to start under TCG), the suite again if they are gone."""
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


def ask(run, request):
    """tb-serverd's answer to one request line made on the server guest
    itself (e.g. "opens DIR"): its value, or a TestbedError with its error."""
    script = (f"exec 3<>/dev/tcp/{SERVER_IP}/{SERVERD_PORT} && "
              f"echo {shlex.quote(request)} >&3 && read -t 20 r <&3 && "
              "echo \"$r\"")
    code, out, err = vm.guest_exec(run, "server",
                                   f"bash -c {shlex.quote(script)}", timeout=30)
    words = out.split()
    if code != 0 or not words or words[0] != "ok":
        raise TestbedError(f"tb-serverd '{request}': "
                           f"{(out + err).strip()[-120:] or f'exit {code}'}")
    return int(words[1]) if len(words) > 1 else None
