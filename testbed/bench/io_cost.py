"""The bench's cost to ordinary I/O: a metadata workload (create, stat and
unlink files in a directory of their own) and a sequential write and read
on the mount, with 0 and then more remote watches armed elsewhere on the
same mount (bench_scale's directories and watcher); each throughput as a
ratio to the 0-watch run of the same pass (client-tests/helpers/bench/tb-benchio.c)."""
import time

from ..common.errors import TestbedError
from ..common.progress import say
from ..machine import vm
from . import guest_steps as guest
from . import scale, stats

META_FILES = 2000
SEQ_MIB = 256


def _io(run, argv, timeout):
    out = guest.run(run, "client", " ".join([f"{vm.CLIENT_BIN}/tb-benchio",
                                             *argv]),
                    timeout=timeout, what="tb-benchio " + argv[0])
    words = out.split()
    if len(words) != 3 or words[0] != argv[0]:
        raise TestbedError(f"tb-benchio {argv[0]}: {out.strip()[-200:]}")
    return float(words[1]), float(words[2])


def workloads(run, tag):
    """{'meta': files/s, 'write': MiB/s, 'read': MiB/s} once."""
    d = f"{guest.CLIENT_MNT}/bench-io-{tag}"
    guest.run(run, "client", f"mkdir -p {d}", what="the I/O directory")
    try:
        secs, files = _io(run, ["meta", d, str(META_FILES)], 900)
        out = {"meta": files / secs}
        secs, size = _io(run, ["write", f"{d}/seq", str(SEQ_MIB)], 900)
        out["write"] = size / secs / 2**20
        guest.run(run, "client", "sync && echo 3 > /proc/sys/vm/drop_caches",
                  what="dropping the page cache")
        secs, size = _io(run, ["read", f"{d}/seq"], 900)
        out["read"] = size / secs / 2**20
    finally:
        guest.run(run, "client", f"rm -rf {d}", timeout=300,
                  what="removing the I/O directory")
    return out


def measure(run, conf, counts):
    """{watches: {workload: throughput, workload_ratio: r}}; the first count
    must be 0 (the reference)."""
    results = {}
    for i, n in enumerate(counts):
        prefix = f"bench-io-w-{int(time.time())}-{i}"
        try:
            if n:
                scale.make_dirs(run, prefix, n)
                scale.raise_limits(run, n)
                scale.arm(run, conf, prefix, n)
            figures = workloads(run, f"{i}")
        except TestbedError as e:
            say(f"    I/O with {n} watches: {e}")
            results[n] = {"error": str(e)}
            break
        finally:
            if n:
                scale.release(run, conf, prefix)
                scale.remove_dirs(run, conf, prefix, n)
        base = results.get(0, figures)
        for key in ("meta", "write", "read"):
            figures[f"{key}_ratio"] = stats.ratio(figures[key],
                                                  base.get(key))
        results[n] = figures
        say(f"    I/O with {n} watches: metadata {figures['meta']:.0f} "
            f"files/s, write {figures['write']:.1f} MiB/s, read "
            f"{figures['read']:.1f} MiB/s")
    return results
