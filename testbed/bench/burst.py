"""The bench's bursts: N files created at once on the server's disk in one
watched directory (tb-serverd "creates"), one inotify watcher on it
(client-tests/helpers/bench/tb-benchscale.c burst). Per N: events delivered with a name
and without one (the client's "changes missed" after an overflow),
inotify queue overflows, the time until the watcher was quiet (host clock,
one-second resolution), whether the client's listing equals the server's,
and the client's CPU time."""
import time

from ..common.errors import TestbedError
from ..common.progress import say
from ..machine import vm
from . import guest_steps as guest

UNIT = "tb-bench-burst"
QUIET_MS = 3000
ARM_SECONDS = 60


def _status(text):
    """The last 'status NAMED NAMELESS OVERFLOWS QUIET_MS' line's numbers."""
    for line in reversed(text.splitlines()):
        words = line.split()
        if len(words) == 5 and words[0] == "status":
            return [int(float(w)) for w in words[1:]]
    return None


def measure_one(run, conf, n, index):
    d = f"bench-burst-{int(time.time())}-{index}"
    guest.serverd(run, f"mkdir {d}")
    guest.wait_listed(run, d)
    guest.start_unit(run, "client", UNIT,
                     [f"{vm.CLIENT_BIN}/tb-benchscale", "burst",
                      f"{guest.CLIENT_MNT}/{d}"])
    row = {"files": n}
    try:
        guest.wait_output(run, "client", UNIT, lambda t: "armed 1" in t,
                          ARM_SECONDS, "the burst watcher")
        deadline = time.monotonic() + ARM_SECONDS
        while guest.server_notifies(run, conf, d) < 1:
            if time.monotonic() > deadline:
                raise TestbedError("the server holds no request on the "
                                   "burst directory")
            time.sleep(1)
        busy0 = guest.client_busy_jiffies(run)
        t0 = time.monotonic()
        guest.serverd(run, f"creates {d} {n}", timeout=120 + n // 20)
        row["create_s"] = round(time.monotonic() - t0, 1)
        text = guest.wait_output(
            run, "client", UNIT,
            lambda t: (_status(t) or [0, 0, 0, 0])[3] >= QUIET_MS and
            sum((_status(t) or [0, 0, 0])[:3]) > 0,
            300 + n // 50, f"the watcher quiet after {n} creates")
        named, nameless, overflows, quiet = _status(text)
        row["until_quiet_s"] = round(time.monotonic() - t0 - quiet / 1000, 1)
        row["client_cpu_s"] = round((guest.client_busy_jiffies(run) - busy0)
                                    / 100, 2)
        row.update(named=named, nameless=nameless, overflows=overflows)
        listed = guest.run(run, "client",
                           f"ls -f {guest.CLIENT_MNT}/{d} | "
                           "grep -vc '^\\.\\.\\?$' || true", timeout=300,
                           what="listing the burst directory")
        row["client_lists"] = int(listed.strip() or 0)
        row["server_lists"] = guest.serverd(run, f"count {d}")
        row["listing_equal"] = row["client_lists"] == row["server_lists"]
    finally:
        guest.stop_units(run, "client", [UNIT])
        guest.serverd(run, f"rmtree {d}", timeout=300)
    say(f"    burst of {n}: {row['named']} named, {row['nameless']} nameless, "
        f"{row['overflows']} overflows, quiet after {row['until_quiet_s']} s, "
        f"listing {'equal' if row['listing_equal'] else 'DIFFERENT'}")
    return row


def measure(run, conf, counts):
    """[row per burst size]; one that fails has its reason in its row."""
    return guest.each_count(measure_one, run, conf, counts, "files", False)
