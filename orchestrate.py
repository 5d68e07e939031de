#!/usr/bin/env python3
"""orchestrate.py: the two-VM testbed for remote change notification on
Linux CIFS mounts. A thin command-line front: one cmd_* per subcommand,
the work done by the testbed/ package (its docstring says which part
holds what).

Exit status: 0 ok, 1 failure, 2 usage (bad arguments, missing host setup),
130 interrupted.
"""

import argparse
import re
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from testbed.bench import run as bench_run  # noqa: E402
from testbed.capture import command as capture_command  # noqa: E402
from testbed.common import cache, progress  # noqa: E402
from testbed.common.errors import TestbedError, UsageError  # noqa: E402
from testbed.kernel import build as kernel_build  # noqa: E402
from testbed.kernel import per_patch  # noqa: E402
from testbed.machine import console_attach, lifecycle, vm  # noqa: E402
from testbed.suite import run as suite_run  # noqa: E402


def version():
    """The series under test, from its cover letter's subject."""
    try:
        head = (REPO / "kernel" / "0000-cover-letter.patch").read_text()
        found = re.search(r"^Subject: \[(?:RFC )?PATCH (v\d+) ", head, re.M)
    except OSError:
        found = None
    return f"orchestrate.py (series {found.group(1) if found else 'v1'})"


def cmd_up(args, root):
    if args.bench and args.kernel:
        raise UsageError("--bench builds its own kernel; drop --kernel")
    lifecycle.up(root, REPO, args.config, args.kernel, bench=args.bench,
                 fresh=args.fresh)


def cmd_down(args, root):
    lifecycle.down(root, forget=args.forget)


def cmd_status(args, root):
    lifecycle.status(root)


def cmd_test(args, root):
    if args.list:
        suite_run.list_tests(root, REPO)
        return 0
    if args.repeat < 1:
        raise UsageError("--repeat wants a count of 1 or more")
    if args.jobs < 1:
        raise UsageError("--jobs wants a count of 1 or more")
    if not suite_run.run_suite(root, REPO, args.k, args.config, args.repeat,
                               args.kernel, args.jobs):
        return 1
    return 0


def cmd_bench(args, root):
    bench_run.run_bench(root, REPO, args.measure, args.quick, args.repeat,
                        args.changes, args.spacing)


def _current_run(root):
    state, pids = lifecycle.running(root)
    if not state:
        raise UsageError("testbed is not up: run 'orchestrate.py up'")
    return Path(state["run"]), pids


def cmd_shell(args, root):
    run, pids = _current_run(root)
    if not pids.get(args.role):
        raise TestbedError(f"the {args.role} guest is not running")
    console_attach.attach(vm.paths(run, args.role)["shell"])


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


def cmd_kernel_path(args, root):
    print(kernel_build.tree_dir(root, kernel_build.source_version()))


def cmd_kernel_build(args, root):
    out = kernel_build.build_kernel(root, REPO, args.config)
    print(out / "bzImage")


def cmd_kernel_export(args, root):
    kernel_build.export_series(root, REPO)


def cmd_kernel_reset(args, root):
    kernel_build.reset_tree(root, REPO)


def cmd_kernel_check(args, root):
    return 0 if per_patch.check_series(root, REPO) else 1


KERNEL_HELP = ("boot the kernel in DIR (bzImage and config, e.g. "
               "<cache>/kernels/<key>) instead of building kernel/: to see "
               "the tests fail on a kernel without the series")
CONFIG_HELP = "also merge kernel/config/extra-NAME.config (repeatable)"


