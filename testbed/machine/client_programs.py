"""The programs of client-tests/: built on the host as static binaries
(its Makefile names the tests and the helpers apart), then staged into
both guests: the tests and client helpers run in the client, tb-serverd
and tb-sigproxy on the server (server_programs.py starts them)."""

import shutil

from ..common.cache import content_key, tree_files
from ..common.commands import capture, run_logged
from ..common.errors import TestbedError
from ..common.progress import Phase
from ..kernel import build as kernel_build
from . import lifecycle, server_programs, vm

BIN = vm.GUEST_BIN
CLIENT_BIN = vm.CLIENT_BIN
# builds kept beside the current one (a clean clone's CI and a working
# checkout alternate without rebuilding each other's)
KEPT_BUILDS = 4
KMEMLEAK_SCAN_OFF = ("mountpoint -q /sys/kernel/debug || mount -t debugfs "
                     "none /sys/kernel/debug; [ ! -e /sys/kernel/debug/"
                     "kmemleak ] || echo scan=off > /sys/kernel/debug/kmemleak")


def ksft_dir(cache):
    """The kernel tree's selftests, for kselftest_harness.h."""
    return kernel_build.tree_dir(cache, kernel_build.source_version()) / \
        "tools/testing/selftests"


def sources_key(repo, ksft):
    """The key of a build: every file of client-tests/ but a local build/,
    and the harness headers. make's own timestamps cannot tell two
    checkouts apart: a clean clone's newer binaries would stand for a
    working tree's older but different sources."""
    files = [f for f in tree_files(repo / "client-tests", "client-tests/")
             if not f[0].startswith("client-tests/build/")]
    files += [(f"ksft/{h}", ksft / h) for h in
              ("kselftest_harness.h", "kselftest.h") if (ksft / h).is_file()]
    return content_key([("cc", "gcc -static")], files)


def _prune(builds, current):
    """Remove all but the `keep` most recently used builds."""
    dirs = sorted((d for d in builds.iterdir() if d.is_dir()),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for d in dirs[KEPT_BUILDS:]:
        if d != current:
            shutil.rmtree(d, ignore_errors=True)


def build(cache, repo):
    """make client-tests (static binaries) into the cache, in a folder
    keyed by their sources; (bin dir, the names of the test programs)."""
    ksft = ksft_dir(cache)
    if not (ksft / "kselftest_harness.h").is_file():
        raise TestbedError(f"no kselftest_harness.h under {ksft}: run 'up'")
    builds = cache / "client-tests"
    here = builds / sources_key(repo, ksft)
    out = here / "bin"
    log = cache / "logs" / "client-tests.log"
    log.write_text("")
    with Phase("building client-tests"):
        run_logged(["make", "-C", repo / "client-tests", f"KSFT_DIR={ksft}",
                    f"OUT={out}"], log, "building client-tests")
    here.touch()
    _prune(builds, here)
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
