"""The bench's steps in the guests: commands, background programs as
systemd units with their output in a file, tb-serverd requests made from
the server itself, and the counters the measures read (smbd's requests
and memory, the client's slab memory and CPU time)."""
import shlex
import time

from ..common.addresses import SERVER_IP, SERVERD_PORT
from ..common.errors import TestbedError
from ..common.progress import say
from ..capture import read as capture_read
from ..capture.command import CAPTURE_NAME
from ..machine import lifecycle, vm

OUT_DIR = "/run/tb-bench"
CLIENT_MNT = "/mnt/share"     # the share on the client (lifecycle.py mounts it)


def run(testbed_run, role, cmd, timeout=60, what="a bench step"):
    """stdout of `cmd` in the guest; a failure is an error naming `what`."""
    code, out, err = vm.guest_exec(testbed_run, role, cmd, timeout=timeout)
    if code != 0:
        why = (err or out).strip()[-300:] or f"exit status {code}"
        raise TestbedError(f"{what} failed on the {role}: {why}")
    return out


def start_unit(testbed_run, role, unit, argv, env=None):
    """Run `argv` in the background as systemd unit `unit`, its stdout and
    stderr in OUT_DIR/<unit>.out."""
    setenv = "".join(f" --setenv={k}={shlex.quote(v)}"
                     for k, v in (env or {}).items())
    cmd = " ".join(shlex.quote(a) for a in argv)
    run(testbed_run, role,
        f"mkdir -p {OUT_DIR} && rm -f {OUT_DIR}/{unit}.out && "
        f"systemctl reset-failed {unit} 2>/dev/null; "
        f"systemd-run --quiet --unit={unit}{setenv} /bin/sh -c "
        f"{shlex.quote(f'exec {cmd} > {OUT_DIR}/{unit}.out 2>&1')}",
        what=f"starting {unit}")


def unit_output(testbed_run, role, unit):
    return run(testbed_run, role, f"cat {OUT_DIR}/{unit}.out 2>/dev/null; "
               "true", what=f"reading {unit}")


def stop_units(testbed_run, role, units, seconds=20):
    """SIGTERM, a bounded wait, then SIGKILL for what is left."""
    names = " ".join(units)
    run(testbed_run, role,
        f"systemctl kill -s TERM {names} 2>/dev/null; "
        f"for i in $(seq {seconds * 2}); do systemctl -q is-active {names} "
        f"|| break; sleep 0.5; done; systemctl kill -s KILL {names} "
        "2>/dev/null; true", timeout=seconds + 30, what="stopping " + names)


def mount_share(testbed_run, mnt, extra_opts, timeout=60):
    """Another mount of //server/share on the client, at `mnt`: the usual
    options (lifecycle.SHARE_OPTS) and `extra_opts`."""
    run(testbed_run, "client", f"mkdir -p {mnt} && {{ mountpoint -q {mnt} "
        f"|| mount -t cifs //server/share {mnt} -o "
        f"{lifecycle.SHARE_OPTS},{extra_opts}; }}", timeout=timeout,
        what=f"mounting the share on {mnt} ({extra_opts})")


def umount_share(testbed_run, mnt):
    run(testbed_run, "client", f"umount {mnt} 2>/dev/null; true",
        timeout=120, what=f"unmounting {mnt}")


def arm_failure(what, output):
    """The error for a watcher program that said `failed ...`: its last
    two lines (its message and the count it reached) on one line."""
    said = "; ".join(output.strip().splitlines()[-2:])
    return TestbedError(f"{what}: {said[-200:]}")


def wait_output(testbed_run, role, unit, predicate, seconds, what):
    """Poll the unit's output until `predicate(text)` is true; the text."""
    deadline = time.monotonic() + seconds
    while True:
        text = unit_output(testbed_run, role, unit)
        if predicate(text):
            return text
        if time.monotonic() > deadline:
            tail = text.strip().splitlines()[-1:] or ["no output"]
            raise TestbedError(f"{what}: not within {seconds} s "
                               f"({unit}: {tail[0]})")
        time.sleep(1)


