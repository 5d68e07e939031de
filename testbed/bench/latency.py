"""The bench's latency measure: every watcher armed at once on one fresh
directory of the share, then N creates made on the server (alternately on
its disk and through a second SMB session), spaced so that they do not
coalesce. The server marks each change just before making it and each
watcher marks each delivery (client-tests/helpers/bench/tb-benchdrive.c,
tb-benchwatch.c); the host's capture of the private segment stamps both on
one clock, so no guest clock (drifting under TCG) enters a figure."""
import shlex
import time

from ..common.errors import TestbedError
from ..common.progress import say
from ..machine import vm
from . import guest_steps as guest
from . import stats

# (watcher, what it is), in the order of the report
WATCHERS = (
    ("dnotify", "F_NOTIFY, real-time signal, then a listing"),
    ("inotify", "inotify IN_CREATE (remoteinotify mount)"),
    ("fanotify", "fanotify FAN_CREATE, FAN_REPORT_REMOTE"),
    ("smbclient", "smbclient notify, its own session"),
    ("ioctl", "CIFS_IOC_NOTIFY_INFO, issued again after each return"),
    ("poll100", "stat + listing every 100 ms (chokidar)"),
    ("poll1000", "stat + listing every 1 s (watchdog)"),
)
KERNEL_WATCHERS = ("dnotify", "inotify", "fanotify")
# The pollers list the directory over a connection of their own, as
# smbclient has its own session: on the watchers' connection their
# listings every 100 ms kept that smbd busy, and the server's responses
# to the other watchers waited behind them.
POLLERS = ("poll100", "poll1000")
POLL_MNT = "/mnt/bench-poll"
BOUND = 10.0            # seconds: a delivery later than this is a miss
ARM_SECONDS = 90        # every watcher armed, the server holding requests
SETTLE_SECONDS = 3.0    # after the last change, for the pollers


CLIENT_CRED = "/etc/testbed/cifs.cred"    # the client's credentials file


def _smbclient_args(conf, host):
    """smbclient's session: the client has a credentials file; the server
    guest uses the testbed's own password (an isolated network)."""
    if host == "server":
        return f"-A {CLIENT_CRED} //server/share -m SMB3"
    return (f"//{host}/share -U {conf['SMB_USER']}%{conf['SMB_PASS']} "
            "-m SMB3")


def _unit(name):
    return f"tb-bench-{name}"


def _start_watchers(run, conf, dirname):
    """One systemd unit per watcher on the client."""
    env = {"SMBCLIENT_ARGS": _smbclient_args(conf, "server")}
    for name, _ in WATCHERS:
        if name == "smbclient":
            target = dirname
        elif name in POLLERS:
            target = f"{POLL_MNT}/{dirname}"
        else:
            target = f"{guest.CLIENT_MNT}/{dirname}"
        guest.start_unit(run, "client", _unit(name),
                         [f"{vm.CLIENT_BIN}/tb-benchwatch", name, target], env)


def _outputs(run):
    return {name: guest.unit_output(run, "client", _unit(name))
            for name, _ in WATCHERS}


def _wait_armed(run, conf, dirname):
    """Wait until each watcher said armed or unavailable and the server holds
    the requests of the armed ones (the kernel's watch serves three)."""
    deadline = time.monotonic() + ARM_SECONDS
    while True:
        outs = _outputs(run)
        said = {n for n, text in outs.items()
                if f"armed {n}" in text or f"unavailable {n}" in text}
        armed = {n for n, text in outs.items() if f"armed {n}" in text}
        want = (1 if armed & set(KERNEL_WATCHERS) else 0) + \
            len(armed & {"smbclient", "ioctl"})
        if len(said) == len(WATCHERS) and \
                guest.server_notifies(run, conf, dirname) >= want:
            return armed
        if time.monotonic() > deadline:
            missing = [n for n, _ in WATCHERS if n not in said]
            raise TestbedError("the bench's watchers did not arm within "
                               f"{ARM_SECONDS} s: "
                               f"{', '.join(missing) or 'server requests'}")
        time.sleep(1)


