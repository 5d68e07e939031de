"""Fault cases the host drives, with watches armed on the client: smbd
restarted, the link down for 20 s, smbd killed hard, the client unmounting,
the watcher killed, F_NOTIFY on a soft mount whose server stopped, a
umount while a report waits for a stopped server. Each
case runs on a mount of its own (/mnt/fault, its own connection) with a
tb-watch process watching a fresh directory, and then checks what must
hold after any fault: every step bounded, a change made after recovery
signalled within a bound (when the watcher lives), no handle of the
client's left on the server, no splat (the suite scans the console around
each case)."""

import errno
import time

from ..common.errors import TestbedError
from ..machine import server_programs, vm
from ..machine.guest_agent import Qmp

FAULT_MNT = "/mnt/fault"
WATCH_LOG = "/tmp/tb-watch.log"
RECOVERY_SECONDS = 90          # reconnect + reopen + a change, under TCG
LINK_DOWN_SECONDS = 20
KILLED_EXIT_SECONDS = 5        # a SIGKILLed watcher is gone within this
UMOUNT_SECONDS = 30            # umount -f of a hard mount, server stopped
SOFT_FNOTIFY_SECONDS = 30      # F_NOTIFY on a soft mount, server stopped
MOUNT_OPTS = "vers=3.1.1,nosharesock,credentials=/etc/testbed/cifs.cred"

# SIGKILL the watcher and wait until it has exited (at most a bound in
# centiseconds, timed by /proc/uptime), printing how long that took.
# Exited: no tb-watch in /proc but a zombie, whose files (the watch) went
# before it became one; when init reaps it is not the kernel's exit path.
# Shell builtins but pkill and sleep: each program run costs the guest
# some 0.1 s.
_KILL_AND_WAIT = (
    "alive() { for s in /proc/[0-9]*/stat; do read -r l < $s || continue; "
    "case $l in *'(tb-watch) Z'*) ;; *'(tb-watch) '*) return 0;; esac; "
    "done 2>/dev/null; return 1; }; "
    "pkill -KILL -x tb-watch; read t0 x < /proc/uptime; bound=%d; "
    "while alive; do read t x < /proc/uptime; "
    "[ $(( ${t%%.*}${t#*.} - ${t0%%.*}${t0#*.} )) -gt $bound ] && exit 1; "
    "sleep 0.1; done; read t x < /proc/uptime; "
    "echo $(( ${t%%.*}${t#*.} - ${t0%%.*}${t0#*.} ))")


def _sh(run, role, cmd, timeout=60):
    """(exit status, output) of a command in a guest; errors are failures."""
    code, out, err = vm.guest_exec(run, role, cmd, timeout=timeout)
    return code, out + err


def _must(run, role, cmd, timeout=60):
    code, out = _sh(run, role, cmd, timeout)
    if code != 0:
        raise TestbedError(f"{role}: '{cmd[:60]}' failed (exit {code}): "
                           f"{out.strip()[-200:]}")
    return out


