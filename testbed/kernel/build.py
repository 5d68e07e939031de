"""The guest kernel: Debian's linux-source-6.12, the series in kernel/, the
config fragments in kernel/config/, built once per (source, tree, config).

The tarball is unpacked once into a git tree whose first commit (tag
`pristine`) is the untouched source; the series is applied on top with
`git am` on branch `testbed`. One build directory (make O=) per tree keeps
rebuilds incremental. A developer may edit the tree directly: it is then
built as it stands, and `kernel export` turns its commits back into kernel/.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..common import host_packages
from ..common.cache import content_key
from ..common.commands import capture, run_logged
from ..common.errors import TestbedError
from ..common.progress import Phase, say

COVER_LETTER = "0000-cover-letter.patch"
GIT_ID = ["-c", "user.name=testbed", "-c", "user.email=testbed@localhost"]


def source_version():
    """The installed linux-source-6.12 package version, e.g. 6.12.118-1~deb12u1."""
    out = capture(["dpkg-query", "-W", "-f", "${Version}", "linux-source-6.12"],
                  check=False)
    if not out.strip():
        raise TestbedError("linux-source-6.12 is not installed")
    return out.strip()


def safe_name(version):
    return "linux-" + re.sub(r"[^A-Za-z0-9.+-]", "_", version)


def tree_dir(cache, version):
    return cache / "src" / safe_name(version)


def build_dir(cache, version, bench=False):
    """One build directory per tree and flavour: the bench's kernel has its
    own, so that neither build undoes the other's objects."""
    return cache / "build" / (safe_name(version) + ("-bench" if bench else ""))


def series(repo):
    """The patches of the series, in order, without the cover letter."""
    return sorted(p for p in (repo / "kernel").glob("*.patch")
                  if p.name != COVER_LETTER)


# what the bench's kernel leaves out: the checkers distort every figure
BENCH_LEAVES_OUT = ("debug.config",)
DEBUG_CHECKERS = ("CONFIG_KASAN=y", "CONFIG_PROVE_LOCKING=y",
                  "CONFIG_DEBUG_KMEMLEAK=y")


def debug_checkers(kernel_dir):
    """The debug checkers (DEBUG_CHECKERS) a built kernel's config has."""
    try:
        config = (Path(kernel_dir) / "config").read_text()
    except OSError:
        return []
    return [o.split("=")[0] for o in DEBUG_CHECKERS if f"\n{o}\n" in config]


def fragments(repo, extra=(), bench=False):
    """Config fragments: kernel/config/*.config, then any named extras;
    for the bench, without the debug checkers (BENCH_LEAVES_OUT)."""
    frags = sorted((repo / "kernel" / "config").glob("*.config"))
    frags = [f for f in frags if not f.name.startswith("extra-")]
    if bench:
        frags = [f for f in frags if f.name not in BENCH_LEAVES_OUT]
    for name in extra:
        path = repo / "kernel" / "config" / f"extra-{name}.config"
        if not path.is_file():
            raise TestbedError(f"no config fragment {path}")
        frags.append(path)
    return frags


def _git(tree, *args, check=True, timeout=300):
    return capture(["git", "-C", tree, *GIT_ID, *args], check=check,
                   timeout=timeout)


def _record_path(tree):
    return tree / ".git" / "testbed-series.json"


def _read_record(tree):
    try:
        return json.loads(_record_path(tree).read_text())
    except (OSError, ValueError):
        return {}


def _write_record(tree, series_key):
    head = _git(tree, "rev-parse", "HEAD").strip()
    _record_path(tree).write_text(json.dumps({"series": series_key,
                                              "head": head}))