class DefaultsShown(argparse.HelpFormatter):
    """Help that shows an option's default where it has one worth saying
    (argparse's own formatter also says 'default: None')."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default not in (None, False, [], argparse.SUPPRESS) \
                and "%(default)" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


def _command(sub, name, fn, help_text):
    """A subcommand that takes -v too (b4's style: options after it)."""
    s = sub.add_parser(name, help=help_text, description=help_text,
                       formatter_class=DefaultsShown)
    s.add_argument("-v", "--verbose", action="store_true",
                   default=argparse.SUPPRESS,
                   help="show every command run")
    s.set_defaults(fn=fn)
    return s


def _add_up(sub):
    s = _command(sub, "up", cmd_up,
                 "build what is missing and bring both guests up (resumed "
                 "from their saved state when it matches)")
    s.add_argument("--config", action="append", default=[], metavar="NAME",
                   help=CONFIG_HELP)
    s.add_argument("--kernel", metavar="DIR", help=KERNEL_HELP)
    s.add_argument("--bench", action="store_true",
                   help="boot the kernel built without the debug checkers "
                        "(for 'bench')")
    s.add_argument("--fresh", action="store_true",
                   help="boot both guests even when a saved state of them "
                        "could be resumed, and save a new one")
    s = _command(sub, "down", cmd_down, "stop both guests")
    s.add_argument("--forget", action="store_true",
                   help="also remove the saved guests: the next 'up' boots")
    _command(sub, "status", cmd_status,
             "what runs, with which kernel and accelerator")


def _add_test(sub):
    s = _command(sub, "test", cmd_test,
                 "run client-tests/ in the client guest (brings the "
                 "testbed up if needed); KTAP and 'N passed, N failed'")
    s.add_argument("-k", metavar="PATTERN",
                   help="only the programs or cases whose id matches (shell "
                        "pattern or substring, several separated by commas; "
                        "see --list)")
    s.add_argument("--list", action="store_true",
                   help="list the test ids and exit")
    s.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run the chosen programs N times (flaky hunting)")
    s.add_argument("--jobs", "-j", type=int, default=suite_run.JOBS,
                   metavar="N",
                   help="run up to N of the cases that may share the guests "
                        "side by side (1: one at a time, the order of "
                        "--list)")
    s.add_argument("--config", action="append", default=[], metavar="NAME",
                   help="when bringing the testbed up: " + CONFIG_HELP)
    s.add_argument("--kernel", metavar="DIR", help=KERNEL_HELP)


def _add_bench(sub):
    s = _command(sub, "bench", cmd_bench,
                 "measure latency, scale and cost of remote notification "
                 "against the alternatives (on a testbed brought up with "
                 "'up --bench')")
    s.add_argument("--measure", metavar="LIST",
                   help="comma-separated measures, all when not given: "
                        + ", ".join(bench_run.MEASURES))
    s.add_argument("--quick", action="store_true",
                   help="fewer changes and counts (under 10 min with TCG)")
    s.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="passes of each measure, for the spread")
    s.add_argument("--changes", type=int, metavar="N",
                   help="latency: changes per pass (200; --quick 50)")
    s.add_argument("--spacing", type=float, metavar="SECONDS",
                   help="latency: time between two changes (0.5)")


def _add_guest_access(sub):
    s = _command(sub, "shell", cmd_shell,
                 "interactive root shell in a guest (Ctrl-] leaves)")
    s.add_argument("role", choices=vm.ROLES, help="which guest")
    s = _command(sub, "exec", cmd_exec,
                 "run a command in a guest, with its exit status")
    s.add_argument("role", choices=vm.ROLES, help="which guest")
    s.add_argument("command", nargs="+", help="the command and its words")
    s.add_argument("--timeout", type=int, default=120, metavar="SECONDS",
                   help="give up on the command after this long")


def _add_pcap(sub):
    s = _command(sub, "pcap", cmd_pcap,
                 "timeline of a run's SMB2 traffic and test markers, notify "
                 "latencies, a sequence diagram")
    s.add_argument("run", nargs="?",
                   help="run directory name under <cache>/runs (the latest "
                        "when not given)")
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


def _add_kernel(sub):
    s = sub.add_parser("kernel", help="the kernel developer's loop",
                       description="The kernel tree (Debian's "
                       "linux-source-6.12 with kernel/ applied) and its "
                       "build.")
    verbs = s.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    _command(verbs, "path", cmd_kernel_path, "print the tree's path")
    v = _command(verbs, "build", cmd_kernel_build,
                 "build the tree (incrementally), print the bzImage's path")
    v.add_argument("--config", action="append", default=[], metavar="NAME",
                   help=CONFIG_HELP)
    _command(verbs, "export", cmd_kernel_export,
             "format-patch the tree's commits into kernel/")
    _command(verbs, "reset", cmd_kernel_reset,
             "drop local work in the tree and apply kernel/ again")
    _command(verbs, "check", cmd_kernel_check,
             "apply, build and checkpatch --strict each patch in turn")


def parser():
    p = argparse.ArgumentParser(
        prog="orchestrate.py",
        description="Two QEMU guests (Samba server, CIFS client with the "
                    "kernel built from kernel/) on a captured private "
                    "network.",
        formatter_class=DefaultsShown)
    p.add_argument("--version", action="version", version=version())
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show every command run")
    p.add_argument("--cache-dir", metavar="DIR",
                   help=f"cache directory (default ${cache.ENV_CACHE}, else "
                        f"$XDG_CACHE_HOME/{cache.APP})")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    _add_up(sub)
    _add_test(sub)
    _add_bench(sub)
    _add_guest_access(sub)
    _add_pcap(sub)
    _add_kernel(sub)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    args = parser().parse_args(argv)
    # Ctrl-C and a plain kill both unwind, so what was started is stopped,
    # even when started from a shell that ignores SIGINT for background jobs.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    progress.VERBOSE = args.verbose
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
