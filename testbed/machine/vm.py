"""QEMU guests: accelerator probe, command lines, start, stop, state.

The client boots the built kernel (the one under test) with -kernel, the
server the Debian kernel its image carries (-kernel and -initrd taken out
of the image when it was built: images.py). Each has its root on
virtio-blk from a throwaway qcow2 overlay of the cached image, one NIC on
the private segment (network.py), a serial console logged to a file, the
guest agent and an interactive console (hvc0) on unix sockets, and the
run's staging folder shared read-only over 9p. QEMU daemonizes; its pid file is the state.
"""

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..common.errors import TestbedError
from ..common.progress import debug, log_tail, say
from . import network
from .guest_agent import GuestAgent, Qmp

ROLES = ("server", "client")
MEMORY_MIB = {"server": 1024, "client": 1536}
ENV_ACCEL = "TESTBED_ACCEL"
KVM_PROBE_SECONDS = 30
# client-tests' binaries in the guests: the read-only 9p staging folder,
# and the client's copy of them on its tmpfs that the suite makes at the
# start of each run (executing a static binary from 9p reads all of it
# through 9p each time: about 0.5 s a test case under TCG).
GUEST_BIN = "/mnt/testbed/bin"
CLIENT_BIN = "/run/testbed-bin"
KVM_CPU = ["-cpu", "host", "-smp", "2"]
TCG_CPU = ["-cpu", "max", "-smp", "1"]
# the client runs cases side by side (suite/run.py): two vCPUs, two host threads
TCG_CLIENT_CPU = ["-cpu", "max", "-smp", "2"]