def _poll(what, check, seconds):
    """Poll check() every half second for at most `seconds`; the seconds
    it took, or a TestbedError naming `what`."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if check():
            return time.monotonic() - t0
        time.sleep(0.5)
    raise TestbedError(f"{what}: not within {seconds}s")


class Watch:
    """A tb-watch process on a directory of the fault mount."""

    def __init__(self, run, name, opts=MOUNT_OPTS):
        self.run, self.name, self.opts = run, name, opts
        self.dir = f"fault-{name}-{int(time.time())}"
        self.path = f"{FAULT_MNT}/{self.dir}"

    def start(self):
        """Mount (unless mounted), make the directory, start the watcher:
        one command in the guest (each costs some 0.6 s under TCG)."""
        _must(self.run, "client", f"mkdir -p {FAULT_MNT}; mountpoint -q "
              f"{FAULT_MNT} || mount -t cifs //server/share {FAULT_MNT} -o "
              f"{self.opts}; mkdir {self.path} && {self._spawn_cmd()}", 120)

    def _spawn_cmd(self):
        # tb-watch returns once its F_NOTIFY is set, the watcher going on
        return (f": > {WATCH_LOG}; TB_TEST_ID=faults.{self.name} "
                f"{vm.CLIENT_BIN}/tb-watch {self.path} {WATCH_LOG} 600 "
                "</dev/null >/dev/null 2>&1 || { cat " + WATCH_LOG +
                "; exit 1; }")

    def spawn(self):
        """Start tb-watch on the directory; return once its F_NOTIFY is set."""
        _must(self.run, "client", self._spawn_cmd(), 90)

    def log(self):
        return _sh(self.run, "client", f"cat {WATCH_LOG}", 20)[1]

    def signals(self):
        return self.log().count("sig fd=")

    def kill(self, seconds=30):
        """SIGKILL the watcher and wait in the guest until it is gone; the
        seconds that took there, or a TestbedError past `seconds`."""
        code, out = _sh(self.run, "client", _KILL_AND_WAIT % (seconds * 100),
                        seconds + 30)
        if code != 0:
            raise TestbedError(f"the SIGKILLed watcher still runs after "
                               f"{seconds}s")
        return int(out.split()[-1]) / 100

    def watch_line(self):
        """This watch's line in the client's /proc/fs/cifs/DebugData."""
        out = _sh(self.run, "client", "cat /proc/fs/cifs/DebugData", 20)[1]
        return next((line.strip() for line in out.splitlines()
                     if "Notify:" in line and self.dir in line), "")

    def settle(self, seconds=RECOVERY_SECONDS):
        """Wait until the watch is armed again and no signal has come for
        2 s (a reconnect reports one event); the seconds it took."""
        t0 = time.monotonic()
        _poll("the watch armed again", lambda: " armed " in
              self.watch_line(), seconds)
        last = -1
        while time.monotonic() - t0 < seconds:
            now = self.signals()
            if now == last:
                break
            last = now
            time.sleep(2)
        return time.monotonic() - t0

    def server_opens(self):
        return server_programs.ask(self.run, f"opens {self.dir}")

    def change_is_signalled(self, seconds=RECOVERY_SECONDS):
        """Create files on the server's disk until one is signalled."""
        before = self.signals()
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < seconds:
            n += 1
            _must(self.run, "server", f"touch /srv/share/{self.dir}/after-{n}")
            try:
                _poll("", lambda: self.signals() > before, 10)
                return time.monotonic() - t0
            except TestbedError:
                continue
        raise TestbedError(f"no signal for a change made after recovery "
                           f"within {seconds}s")

    def cleanup(self):
        _sh(self.run, "client", f"pkill -KILL -x tb-watch; "
            f"rm -rf {self.path}; umount {FAULT_MNT} || umount -l {FAULT_MNT}",
            90)


def _qmp_link(run, role, up):
    with Qmp(vm.paths(run, role)["qmp"], timeout=10) as qmp:
        qmp.command("set_link", name="seg", up=up)


def smbd_restarted(run, w):
    _must(run, "server", "systemctl restart smbd", 120)
    return ["smbd restarted"]


def link_down_20s(run, w):
    _qmp_link(run, "client", False)
    try:
        time.sleep(LINK_DOWN_SECONDS)
    finally:
        _qmp_link(run, "client", True)
    return [f"client link down {LINK_DOWN_SECONDS}s, then up"]


def _stop_smbd(run):
    _must(run, "server", "systemctl stop smbd", 120)


def _start_smbd(run):
    _must(run, "server", "systemctl reset-failed smbd; systemctl start smbd",
          120)


def smbd_killed_hard(run, w):
    _sh(run, "server", "systemctl kill --signal=KILL smbd", 30)
    _poll("smbd's death", lambda: _sh(run, "server",
                                      "systemctl is-active -q smbd")[0] != 0,
          30)
    _start_smbd(run)
    return ["every process of smbd.service killed with SIGKILL, smbd "
            "started again"]


def umount_with_watch(run, w):
    notes = []
    t0 = time.monotonic()
    code, out = _sh(run, "client", f"umount {FAULT_MNT}", 60)
    notes.append(f"umount: exit {code} in {time.monotonic() - t0:.1f}s "
                 f"({out.strip()[-60:]})")
    if code == 0:
        raise TestbedError("umount succeeded with a watcher's fd open")
    t0 = time.monotonic()
    code, out = _sh(run, "client", f"umount -f {FAULT_MNT}", 60)
    notes.append(f"umount -f: exit {code} in {time.monotonic() - t0:.1f}s")
    w.kill()
    _must(run, "client", f"umount {FAULT_MNT}", 60)
    notes.append("watcher killed, umount done")
    return notes


def hard_mount_watcher_sigkilled(run, w):
    """The watcher of a hard mount whose server has stopped is SIGKILLed:
    it is gone within KILLED_EXIT_SECONDS (closing its watch never waits
    for the server); once smbd is back a new watcher is signalled."""
    _stop_smbd(run)
    notes = ["smbd stopped"]
    try:
        time.sleep(2)
        secs = w.kill(KILLED_EXIT_SECONDS)
        notes.append(f"watcher SIGKILLed, gone in {secs:.2f}s")
    finally:
        _start_smbd(run)
    notes.append("smbd started again")
    w.spawn()
    notes.append("a new watcher on the same hard mount")
    return notes


