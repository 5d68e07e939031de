#!/usr/bin/env python3
"""orchestrate.py: the two-VM testbed for remote directory change
notification on Linux CIFS mounts. A thin command-line front; the work is
done by the modules of the testbed/ package, one per concern.

Exit status: 0 ok, 1 failure, 2 usage (bad arguments, missing host setup),
130 interrupted.
"""

import argparse
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from testbed import (bench, cache, kernel, series_check,  # noqa: E402
                     session, shell, steps, suite, vm)
from testbed.capture import command as capture_command  # noqa: E402
from testbed.errors import TestbedError, UsageError  # noqa: E402


def cmd_up(args, root):
    if args.bench and args.kernel:
        raise UsageError("--bench builds its own kernel; drop --kernel")
    session.up(root, REPO, args.config, args.kernel, bench=args.bench,
               fresh=args.fresh)


def cmd_down(args, root):
    session.down(root, forget=args.forget)


def cmd_status(args, root):
    session.status(root)


def cmd_test(args, root):
    if args.list:
        suite.list_tests(root, REPO)
        return 0
    if args.repeat < 1:
        raise UsageError("--repeat wants a count of 1 or more")
    if args.jobs < 1:
        raise UsageError("--jobs wants a count of 1 or more")
    if not suite.run_suite(root, REPO, args.k, args.config, args.repeat,
                           args.kernel, args.jobs):
        return 1
    return 0


def cmd_bench(args, root):
    bench.run_bench(root, REPO, args.measure, args.quick, args.repeat,
                    args.changes, args.spacing)


def _current_run(root):
    state, pids = session.running(root)
    if not state:
        raise UsageError("testbed is not up: run 'orchestrate.py up'")
    return Path(state["run"]), pids


def cmd_shell(args, root):
    run, pids = _current_run(root)
    if not pids.get(args.role):
        raise TestbedError(f"the {args.role} guest is not running")
    shell.attach(vm.paths(run, args.role)["shell"])


def cmd_exec(args, root):
    run, _ = _current_run(root)
    code, out, err = vm.guest_exec(run, args.role, " ".join(args.command),
                                   timeout=args.timeout)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


def _run_dir(root, name):
    runs = root / "runs"
    run = runs / (name or "latest")
    if not run.exists():
        raise UsageError(f"no run '{name or 'latest'}' under {runs}")
    return run.resolve()


def cmd_pcap(args, root):
    return capture_command.pcap_command(_run_dir(root, args.run), args.k,
                                        args.notify, args.svg, args.path,
                                        args.raw)


def cmd_kernel(args, root):
    if args.action == "path":
        print(kernel.tree_dir(root, kernel.source_version()))
    elif args.action == "build":
        out = kernel.build_kernel(root, REPO, args.config)
        print(out / "bzImage")
    elif args.action == "export":
        kernel.export_series(root, REPO)
    elif args.action == "reset":
        kernel.reset_tree(root, REPO)
    elif args.action == "check":
        return 0 if series_check.check_series(root, REPO) else 1


KERNEL_HELP = ("boot the kernel in DIR (bzImage and config, e.g. "
               "<cache>/kernels/<key>) instead of building kernel/: to see "
               "the tests fail on a kernel without the series")