def _stop_watchers(run, conf, dirname):
    """SIGTERM every watcher; the ioctl one sits in a blocking call that
    only a change ends, so one more file is made; then a bounded wait."""
    units = [_unit(n) for n, _ in WATCHERS]
    guest.run(run, "client", "systemctl kill -s TERM " + " ".join(units) +
              " 2>/dev/null; true", what="stopping the watchers")
    guest.run(run, "server", f"runuser -u {conf['SMB_USER']} -- touch "
              f"{conf['SHARE_PATH']}/{dirname}/zz-end", what="the last change")
    guest.stop_units(run, "client", units)


def measure_once(run, conf, n, spacing, index):
    """One pass: the directory, the armed watchers, their outputs, and the
    client's busy CPU time (jiffies) while the changes were made."""
    dirname = f"bench-lat-{int(time.time())}-{index}"
    share = conf["SHARE_PATH"]
    guest.run(run, "server", f"runuser -u {conf['SMB_USER']} -- mkdir "
              f"{share}/{dirname}", what="making the bench directory")
    guest.wait_listed(run, dirname)
    _start_watchers(run, conf, dirname)
    try:
        armed = _wait_armed(run, conf, dirname)
        say(f"    pass {index + 1}: {len(armed)} watchers armed; {n} changes "
            f"{spacing:g} s apart")
        busy0 = guest.client_busy_jiffies(run)
        args = shlex.quote(_smbclient_args(conf, "127.0.0.1"))
        guest.run(run, "server",
                  f"SMBCLIENT_ARGS={args} {vm.GUEST_BIN}/tb-benchdrive "
                  f"{share} {dirname} {n} {int(spacing * 1000)} "
                  f"{conf['SMB_UID']} both",
                  timeout=int(n * spacing) + 120, what="making the changes")
        time.sleep(SETTLE_SECONDS)
        busy = guest.client_busy_jiffies(run) - busy0
    finally:
        _stop_watchers(run, conf, dirname)
    outs = _outputs(run)
    guest.run(run, "server", f"rm -rf {share}/{dirname}", what="cleaning up")
    return dirname, armed, outs, busy


def analyse(markers, dirname, armed, outs, busy_jiffies, hz=100):
    """{watcher: summary dict} of one pass from the capture's markers."""
    prefix = f"{dirname}/"
    changes_all = [m for m in markers if m.kind == "change"
                   and m.keys.get("path", "").startswith(prefix)]
    changes = stats.changes_from_markers(changes_all)
    if not changes:
        raise TestbedError(f"no change marker of {dirname} in the capture")
    t0 = changes[0][0]
    names = {name for _, name in changes}
    delivers = [m for m in markers if m.kind == "deliver" and m.time >= t0
                and m.keys.get("name") in names]
    delivered = stats.deliveries_from_markers(delivers)
    result = {"_pass": {"dir": dirname, "changes": len(changes),
                        "client_busy_ms_per_change":
                        busy_jiffies * 1000 / hz / len(changes)}}
    for name, what in WATCHERS:
        entry = {"what": what, "available": name in armed}
        if name in armed:
            lat, missed = stats.pair(changes, delivered.get(name, {}),
                                     BOUND)
            entry.update(stats.summarize(lat, missed))
            entry["latencies"] = lat
            cpu = [stats.per_change_cpu_us(line, len(changes))
                   for line in outs.get(name, "").splitlines()]
            cpu = [c for c in cpu if c]
            entry["cpu_us_per_change"] = cpu[0][1] if cpu else None
        result[name] = entry
    return result


def measure(run, conf, n, spacing, repeat):
    """`repeat` passes; [pass result] (see analyse)."""
    passes = []
    guest.mount_share(run, POLL_MNT, "nosharesock")
    try:
        for i in range(repeat):
            dirname, armed, outs, busy = measure_once(run, conf, n, spacing,
                                                      i)
            time.sleep(1)       # the last markers reach the capture file
            passes.append(analyse(guest.markers(run), dirname, armed, outs,
                                  busy))
    finally:
        guest.umount_share(run, POLL_MNT)
    return passes