def umount_force_server_stopped(run, w):
    """umount -f with a watch armed and the server stopped: each step is
    bounded, and the watches and their requests end with the mount."""
    _stop_smbd(run)
    notes = ["smbd stopped"]
    try:
        t0 = time.monotonic()
        code, out = _sh(run, "client", f"umount -f {FAULT_MNT}", 60)
        notes.append(f"umount -f: exit {code} in {time.monotonic() - t0:.1f}s")
        secs = w.kill(KILLED_EXIT_SECONDS)
        notes.append(f"watcher SIGKILLed, gone in {secs:.2f}s")
        # /proc/mounts, not mountpoint(1): a stat of a hard mount's root
        # waits for the server to come back, as a hard mount must
        t0 = time.monotonic()
        code, out = _sh(run, "client", f"umount -f {FAULT_MNT}",
                        UMOUNT_SECONDS)
        if code != 0:
            raise TestbedError(f"umount -f once the watcher is gone: exit "
                               f"{code} ({out.strip()[-80:]})")
        code, _ = _sh(run, "client", f"grep -q ' {FAULT_MNT} ' /proc/mounts",
                      20)
        if code == 0:
            raise TestbedError(f"{FAULT_MNT} still mounted after umount -f")
        notes.append(f"unmounted in {time.monotonic() - t0:.1f}s")
    finally:
        _start_smbd(run)
    notes.append("smbd started again")
    return notes


def soft_mount_fnotify_server_stopped(run, w):
    """F_NOTIFY on a soft mount whose server has stopped returns within
    SOFT_FNOTIFY_SECONDS, failing with EHOSTDOWN as the mount's other
    operations do, instead of waiting for the server, and leaving the
    file with no owner, as it was; the watch armed before the stop hears
    a change once smbd is back.  A second watcher opens the directory
    first, and sets F_NOTIFY once smbd is down."""
    go, log, res = "/tmp/tb-go", "/tmp/tb-watch-soft.log", "/tmp/tb-soft.res"
    _must(run, "client", f"rm -f {go} {log} {res}; ( {vm.CLIENT_BIN}/tb-watch "
          f"{w.path} {log} 60 {go} </dev/null >/dev/null 2>&1; echo $? > "
          f"{res} ) </dev/null >/dev/null 2>&1 &", 30)
    _poll("the second watcher opening the directory", lambda: "opened" in
          _sh(run, "client", f"cat {log}", 20)[1], 60)
    _stop_smbd(run)
    notes = ["a second watcher opened the directory; smbd stopped"]
    try:
        time.sleep(2)
        _must(run, "client", f"touch {go}", 20)
        secs = _poll("F_NOTIFY returning", lambda: _sh(
            run, "client", f"test -s {res}", 20)[0] == 0, 90)
        out = " ".join(_sh(run, "client", f"cat {log} {res}", 20)[1].split())
        notes.append(f"F_NOTIFY returned in {secs:.1f}s ({out})")
        if secs > SOFT_FNOTIFY_SECONDS:
            raise TestbedError(f"F_NOTIFY took {secs:.0f}s on a soft mount "
                               f"with the server stopped (bound "
                               f"{SOFT_FNOTIFY_SECONDS}s)")
        if f"error {errno.EHOSTDOWN}" not in out:
            raise TestbedError(f"F_NOTIFY did not fail with EHOSTDOWN: {out}")
        if "owner 0" not in out:
            raise TestbedError(f"the failed F_NOTIFY made its caller the "
                               f"file's owner: {out}")
    finally:
        _start_smbd(run)
    notes.append("smbd started again")
    return notes


# umount2(argv[1], 0) from Python's ctypes; exits with the errno.
_UMOUNT2 = ("import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
            "sys.exit(ctypes.get_errno() if libc.umount2("
            "sys.argv[1].encode(), 0) else 0)")