def wait_listed(testbed_run, name):
    """Wait (10 s at most) until the client lists CLIENT_MNT/name, made on
    the server."""
    run(testbed_run, "client", f"for i in $(seq 50); do ls {CLIENT_MNT}/"
        f"{name} >/dev/null 2>&1 && exit 0; sleep 0.2; done; exit 1",
        what=f"listing {name}")


def markers(testbed_run):
    """The markers of the run's capture so far."""
    found, _ = capture_read.read_markers(testbed_run / CAPTURE_NAME)
    return found


def serverd(testbed_run, request, timeout=600):
    """A tb-serverd request made from the server guest itself (the host has
    no route to the guests); its value, or an error."""
    script = (f"exec 3<>/dev/tcp/{SERVER_IP}/{SERVERD_PORT} && "
              f"echo {shlex.quote(request)} >&3 && "
              f"read -r -t {timeout} reply <&3 && echo \"$reply\"")
    out = run(testbed_run, "server", f"bash -c {shlex.quote(script)}",
              timeout=timeout + 10, what=f"tb-serverd '{request}'")
    words = out.split()
    if not words or words[0] != "ok":
        raise TestbedError(f"tb-serverd '{request}': {out.strip()}")
    return int(words[1]) if len(words) > 1 else None


def server_notifies(testbed_run, conf, prefix):
    """CHANGE_NOTIFY requests smbd holds on paths starting with prefix."""
    out = run(testbed_run, "server", "smbstatus -N 2>/dev/null | grep -c "
              f"{shlex.quote('^' + conf['SHARE_PATH'] + '/' + prefix)} "
              "|| true", timeout=120, what="smbstatus -N")
    return int(out.strip() or 0)


def server_opens(testbed_run, conf, prefix):
    """Handles smbd holds open on paths starting with prefix."""
    out = run(testbed_run, "server", "smbstatus -L 2>/dev/null | grep -c "
              f"{shlex.quote(conf['SHARE_PATH'] + '.*' + prefix)} || true",
              timeout=120, what="smbstatus -L")
    return int(out.strip() or 0)


def smbd_rss_kib(testbed_run):
    """Resident memory of every smbd process on the server, KiB."""
    out = run(testbed_run, "server", "for p in $(pidof smbd); do "
              "grep VmRSS /proc/$p/status; done | awk '{s+=$2} END "
              "{print s+0}'", what="smbd's memory")
    return int(out.strip() or 0)


def client_slab_bytes(testbed_run):
    """The client's slab memory (kmalloc included), bytes: /proc/meminfo's
    Slab once unpinned dentries and inodes are dropped (a watch pins its
    directory's inode: that counts as the watch's) and RCU-freed objects
    have gone."""
    out = run(testbed_run, "client", "sync; echo 2 > /proc/sys/vm/"
              "drop_caches; sleep 1; awk '/^Slab:/ {print $2}' /proc/meminfo",
              what="/proc/meminfo")
    return int(out.strip() or 0) * 1024


def client_busy_jiffies(testbed_run):
    """The client's CPU time spent busy (all but idle and iowait)."""
    out = run(testbed_run, "client", "head -1 /proc/stat", what="/proc/stat")
    v = [int(x) for x in out.split()[1:]]
    return sum(v) - v[3] - v[4]


def client_credits(testbed_run):
    """(credits, requests on the wire) of the client's first connection, from
    DebugData."""
    out = run(testbed_run, "client", "cat /proc/fs/cifs/DebugData",
              what="DebugData")
    credits = on_wire = None
    for line in out.splitlines():
        if "Number of credits:" in line and credits is None:
            credits = int(line.split("Number of credits:")[1].split(",")[0])
        if "Req On Wire:" in line and on_wire is None:
            on_wire = int(line.split("Req On Wire:")[1].split()[0])
    return credits, on_wire


def each_count(measure_one, testbed_run, conf, counts, key, stop_on_error):
    """[measure_one(run, conf, n, i) for each count]; a count that fails
    gives a row with the error (and ends the list with stop_on_error: a
    larger count would fail the same way)."""
    rows = []
    for i, n in enumerate(counts):
        try:
            rows.append(measure_one(testbed_run, conf, n, i))
        except TestbedError as e:
            say(f"    {key} {n}: {e}")
            rows.append({key: n, "error": str(e)})
            if stop_on_error:
                break
    return rows