def probe_kvm(kernel, timeout=KVM_PROBE_SECONDS):
    """True when KVM boots the testbed's own kernel to its end of init.

    /dev/kvm can exist, open, create a VM and run a boot sector, and still
    hang a real kernel (or reject -cpu host): only booting the kernel we
    will run proves it. With no root device the kernel panics at mount
    time and, with panic=-1 and -no-reboot, QEMU exits by itself, in a
    few seconds where KVM works.
    """
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    with tempfile.TemporaryDirectory() as tmp:
        console = Path(tmp) / "console.log"
        cmd = ["qemu-system-x86_64", "-machine", "q35,accel=kvm", *KVM_CPU,
               "-m", "256", "-nodefaults", "-display", "none", "-no-reboot",
               "-kernel", str(kernel / "bzImage"),
               "-append", "console=ttyS0 panic=-1 root=/dev/testbed-probe",
               "-serial", f"file:{console}"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            return False
        text = console.read_text(errors="replace") if console.exists() else ""
        return "Kernel panic" in text and "mount root" in text


def choose_accel(cache, kernel):
    """'kvm' or 'tcg': $TESTBED_ACCEL, else a probe cached per host boot."""
    forced = os.environ.get(ENV_ACCEL)
    if forced:
        if forced not in ("kvm", "tcg"):
            raise TestbedError(f"{ENV_ACCEL} must be kvm or tcg, not {forced}")
        return forced
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    memo = cache / "accel.json"
    try:
        saved = json.loads(memo.read_text())
        if saved.get("boot_id") == boot_id:
            return saved["accel"]
    except (OSError, ValueError, KeyError):
        pass
    start = time.monotonic()
    accel = "kvm" if probe_kvm(kernel) else "tcg"
    say(f"    accelerator: {accel} (KVM probe took "
        f"{time.monotonic() - start:.1f}s)")
    memo.write_text(json.dumps({"boot_id": boot_id, "accel": accel}))
    return accel


def paths(run, role):
    """The files a guest's run uses, by name."""
    return {
        "overlay": run / f"{role}.qcow2",
        "console": run / f"{role}-console.log",
        "qga": run / f"{role}-qga.sock",
        "qmp": run / f"{role}-qmp.sock",
        "shell": run / f"{role}-shell.sock",
        "pid": run / f"{role}.pid",
        "stderr": run / f"{role}-qemu.log",
    }


# The server's Debian kernel preempts voluntarily by default. Samba's
# notifyd reads its inotify queue whenever woken, and on one CPU a rename
# on the server's disk can let it read between IN_MOVED_FROM and
# IN_MOVED_TO: unpaired, it reports a removed and an added name instead
# of a rename (seen: every disk-rename case failed). preempt=none is the
# model of the testbed's own kernel, and of a file server.
ROLE_CMDLINE = {"server": "preempt=none", "client": "kunit.enable=1"}


def kernel_cmdline(role, extra=""):
    """The guest kernel's command line: all console messages (warnings are
    what the splat scan reads), predictable eth0, the role for set-up,
    and the role's own (ROLE_CMDLINE)."""
    return (f"root=/dev/vda rw console=ttyS0,115200 net.ifnames=0 "
            f"testbed.role={role} panic=-1 systemd.show_status=0 "
            f"{ROLE_CMDLINE[role]} {extra}").strip()


def kernel_args(boot):
    """QEMU's -kernel (and -initrd) for `boot`: the directory of a built
    kernel (its bzImage), or the (vmlinuz, initrd) pair of the Debian
    kernel an image carries."""
    if isinstance(boot, tuple):
        vmlinuz, initrd = boot
        return ["-kernel", str(vmlinuz), "-initrd", str(initrd)]
    return ["-kernel", str(Path(boot) / "bzImage")]


def qemu_argv(role, run, boot, accel, cmdline_extra="", incoming=None):
    """The full QEMU command line of a guest booting `boot` (see
    kernel_args()); with `incoming`, one that loads a saved state
    (snapshot.py) instead of booting."""
    p = paths(run, role)
    cpu = KVM_CPU if accel == "kvm" else \
        TCG_CLIENT_CPU if role == "client" else TCG_CPU
    return [
        "qemu-system-x86_64", "-name", f"testbed-{role}",
        "-machine", f"q35,accel={accel}", *cpu, "-m", str(MEMORY_MIB[role]),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        *kernel_args(boot),
        "-append", kernel_cmdline(role, cmdline_extra),
        "-drive", f"file={p['overlay']},if=virtio,format=qcow2,cache=unsafe",
        *network.netdev_args(role, run),
        "-chardev", f"file,id=con,path={p['console']},append=on",
        "-serial", "chardev:con",
        "-device", "virtio-serial-pci",
        "-chardev", f"socket,id=qga,path={p['qga']},server=on,wait=off",
        "-device", "virtserialport,chardev=qga,name=org.qemu.guest_agent.0",
        "-chardev", f"socket,id=sh,path={p['shell']},server=on,wait=off",
        "-device", "virtconsole,chardev=sh",
        "-qmp", f"unix:{p['qmp']},server=on,wait=off",
        "-virtfs", f"local,path={run / 'staging'},mount_tag=testbed,"
                   "security_model=none,readonly=on",
        "-object", "rng-random,filename=/dev/urandom,id=rng",
        "-device", "virtio-rng-pci,rng=rng",
        "-pidfile", str(p["pid"]), "-daemonize",
        *(["-incoming", incoming] if incoming else []),
    ]


def read_pid(run, role):
    try:
        pid = int(paths(run, role)["pid"].read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


def start(role, run, boot, image, accel, cmdline_extra="", incoming=None):
    """Create the overlay (a restore brings its own) and start QEMU
    daemonized, booting `boot` (see kernel_args()); return its pid."""
    p = paths(run, role)
    for key in ("qga", "qmp", "shell"):
        network.check_socket_path(p[key])
    if not incoming:
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F",
                        "raw", "-b", str(image), str(p["overlay"])],
                       check=True, stdout=subprocess.DEVNULL)
    argv = qemu_argv(role, run, boot, accel, cmdline_extra, incoming)
    (run / f"{role}-qemu.argv").write_text(" ".join(argv) + "\n")
    debug(" ".join(argv))
    with open(p["stderr"], "ab") as err:
        proc = subprocess.run(argv, stdout=err, stderr=err,
                              stdin=subprocess.DEVNULL, timeout=60)
    if proc.returncode != 0:
        raise TestbedError(f"QEMU for the {role} did not start "
                           f"(exit {proc.returncode})", log_tail(p["stderr"]))
    pid = read_pid(run, role)
    if pid is None:
        raise TestbedError(f"QEMU for the {role} exited at once",
                           log_tail(p["stderr"]))
    return pid


