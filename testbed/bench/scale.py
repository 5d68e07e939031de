"""The bench's scale measure, and the watches the I/O measure arms: N
directories made on the server's disk, one inotify watch on each
(client-tests/helpers/bench/tb-benchscale.c on a remoteinotify mount), then one
server-side create in each. Per N: the time until the server holds N
requests, the time until every watcher had its event (capture clock:
tb-serverd marks the creates, the watcher marks the last delivery),
the server's handles, smbd's memory per watch, the client's slab memory
per watch (and after the watches are gone: back at the baseline?), and of
it what the same inotify watches cost on a mount without remote
notification (the peer), the client's credits and requests on the
wire."""
import time

from ..common.errors import TestbedError
from ..common.progress import say
from ..machine import vm
from . import guest_steps as guest

UNIT = "tb-bench-scale"
POLL_SECONDS = 2
EVENT_SECONDS = 600     # every directory heard of its change
RELEASE_SECONDS = 300   # the server's requests gone after the watcher


def arm_seconds(n):
    """The bound on arming n watches: 50 ms each under TCG, 2 min at least."""
    return max(120, n // 20)


def make_dirs(run, prefix, n):
    guest.serverd(run, f"mkdirs {prefix} {n}", timeout=60 + n // 50)
    # the client lists them now (readdir instantiates their dentries), so
    # that arming measures the watches rather than the lookups
    guest.run(run, "client",
              f"ls -l {guest.CLIENT_MNT} | grep -c ' {prefix}-'",
              timeout=120 + n // 20, what="listing the directories")


def raise_limits(run, n):
    """dir_watch_max and inotify's per-user watch limit on the client, and
    the server's inotify watch limit, above n: smbd watches each directory
    on its disk with inotify (kernel change notify), and the server guest's
    default (8,310 with 1 GiB) is the first limit a bench of 10,000 meets:
    past it, smbd holds the requests but never hears of a change on its
    disk. A server with that many watched directories needs it raised."""
    guest.run(run, "client", "echo $(( " + str(n) + " + 1024 )) > "
              "/sys/module/cifs/parameters/dir_watch_max && "
              f"sysctl -q fs.inotify.max_user_watches={n + 1024}",
              what="raising dir_watch_max")
    guest.run(run, "server", "sysctl -q fs.inotify.max_user_watches="
              f"$(( {n} + 16384 ))", what="raising the server's inotify "
              "watch limit")


def arm(run, conf, prefix, n):
    """Start the watcher on prefix-0..n-1; seconds until the server holds
    n requests (polled every POLL_SECONDS), or an error naming the limit."""
    t0 = time.monotonic()
    guest.start_unit(run, "client", UNIT,
                     [f"{vm.CLIENT_BIN}/tb-benchscale", "arm",
                      f"{guest.CLIENT_MNT}/{prefix}", str(n)])
    deadline = t0 + arm_seconds(n)
    held = 0
    while time.monotonic() < deadline:
        out = guest.unit_output(run, "client", UNIT)
        if "failed " in out:
            raise guest.arm_failure(f"arming {n} watches", out)
        held = guest.server_notifies(run, conf, prefix + "-")
        if held >= n:
            return time.monotonic() - t0
        time.sleep(POLL_SECONDS)
    raise TestbedError(f"arming {n} watches: the server holds {held} requests "
                       f"after {arm_seconds(n)} s (limit: dir_watch_max, the "
                       "server's credits or its memory; see DebugData)")


def release(run, conf, prefix):
    """Stop the watcher; seconds until the server holds no request."""
    t0 = time.monotonic()
    guest.stop_units(run, "client", [UNIT])
    while time.monotonic() - t0 < RELEASE_SECONDS:
        if guest.server_notifies(run, conf, prefix + "-") == 0:
            return time.monotonic() - t0
        time.sleep(POLL_SECONDS)
    return None


LOCAL_UNIT = "tb-bench-scale-local"
LOCAL_MNT = "/mnt/bench-local"


def inotify_only_bytes(run, prefix, n):
    """The peer of the client's memory per watch: the same n inotify watches
    on a noremotenotify mount of the share (its own superblock, no remote
    watch, no server request), so what inotify itself costs (its mark and
    the directory's inode, which any inotify watch pins) is told apart from
    the remote watch's share."""
    guest.mount_share(run, LOCAL_MNT, "noremotenotify")
    try:
        guest.run(run, "client", f"ls {LOCAL_MNT} | grep -c '^{prefix}-'",
                  timeout=120 + n // 20,
                  what="listing the directories without remote notification")
        slab0 = guest.client_slab_bytes(run)
        guest.start_unit(run, "client", LOCAL_UNIT,
                         [f"{vm.CLIENT_BIN}/tb-benchscale", "arm",
                          f"{LOCAL_MNT}/{prefix}", str(n)])
        text = guest.wait_output(run, "client", LOCAL_UNIT,
                                 lambda t: f"armed {n}\n" in t or
                                 "failed " in t, arm_seconds(n),
                                 f"arming {n} local-only watches")
        if "failed " in text:
            raise guest.arm_failure(f"arming {n} local-only watches", text)
        slab1 = guest.client_slab_bytes(run)
        return round((slab1 - slab0) / n)
    finally:
        guest.stop_units(run, "client", [LOCAL_UNIT])
        guest.umount_share(run, LOCAL_MNT)


def _all_heard_seconds(run, prefix, n):
    """From the capture: the touchall marker to the watcher's scale-all."""
    markers = guest.markers(run)
    start = [m.time for m in markers if m.kind == "change"
             and m.keys.get("op") == "touchall"
             and m.keys.get("path") == prefix]
    done = [m.time for m in markers if m.kind == "scale-all"
            and m.keys.get("n") == str(n)]
    if not start:
        return None
    done = [t for t in done if t >= start[-1]]
    return done[0] - start[-1] if done else None


def remove_dirs(run, conf, prefix, n):
    guest.run(run, "server", f"cd {conf['SHARE_PATH']} && "
              f"find . -maxdepth 1 -name '{prefix}-*' -exec rm -rf {{}} +",
              timeout=120 + n // 100, what="removing the directories")


def measure_one(run, conf, n, index):
    """The figures for n watched directories; the directories go whatever
    happens."""
    prefix = f"bench-scale-{int(time.time())}-{index}"
    try:
        make_dirs(run, prefix, n)
        raise_limits(run, n)
        slab0, rss0 = guest.client_slab_bytes(run), guest.smbd_rss_kib(run)
        row = {"watches": n}
        try:
            row["arm_s"] = round(arm(run, conf, prefix, n), 1)
            slab1 = guest.client_slab_bytes(run)
            rss1 = guest.smbd_rss_kib(run)
            row["client_bytes_per_watch"] = round((slab1 - slab0) / n)
            row["smbd_kib_per_watch"] = round((rss1 - rss0) / n, 2)
            row["server_handles"] = guest.server_opens(run, conf,
                                                       prefix + "-")
            row["credits"], row["on_wire"] = guest.client_credits(run)
            guest.serverd(run, f"touchall {prefix} {n} hello",
                          timeout=60 + n // 50)
            guest.wait_output(run, "client", UNIT,
                              lambda t: f"status {n}\n" in t, EVENT_SECONDS,
                              f"every one of {n} watchers hearing of its "
                              "change")
            time.sleep(1)
            heard = _all_heard_seconds(run, prefix, n)
            row["all_heard_s"] = None if heard is None else round(heard, 2)
        finally:
            row["release_s"] = release(run, conf, prefix)
        time.sleep(2)            # the watches' linger, then their frees
        slab2 = guest.client_slab_bytes(run)
        row["client_bytes_after_per_watch"] = round((slab2 - slab0) / n)
        local = inotify_only_bytes(run, prefix, n)
        row["inotify_only_bytes_per_watch"] = local
        row["remote_bytes_per_watch"] = row["client_bytes_per_watch"] - local
    finally:
        remove_dirs(run, conf, prefix, n)
    say(f"    {n} watches: armed in {row['arm_s']} s, all heard in "
        f"{row['all_heard_s']} s, {row['client_bytes_per_watch']} B/watch "
        f"on the client ({row['remote_bytes_per_watch']} B of it the remote "
        "watch's)")
    return row


def measure(run, conf, counts):
    """[row per count]; a count that cannot be reached ends the measure with
    the reason in its row."""
    return guest.each_count(measure_one, run, conf, counts, "watches", True)
