"""The programs of client-tests/: built on the host as static binaries
(its Makefile names the tests and the helpers apart), then staged into
both guests: the tests and client helpers run in the client, tb-serverd
and tb-sigproxy on the server (server_programs.py starts them)."""

import shutil

from ..common.commands import capture, run_logged
from ..common.errors import TestbedError
from ..common.progress import Phase
from ..kernel import build as kernel_build
from . import lifecycle, server_programs, vm

BIN = vm.GUEST_BIN
CLIENT_BIN = vm.CLIENT_BIN
KMEMLEAK_SCAN_OFF = ("mountpoint -q /sys/kernel/debug || mount -t debugfs "
                     "none /sys/kernel/debug; [ ! -e /sys/kernel/debug/"
                     "kmemleak ] || echo scan=off > /sys/kernel/debug/kmemleak")


def ksft_dir(cache):
    """The kernel tree's selftests, for kselftest_harness.h."""
    return kernel_build.tree_dir(cache, kernel_build.source_version()) / \
        "tools/testing/selftests"


def build(cache, repo):
    """make client-tests (static binaries) into the cache; (bin dir, the
    names of the test programs)."""
    ksft = ksft_dir(cache)
    if not (ksft / "kselftest_harness.h").is_file():
        raise TestbedError(f"no kselftest_harness.h under {ksft}: run 'up'")
    out = cache / "client-tests" / "bin"
    log = cache / "logs" / "client-tests.log"
    log.write_text("")
    with Phase("building client-tests"):
        run_logged(["make", "-C", repo / "client-tests", f"KSFT_DIR={ksft}",
                    f"OUT={out}"], log, "building client-tests")
    names = capture(["make", "-s", "-C", repo / "client-tests", "list",
                     f"KSFT_DIR={ksft}"]).split()
    return out, names


def stage(run, repo, bindir):
    """The built tests and helpers into both guests (the staging folder,
    then the client's own disk), and the server's helpers started."""
    shutil.copytree(bindir, run / "staging" / "bin", dirs_exist_ok=True)
    server_programs.start(run, lifecycle.read_conf(repo)["SMB_UID"])
    # kmemleak's own thread scans every 10 minutes, 6 to 20 s of the
    # client's CPU each time under TCG, in the middle of cases: off; the
    # kmemleak check scans at the end
    code, _, err = vm.guest_exec(run, "client", f"rm -rf {CLIENT_BIN} && "
                                 f"cp -a {BIN} {CLIENT_BIN} && {{ "
                                 f"{KMEMLEAK_SCAN_OFF}; }}", timeout=120)
    if code != 0:
        raise TestbedError(f"could not copy the tests to the client: {err}")
