"""`orchestrate.py bench`: how well remote notification works, against what
users do today, on the running testbed, in one run: each measure's figures
under runs/<run>/bench/ (results.json, a CSV per measure, PNG pictures)
and a short summary on stdout.

The testbed must be up with the kernel built without the debug checkers
(`up --bench`): KASAN, lockdep and kmemleak distort every figure. Figures
compare peers measured in the same run, as ratios; the machine is shared."""
import time
from pathlib import Path

from ..common.errors import TestbedError, UsageError
from ..common.progress import Phase, say
from ..kernel import build as kernel_build
from ..machine import client_programs, images, lifecycle
from . import burst, io_cost, latency, report, scale, stats

MEASURES = ("latency", "scale", "io", "bursts")
DEFAULTS = {"latency": {"changes": 200, "spacing": 0.5},
            "scale": (1000, 5000, 10000, 20000),
            "io": (0, 1000, 10000),
            "bursts": (5000, 50000)}
QUICK = {"latency": {"changes": 50, "spacing": 0.5},
         "scale": (1000,),
         "io": (0, 1000),
         "bursts": (5000,)}


# the measures that take a list of counts: (measure, report, unit, the
# count's key in a row, title)
COUNTED_MEASURES = {
    "scale": (scale.measure, report.write_scale, "watches",
              "watches", "Scale (one inotify watch per directory, one "
              "server-side create in each):"),
    "io": (io_cost.measure, report.write_io, "watches", None,
           "Ordinary I/O on the mount with remote watches armed elsewhere "
           "(ratio to 0 watches):"),
    "bursts": (burst.measure, report.write_bursts, "creates",
               "files", "Bursts of creates in one watched directory:"),
}


def parse_measures(text):
    """'latency,scale' -> ('latency', 'scale'); an unknown one is a usage
    error naming the known ones."""
    if not text:
        return MEASURES
    chosen = []
    for word in text.split(","):
        word = word.strip()
        if word not in MEASURES:
            raise UsageError(f"unknown measure '{word}'; the measures are: "
                             + ", ".join(MEASURES))
        if word not in chosen:
            chosen.append(word)
    return tuple(chosen)


def check_options(changes, repeat, spacing):
    if repeat < 1:
        raise UsageError("--repeat wants a count of 1 or more")
    if changes is not None and not 1 <= changes <= 10000:
        raise UsageError("--changes wants 1 to 10000 (the bench directory's "
                         "names are c-0000 to c-9999)")
    if spacing is not None and not 0.05 <= spacing <= 10:
        raise UsageError("--spacing wants 0.05 to 10 seconds")


def running_state(cache):
    """The running testbed's state; an error when it is not up or runs a
    kernel with the debug checkers."""
    state, pids = lifecycle.running(cache)
    if not state or not all(pids.values()):
        raise TestbedError("testbed is not up: run 'orchestrate.py up "
                           "--bench' (the kernel without debug checkers)")
    found = kernel_build.debug_checkers(state["kernel"])
    if found:
        raise TestbedError(f"the running kernel has {', '.join(found)}, which "
                           "distort every figure: 'down', then 'up --bench'")
    return state


def run_bench(cache, repo, measures=None, quick=False, repeat=1,
              changes=None, spacing=None):
    """Run the chosen measures; print the summary; return the results."""
    chosen = parse_measures(measures)
    check_options(changes, repeat, spacing)
    state = running_state(cache)
    run = Path(state["run"])
    conf = lifecycle.read_conf(repo)
    bindir, _ = client_programs.build(cache, repo)
    client_programs.stage(run, repo, bindir)
    outdir = run / "bench"
    outdir.mkdir(exist_ok=True)
    server_kernel = images.server_release(state.get("images", ""))
    results = {"kernel": state.get("release"), "kernel_dir": state["kernel"],
               "server_kernel": server_kernel,
               "accel": state.get("accel"), "quick": quick,
               "repeat": repeat, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
               "measures": {}}
    summary = [f"bench on kernel {state.get('release')} "
               f"({Path(state['kernel']).name}; the server's Debian "
               f"{server_kernel}), {state.get('accel')}, "
               f"{repeat} pass(es){', quick' if quick else ''}"]
    t0 = time.monotonic()
    if "latency" in chosen:
        params = dict((QUICK if quick else DEFAULTS)["latency"])
        if changes:
            params["changes"] = changes
        if spacing:
            params["spacing"] = spacing
        with Phase(f"latency: {len(latency.WATCHERS)} watchers, "
                   f"{params['changes']} changes x {repeat}"):
            passes = latency.measure(run, conf, params["changes"],
                                     params["spacing"], repeat)
        rows = report.write_latency(outdir, passes, latency.WATCHERS)
        results["measures"]["latency"] = {"params": params, "rows": rows,
                                          "passes": passes}
        summary += ["", "Latency from a server-side create to the watcher's "
                    "event (median over passes; range):",
                    report.latency_table(rows), "",
                    *report.targets(rows)]
    counts = QUICK if quick else DEFAULTS
    for name, (measure, write, unit, key, title) in \
            COUNTED_MEASURES.items():
        if name not in chosen:
            continue
        with Phase(f"{name}: {', '.join(map(str, counts[name]))} {unit} "
                   f"x {repeat}"):
            runs = [measure(run, conf, counts[name]) for _ in range(repeat)]
        res = stats.merge_counted(runs, key)
        results["measures"][name] = res
        results.setdefault("passes", {})[name] = runs
        summary += ["", title + (" median over passes; range"
                                 if repeat > 1 else ""), write(outdir, res)]
    results["seconds"] = round(time.monotonic() - t0, 1)
    report.write_results(outdir, results)
    (outdir / "summary.md").write_text("\n".join(summary) + "\n")
    print("\n".join(summary))
    say(f"bench done in {results['seconds']:.0f} s; figures and pictures "
        f"in {outdir}")
    missing = unreached(results)
    if missing:
        raise TestbedError(f"{len(missing)} figure(s) not reached: "
                           + "; ".join(missing))
    return results


def unreached(results):
    """'measure N: why' for every count a measure could not reach."""
    out = []
    for measure, res in results["measures"].items():
        if measure == "io":
            rows = [dict(v, watches=n) for n, v in res.items()]
        else:
            rows = res if isinstance(res, list) else []
        for row in rows:
            if "error" in row:
                count = row.get("watches", row.get("files", "?"))
                out.append(f"{measure} {count}: {row['error']}")
    return out