def parser():
    p = argparse.ArgumentParser(
        prog="orchestrate.py",
        description="Two QEMU guests (Samba server, CIFS client with the "
                    "kernel built from kernel/) on a captured private network.")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show every command run")
    p.add_argument("--cache-dir", metavar="DIR",
                   help=f"cache directory (default ${cache.ENV_CACHE}, else "
                        f"$XDG_CACHE_HOME/{cache.APP})")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    s = sub.add_parser("up", help="build what is missing and boot both guests")
    s.add_argument("--config", action="append", default=[], metavar="NAME",
                   help="also merge kernel/config/extra-NAME.config")
    s.add_argument("--kernel", metavar="DIR", help=KERNEL_HELP)
    s.add_argument("--bench", action="store_true",
                   help="boot the kernel built without the debug checkers "
                        "(for 'bench')")
    s.add_argument("--fresh", action="store_true",
                   help="boot both guests even when a saved state of them "
                        "(snapshot) could be resumed, and save a new one")
    s.set_defaults(fn=cmd_up)
    s = sub.add_parser("down", help="stop both guests")
    s.add_argument("--forget", action="store_true",
                   help="also remove the saved guests (snapshots): the next "
                        "'up' boots")
    s.set_defaults(fn=cmd_down)
    sub.add_parser("status", help="what runs, with which kernel and "
                   "accelerator").set_defaults(fn=cmd_status)
    s = sub.add_parser("test", help="run client-tests/ in the client guest "
                       "(brings the testbed up if needed)")
    s.add_argument("-k", metavar="PATTERN",
                   help="only the programs or cases whose id matches (shell "
                        "pattern or substring, several separated by commas; "
                        "see --list)")
    s.add_argument("--list", action="store_true",
                   help="list the test ids and exit")
    s.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run the chosen programs N times (flaky hunting)")
    s.add_argument("--jobs", "-j", type=int, default=suite.JOBS, metavar="N",
                   help="run up to N of the cases that may share the guests "
                        f"side by side (default {suite.JOBS}; 1: one at a "
                        "time, the order of --list)")
    s.add_argument("--config", action="append", default=[], metavar="NAME",
                   help="when bringing the testbed up, also merge "
                        "kernel/config/extra-NAME.config")
    s.add_argument("--kernel", metavar="DIR", help=KERNEL_HELP)
    s.set_defaults(fn=cmd_test)
    s = sub.add_parser("bench", help="measure latency, scale and cost of "
                       "remote notification against the alternatives (on a "
                       "testbed brought up with 'up --bench')")
    s.add_argument("--measure", metavar="LIST",
                   help="comma-separated measures (default all: "
                        f"{', '.join(bench.MEASURES)})")
    s.add_argument("--quick", action="store_true",
                   help="fewer changes and counts (under 10 min with TCG)")
    s.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="passes of each measure, for the spread (default 1)")
    s.add_argument("--changes", type=int, metavar="N",
                   help="latency: changes per pass (default 200, quick 50)")
    s.add_argument("--spacing", type=float, metavar="SECONDS",
                   help="latency: time between two changes (default 0.5)")
    s.set_defaults(fn=cmd_bench)
    s = sub.add_parser("shell", help="interactive root shell in a guest "
                       "(Ctrl-] leaves)")
    s.add_argument("role", choices=vm.ROLES)
    s.set_defaults(fn=cmd_shell)
    s = sub.add_parser("exec", help="run a command in a guest, with its exit "
                       "status")
    s.add_argument("role", choices=vm.ROLES)
    s.add_argument("command", nargs="+")
    s.add_argument("--timeout", type=int, default=120)
    s.set_defaults(fn=cmd_exec)
    s = sub.add_parser("pcap", help="timeline of a run's SMB2 traffic and "
                       "test markers, notify latencies, a sequence diagram")
    s.add_argument("run", nargs="?", help="run directory name (default latest)")
    s.add_argument("-k", metavar="TEST",
                   help="only the frames between this test's begin and end "
                        "markers (shell pattern or substring of the ids)")
    s.add_argument("--notify", action="store_true",
                   help="only CHANGE_NOTIFY, its responses, CANCEL and the "
                        "CREATE/CLOSE of the watched handles, and markers")
    s.add_argument("--svg", metavar="FILE",
                   help="write a sequence diagram of the selection's notify "
                        "conversation to FILE")
    s.add_argument("--path", action="store_true",
                   help="print the capture's path, then the per-test slices "
                        "(with -k: the matching slices only)")
    s.add_argument("--raw", nargs=argparse.REMAINDER, metavar="TSHARK-ARGS",
                   help="run 'tshark -r CAPTURE TSHARK-ARGS...' (last option)")
    s.set_defaults(fn=cmd_pcap)
    s = sub.add_parser("kernel", help="kernel developer's loop")
    s.add_argument("action", choices=("path", "build", "export", "reset",
                                      "check"),
                   help="path: print the tree; build: build it; export: "
                        "format-patch its commits into kernel/; reset: drop "
                        "local work and re-apply kernel/; check: build each "
                        "patch in turn and checkpatch --strict each")
    s.add_argument("--config", action="append", default=[], metavar="NAME")
    s.set_defaults(fn=cmd_kernel)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    args = parser().parse_args(argv)
    # Ctrl-C and a plain kill both unwind, so what was started is stopped,
    # even when started from a shell that ignores SIGINT for background jobs.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    steps.VERBOSE = args.verbose
    root = cache.cache_root(args.cache_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
        return args.fn(args, root) or 0
    except TestbedError as e:
        print(f"orchestrate.py: error: {e}", file=sys.stderr)
        if e.detail:
            print(e.detail.rstrip(), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\norchestrate.py: interrupted; stopped what this command "
              "started", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"orchestrate.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