def wait_agent(run, role, deadline):
    """Wait until the guest agent answers; fail with the console's tail."""
    p = paths(run, role)
    while time.monotonic() < deadline:
        if read_pid(run, role) is None:
            raise TestbedError(f"the {role} guest stopped while booting "
                               f"(console: {p['console']})",
                               log_tail(p["console"]))
        try:
            with GuestAgent(p["qga"], timeout=3):
                return
        except (TestbedError, TimeoutError, OSError):
            time.sleep(1)
    raise TestbedError(f"the {role} guest did not come up in time "
                       f"(console: {p['console']})", log_tail(p["console"]))


# QEMU serves one client per agent socket, and the suite runs some cases
# side by side (suite/run.py): each request to a guest's agent is made under
# that socket's lock, on a connection of its own, and a command is waited
# for by asking for its status, never by holding the socket.
_AGENT_LOCKS = {}
_AGENT_LOCKS_GUARD = threading.Lock()


@contextmanager
def _agent(run, role):
    path = str(paths(run, role)["qga"])
    with _AGENT_LOCKS_GUARD:
        lock = _AGENT_LOCKS.setdefault(path, threading.Lock())
    with lock, GuestAgent(path, timeout=10) as ga:
        yield ga


def guest_exec(run, role, cmd, timeout=60, stdin=None):
    """Run a shell command line in a guest: (status, stdout, stderr) text."""
    pid = guest_spawn(run, role, cmd, timeout, stdin)
    return guest_wait(run, role, pid, time.monotonic() + timeout + 15, cmd)


def guest_spawn(run, role, cmd, timeout, stdin=None):
    """Start a shell command line in a guest and return at once: its pid
    there, for guest_wait(); the guest's timeout(1) bounds it."""
    with _agent(run, role) as ga:
        return ga.spawn(["/bin/sh", "-c", cmd], timeout, stdin)


def guest_wait(run, role, pid, deadline, cmd=""):
    """(status, stdout, stderr) text of a command guest_spawn() started,
    once it has ended; a TestbedError past `deadline` (monotonic)."""
    t0 = time.monotonic()
    while True:
        with _agent(run, role) as ga:
            done = ga.status(pid)
        if done is not None:
            code, out, err = done
            return code, out.decode(errors="replace"), \
                err.decode(errors="replace")
        if time.monotonic() > deadline:
            raise TestbedError(f"guest command did not end in time: "
                               f"{cmd[:200]}")
        # each question costs the guest's agent (and its journal) CPU
        # the cases need: asked at 5 % of the time the command has run,
        # a command ends at most 5 % (and 0.5 s) later than it might
        time.sleep(min(max(0.05, (time.monotonic() - t0) / 20), 0.5))


def stop(run, role, timeout=30):
    """Power the guest off cleanly; QMP quit, then SIGKILL, past a bound."""
    pid = read_pid(run, role)
    if pid is None:
        return
    p = paths(run, role)
    try:
        with GuestAgent(p["qga"], timeout=3) as ga:
            ga.send({"execute": "guest-shutdown",
                     "arguments": {"mode": "powerdown"}})
    except (TestbedError, TimeoutError, OSError):
        pass
    if _wait_exit(pid, timeout):
        return
    debug(f"{role}: no clean poweroff in {timeout}s, QMP quit")
    try:
        with Qmp(p["qmp"], timeout=3) as qmp:
            qmp.send({"execute": "quit"})
    except (TestbedError, TimeoutError, OSError):
        pass
    if _wait_exit(pid, 10):
        return
    os.kill(pid, signal.SIGKILL)
    _wait_exit(pid, 10)


def kill(run, role):
    """Stop a guest at once (Ctrl-C during up)."""
    pid = read_pid(run, role)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
        _wait_exit(pid, 10)


def _wait_exit(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False