def umount_during_report_server_stopped(run, w):
    """A umount while a report waits for a server that stopped: 3,000
    files made on the server's disk, names the client never saw, so that
    its reports ask the server of each whether it is a directory; every
    smbd stopped (SIGSTOP) in the middle, the watcher killed, the hard
    mount unmounted with umount(2). It returns within UMOUNT_SECONDS,
    not when the server is back: a report pins the superblock as an open
    file does, not by s_umount (which umount waited for, as long as the
    server was stopped). The superblock goes once the report is over,
    after smbd continues."""
    res = "/tmp/tb-umount.res"
    _must(run, "server", f"cd /srv/share/{w.dir} && (i=0; while [ $i -lt "
          "3000 ]; do : > f-$i; i=$((i + 1)); done) </dev/null >/dev/null "
          "2>&1 &", 30)
    _poll("the reports under way", lambda: w.signals() >= 20, 60)
    _must(run, "server", "systemctl kill --signal=STOP smbd", 30)
    notes = [f"smbd stopped after {w.signals()} signal(s)"]
    try:
        secs = w.kill(KILLED_EXIT_SECONDS)
        notes.append(f"watcher SIGKILLed, gone in {secs:.2f}s")
        # umount(2) itself: umount(8) stats the mount point first, which
        # on a hard mount waits for the server whatever the kernel does
        _must(run, "client", f"rm -f {res}; (python3 -c '{_UMOUNT2}' "
              f"{FAULT_MNT}; echo $? > {res}) </dev/null >/dev/null 2>&1 &",
              20)
        try:
            secs = _poll("umount returning", lambda: _sh(
                run, "client", f"test -s {res}", 20)[0] == 0, UMOUNT_SECONDS)
        except TestbedError as e:
            raise TestbedError(f"{e}: umount waits for the server") from e
        code = _sh(run, "client", f"cat {res}", 20)[1].strip()
        notes.append(f"umount returned in {secs:.1f}s (exit {code})")
        if code != "0":
            raise TestbedError(f"umount(2) failed: errno {code}")
    finally:
        _must(run, "server", "systemctl kill --signal=CONT smbd", 30)
        notes.append("smbd continued")
        _poll("umount ending", lambda: _sh(run, "client", f"test -s {res}",
                                           20)[0] == 0, RECOVERY_SECONDS)
        _sh(run, "server", f"rm -rf /srv/share/{w.dir}", 60)
    return notes


def watcher_sigkilled(run, w):
    secs = w.kill()
    return [f"watcher killed with SIGKILL while its request was pending, "
            f"gone in {secs:.2f}s"]


HARD_OPTS = MOUNT_OPTS + ",hard"

# name -> (fault, whether the watcher outlives it, mount options)
FAULTS = {
    "smbd_restarted": (smbd_restarted, True, MOUNT_OPTS),
    "link_down_20s": (link_down_20s, True, MOUNT_OPTS),
    "smbd_killed_hard": (smbd_killed_hard, True, MOUNT_OPTS),
    "umount_with_watch": (umount_with_watch, False, MOUNT_OPTS),
    "watcher_sigkilled": (watcher_sigkilled, False, MOUNT_OPTS),
    "hard_mount_watcher_sigkilled": (hard_mount_watcher_sigkilled, True,
                                     HARD_OPTS),
    "umount_force_server_stopped": (umount_force_server_stopped, False,
                                    HARD_OPTS),
    "soft_mount_fnotify_server_stopped": (soft_mount_fnotify_server_stopped,
                                          True, MOUNT_OPTS),
    "umount_during_report_server_stopped": (
        umount_during_report_server_stopped, False, HARD_OPTS),
}


def run_fault(run, name):
    """(ok, output, reason, counts) of one fault case."""
    fault, survives, opts = FAULTS[name]
    w = Watch(run, name, opts)
    lines = []
    try:
        t0 = time.monotonic()
        w.start()
        lines.append(f"watching {w.path} (mounted and armed in "
                     f"{time.monotonic() - t0:.1f}s); server handles: "
                     f"{w.server_opens()}")
        lines += fault(run, w)
        if survives:
            secs = w.settle()
            lines.append(f"watch armed again after {secs:.1f}s: "
                         f"{w.watch_line()}")
            lines.append(f"signals so far: {w.signals()}")
            secs = w.change_is_signalled()
            lines.append(f"a change after recovery signalled in {secs:.1f}s "
                         f"({w.signals()} signal(s) in all)")
            opens = w.server_opens()
            lines.append(f"server handles on the directory: {opens}")
            if opens != 1:
                raise TestbedError(f"{opens} server handles for the watched "
                                   "directory, not 1")
        else:
            secs = _poll("the server closing the watch's handle",
                         lambda: w.server_opens() == 0, 30)
            lines.append(f"server handles gone in {secs:.1f}s")
        ok, why = True, ""
    except (TestbedError, TimeoutError, OSError) as e:
        ok, why = False, str(e)
    finally:
        try:
            t0 = time.monotonic()
            w.cleanup()
            lines.append(f"cleaned up in {time.monotonic() - t0:.1f}s")
        except (TestbedError, TimeoutError, OSError) as e:
            lines.append(f"cleanup: {e}")
    text = "".join(f"# {line}\n" for line in lines)
    return ok, text, why, (1, 0, 0) if ok else (0, 1, 0)