def ensure_tree(cache, version, log):
    """Unpack the source tarball into a git tree once; return its path."""
    tree = tree_dir(cache, version)
    if (tree / ".git" / "testbed-pristine").exists():
        return tree
    tarball = host_packages.KERNEL_SOURCE_TARBALL
    tmp = tree.with_name(tree.name + ".unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(tree, ignore_errors=True)
    tmp.mkdir(parents=True)
    with Phase(f"unpacking {Path(tarball).name} into {tree}"):
        run_logged(["tar", "-xJf", tarball, "-C", tmp,
                    "--strip-components=1"], log, "unpacking kernel source")
        # Debian's .gitignore ignores every top-level entry: force the add.
        for args in (["init", "-q", "-b", "testbed"], ["add", "-A", "-f", "."],
                     ["commit", "-q", "-m",
                      f"linux-source-6.12 {version} (pristine)"],
                     ["tag", "pristine"]):
            run_logged(["git", "-C", tmp, *GIT_ID, *args], log,
                       "making the kernel tree a git tree")
    (tmp / ".git" / "testbed-pristine").write_text(version + "\n")
    tmp.rename(tree)
    return tree


def _rejected_hunk(patch, am_output):
    """The hunk of `patch` that git named as failing, for the error message."""
    m = re.search(r"patch failed: (\S+):(\d+)", am_output)
    if not m:
        return ""
    path, line = m.group(1), m.group(2)
    text = patch.read_text(errors="replace")
    for fpart in re.split(r"(?m)^(?=diff --git )", text):
        if not fpart.startswith(f"diff --git a/{path} "):
            continue
        for hunk in re.split(r"(?m)^(?=@@ )", fpart)[1:]:
            if re.match(rf"@@ -{line}(,\d+)? ", hunk):
                return hunk.rstrip()
    return ""


def _tree_is_local(tree, record):
    """True when the tree holds work that is not the recorded series."""
    head = _git(tree, "rev-parse", "HEAD").strip()
    dirty = _git(tree, "status", "--porcelain", "-uno").strip()
    return head != record.get("head") or bool(dirty)


def apply_series(tree, repo, log):
    """Put the tree at pristine + kernel/ series, unless it already is.

    Returns "applied", "unchanged" or "local" (the developer's own edits,
    built as they stand). A patch that does not apply leaves the tree and
    every cache entry as they were.
    """
    patches = series(repo)
    key = content_key([], [(p.name, p) for p in patches])
    record = _read_record(tree)
    local = bool(record) and _tree_is_local(tree, record)
    if record.get("series") == key:
        return "local" if local else "unchanged"
    if local:
        raise TestbedError(
            f"the kernel tree {tree} has changes that are not in kernel/, and "
            "kernel/ changed too: run 'orchestrate.py kernel export' to keep "
            "the tree's commits, or 'orchestrate.py kernel reset' to drop them")
    _git(tree, "checkout", "-q", "--detach", "pristine")
    for patch in patches:
        proc = subprocess.run(["git", "-C", str(tree), *GIT_ID, "am", "-q",
                               str(patch)], text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            _git(tree, "am", "--abort", check=False)
            _git(tree, "checkout", "-q", "-f", "testbed", check=False)
            with open(log, "a") as f:
                f.write(proc.stdout)
            why = "\n".join(line for line in proc.stdout.splitlines()
                            if line.startswith(("error:", "Patch failed")))
            raise TestbedError(f"kernel/{patch.name} does not apply to "
                               "linux-source-6.12 (+ the patches before it)",
                               why + "\nrejected hunk:\n" +
                               _rejected_hunk(patch, proc.stdout))
    _git(tree, "checkout", "-q", "-B", "testbed")
    _write_record(tree, key)
    say(f"    applied {len(patches)} patch(es) from kernel/")
    return "applied"


def kernel_key(tree, version, frags):
    """What the built kernel depends on: source, tree content, config."""
    head_tree = _git(tree, "rev-parse", "HEAD^{tree}").strip()
    local_diff = _git(tree, "diff", "HEAD", "--binary")
    return content_key([("source", version), ("tree", head_tree),
                        ("uncommitted", content_key([("d", local_diff)]))],
                       [(f.name, f) for f in frags])


def merge_config(tree, build, frags, log):
    """allnoconfig + fragments with the tree's merge_config.sh; mismatches
    (an option the fragments ask for but Kconfig refused) are errors."""
    build.mkdir(parents=True, exist_ok=True)
    run_logged([tree / "scripts/kconfig/merge_config.sh", "-n", "-O", build,
                *frags], log, "merging the kernel config", cwd=tree,
               env={"ARCH": "x86_64"})
    tail = Path(log).read_text(errors="replace").rsplit("\n$ ", 1)[-1]
    refused = re.findall(r"Value requested for (CONFIG_\w+) not in final", tail)
    if refused:
        raise TestbedError("kernel config: Kconfig refused "
                           + ", ".join(refused) + f" (see {log})")


def make_command(cache, tree, build, jobs=None):
    """(argv, env) of `make bzImage` in the tree's build directory, through
    ccache when the host has it.

    ccache in its depend mode: it keys an object on the headers gcc's own
    dependency file lists (Kbuild asks for one) instead of running the
    preprocessor once more for a key, which made every miss, so all of a
    cold build, 31 % slower (fs/smb/client: 45 s without ccache, 59 s
    with it, 41 s in depend mode, 6 s when hit)."""
    env = {"ARCH": "x86_64", "KBUILD_BUILD_USER": "testbed",
           "KBUILD_BUILD_HOST": "testbed"}
    cc = "gcc"
    if shutil.which("ccache"):
        cc = "ccache gcc"
        env["CCACHE_DIR"] = str(cache / "ccache")
        env["CCACHE_DEPEND"] = "1"
    jobs = jobs or os.cpu_count() or 1
    return ["make", "-C", str(tree), f"O={build}", f"-j{jobs}", f"CC={cc}",
            "bzImage"], env


def _rebuild_boot_payload(build, cmd, log, env):
    """Assemble the bzImage's payload (piggy.o) again without ccache.

    ccache's depend mode keys an object on the files gcc's dependency
    file lists, and piggy.S takes the compressed kernel in with .incbin,
    which it does not list: when two kernels compressed to the same size
    (piggy.S holds only the sizes), ccache gave back the older piggy.o, and
    the bzImage booted the older kernel under the newer one's name."""
    (build / "arch/x86/boot/compressed/piggy.o").unlink(missing_ok=True)
    run_logged(cmd, log, "kernel build (the bzImage's payload)",
               env=dict(env, CCACHE_DISABLE="1"))


def build_kernel(cache, repo, extra=(), jobs=None, bench=False):
    """Return the path of a bzImage built from kernel/ (cached by key);
    with `bench`, the kernel without the debug checkers."""
    logs = cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / ("kernel-bench.log" if bench else "kernel.log")
    log.write_text("")
    version = source_version()
    tree = ensure_tree(cache, version, log)
    state = apply_series(tree, repo, log)
    if state == "local":
        say(f"    building the kernel tree as it stands (local changes in {tree})")
    frags = fragments(repo, extra, bench)
    key = kernel_key(tree, version, frags)
    out = cache / "kernels" / key
    if (out / "bzImage").is_file():
        say(f"==> kernel {key}: cached")
        return out
    build = build_dir(cache, version, bench)
    merge_config(tree, build, frags, log)
    cmd, env = make_command(cache, tree, build, jobs)
    with Phase(f"building kernel {key} (make {cmd[4]} bzImage; log {log})"):
        run_logged(cmd, log, "kernel build", env=env)
        _rebuild_boot_payload(build, cmd, log, env)
    tmp = out.with_name(key + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(build / "arch/x86/boot/bzImage", tmp / "bzImage")
    shutil.copy2(build / ".config", tmp / "config")
    shutil.copy2(build / "System.map", tmp / "System.map")
    (tmp / "release").write_text(
        (build / "include/config/kernel.release").read_text())
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def export_series(cache, repo):
    """Write the tree's commits since `pristine` into kernel/ (format-patch),
    keeping the cover letter; the tree then counts as the series again."""
    tree = tree_dir(cache, source_version())
    if not (tree / ".git").is_dir():
        raise TestbedError(f"no kernel tree yet at {tree}: run 'up' first")
    if _git(tree, "status", "--porcelain", "-uno").strip():
        raise TestbedError(f"{tree} has uncommitted changes: commit them first")
    for old in series(repo):
        old.unlink()
    _git(tree, "format-patch", "-q", "--no-signature", "--zero-commit",
         "-o", str(repo / "kernel"), "pristine..HEAD")
    patches = series(repo)
    _write_record(tree, content_key([], [(p.name, p) for p in patches]))
    for p in patches:
        print(p.relative_to(repo))


def reset_tree(cache, repo):
    """Drop local work in the tree and re-apply kernel/."""
    tree = tree_dir(cache, source_version())
    if not (tree / ".git").is_dir():
        raise TestbedError(f"no kernel tree yet at {tree}")
    _git(tree, "am", "--abort", check=False)
    _git(tree, "checkout", "-q", "-f", "testbed")
    _git(tree, "reset", "-q", "--hard")
    _record_path(tree).unlink(missing_ok=True)
    log = cache / "logs" / "kernel.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    apply_series(tree, repo, log)
