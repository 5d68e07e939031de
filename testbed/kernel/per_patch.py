"""`kernel check`: what a maintainer checks of the series before taking it.
Each patch is built in turn on top of the ones before it (the series must
bisect), its build must add no warning in the files it touches, and
scripts/checkpatch.pl --strict runs on each patch file of kernel/.  Kconfig
is asked, too, in which configurations the series' KUnit test can be built:
never where it could not link (CIFS built in, KUnit a module)."""

import re
import subprocess
import tempfile
import time
from pathlib import Path

from ..common import host_packages
from ..common.commands import run_logged
from ..common.errors import TestbedError, UsageError
from ..common.progress import Phase, fmt_secs, say
from . import build as kernel_build

WARNING = re.compile(r"^(\S+?):\d+:\d+: (warning|error):")
CHECKPATCH = re.compile(r"^\S+:\d+: (ERROR|WARNING|CHECK):")


def new_warnings(make_output, touched):
    """Compiler warnings and errors of a build log in the files a patch
    touched (the rest of the tree is not the patch's business)."""
    found = []
    for line in make_output.splitlines():
        m = WARNING.match(line)
        if m and any(m.group(1).endswith(path) for path in touched):
            found.append(line.strip())
    return found


# (what, fragment lines, the value CONFIG_CIFS_NOTIFY_KUNIT_TEST must end
# with; None: not set).  Each asks for the test; Kconfig decides.  The
# option is a bool: notify.c includes the test, which goes wherever CIFS
# goes (built in, or in cifs.ko when KUnit is a module too).
KUNIT_OPTION = "CONFIG_CIFS_NOTIFY_KUNIT_TEST"
KCONFIG_CASES = (
    ("CIFS=y KUNIT=m", ("CONFIG_MODULES=y", "CONFIG_CIFS=y", "CONFIG_KUNIT=m",
                        f"{KUNIT_OPTION}=y"), None),
    ("CIFS=m KUNIT=m", ("CONFIG_MODULES=y", "CONFIG_CIFS=m", "CONFIG_KUNIT=m",
                        f"{KUNIT_OPTION}=y"), "y"),
    ("CIFS=y KUNIT=y", ("CONFIG_CIFS=y", "CONFIG_KUNIT=y",
                        f"{KUNIT_OPTION}=y"), "y"),
)


def config_value(text, option):
    """'y', 'm', a string, or None (not set) of @option in a .config."""
    m = re.search(rf"^{option}=(.*)$", text, re.M)
    return m.group(1).strip('"') if m else None


def _kconfig_cases(cache, tree, frags, log):
    """[(what, value, expected)] of merging each KCONFIG_CASES fragment
    over the series' own, in a scratch output directory."""
    rows = []
    out = cache / "build" / "kconfig-check"
    out.mkdir(parents=True, exist_ok=True)
    for what, lines, expected in KCONFIG_CASES:
        with tempfile.NamedTemporaryFile("w", suffix=".config",
                                         dir=out) as frag:
            frag.write("\n".join(lines) + "\n")
            frag.flush()
            with Phase(f"asking Kconfig about the KUnit test with {what}"):
                run_logged([tree / "scripts/kconfig/merge_config.sh", "-n",
                            "-O", out, *frags, frag.name], log,
                           f"config with {what}", cwd=tree,
                           env={"ARCH": "x86_64"})
        text = Path(out / ".config").read_text(errors="replace")
        rows.append((what, config_value(text, KUNIT_OPTION), expected))
    return rows


def checkpatch_counts(output):
    """{"ERROR": n, "WARNING": n, "CHECK": n} of checkpatch --terse output."""
    counts = {"ERROR": 0, "WARNING": 0, "CHECK": 0}
    for line in output.splitlines():
        m = CHECKPATCH.match(line)
        if m:
            counts[m.group(1)] += 1
    return counts


def _build_each(cache, tree, build, commits, log):
    """[(subject, seconds, ok, warnings)] of building each commit in turn."""
    rows = []
    cmd, env = kernel_build.make_command(cache, tree, build)
    for commit in commits:
        subject = kernel_build._git(tree, "log", "-1", "--format=%s",
                                    commit).strip()
        touched = kernel_build._git(tree, "diff", "--name-only",
                                    f"{commit}~1", commit).split()
        kernel_build._git(tree, "checkout", "-q", "--detach", commit)
        start = len(log.read_text(errors="replace")) if log.exists() else 0
        t0 = time.monotonic()
        ok = True
        with Phase(f"building with '{subject}'"):
            try:
                run_logged(cmd, log, f"build of '{subject}'", env=env)
            except TestbedError:
                ok = False
        text = log.read_text(errors="replace")[start:]
        rows.append((subject, time.monotonic() - t0, ok,
                     new_warnings(text, touched)))
    return rows


def _checkpatch(tree, patches):
    """[(patch name, counts, output)] of checkpatch --strict on each."""
    rows = []
    for patch in patches:
        proc = subprocess.run(
            ["perl", "scripts/checkpatch.pl", "--strict", "--terse",
             "--no-summary", str(patch)], cwd=tree, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, timeout=300)
        rows.append((patch.name, checkpatch_counts(proc.stdout), proc.stdout))
    return rows


def check_series(cache, repo):
    """Build each patch in turn and checkpatch each; True when every build
    passed without new warnings and checkpatch found no ERROR."""
    log = cache / "logs" / "kernel-check.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    host_packages.ensure_host_packages()
    version = kernel_build.source_version()
    tree = kernel_build.ensure_tree(cache, version, log)
    if kernel_build.apply_series(tree, repo, log) == "local" or \
            kernel_build._git(tree, "status", "--porcelain", "-uno").strip():
        raise UsageError(f"{tree} differs from kernel/: 'kernel export' or "
                         "'kernel reset' first, so what is checked is kernel/")
    patches = kernel_build.series(repo)
    commits = kernel_build._git(tree, "rev-list", "--reverse",
                                "pristine..HEAD").split()
    if len(commits) != len(patches):
        raise TestbedError(f"{len(commits)} commits in the tree but "
                           f"{len(patches)} patches in kernel/")
    build = kernel_build.build_dir(cache, version)
    kernel_build.merge_config(tree, build, kernel_build.fragments(repo), log)
    kconfigs = _kconfig_cases(cache, tree, kernel_build.fragments(repo), log)
    head = kernel_build._git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip()
    try:
        builds = _build_each(cache, tree, build, commits, log)
    finally:
        kernel_build._git(tree, "checkout", "-q", head if head != "HEAD"
                          else commits[-1], check=False)
    checks = _checkpatch(tree, patches)
    ok = True
    say(f"series check ({len(patches)} patches; log {log}):")
    for (subject, secs, built, warns), (name, counts, out) in zip(builds,
                                                                  checks):
        verdict = "builds" if built and not warns else "FAILS"
        say(f"  {name}\n    {verdict} in {fmt_secs(secs)}, "
            f"{len(warns)} new warning(s); checkpatch: {counts['ERROR']} "
            f"error(s), {counts['WARNING']} warning(s), "
            f"{counts['CHECK']} check(s)")
        for line in warns[:10]:
            say(f"      {line}")
        for line in out.splitlines():
            if CHECKPATCH.match(line) and "CamelCase" not in line:
                say(f"      line {line.split(':', 1)[1].strip()}")
        ok = ok and built and not warns and counts["ERROR"] == 0
    for what, value, expected in kconfigs:
        good = value == expected
        say(f"  Kconfig with {what}: {KUNIT_OPTION}={value or 'not set'}"
            f" ({'as it must' if good else f'FAILS: must be {expected}'})")
        ok = ok and good
    return ok
