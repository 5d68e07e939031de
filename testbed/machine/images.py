"""The guests' root filesystems: Debian bookworm made with debootstrap from
the lists in images/, one ext4 image per role, built from a directory with
mkfs.ext4 -d (no loop mounts), cached under a key of images/'s content.
The server's image carries Debian's own kernel (packages-server.txt): its
vmlinuz and initrd are copied out beside the images, for QEMU's -kernel
and -initrd (the server is a peer, not the kernel under test: it runs a
distribution kernel without the debug checkers, three times faster under
TCG than the testbed's own). Files under images/before-packages/<role>/
go in before that role's packages (the server's initramfs-tools settings:
its initrd holds only what mounts its root); images/rootfs/ after them.

An image is built in a temporary directory and renamed into place only when
complete, so a failed or interrupted build (a full disk, Ctrl-C) leaves no
half-written image in the cache.
"""

import errno
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..common import host_packages
from ..common.cache import content_key, tree_files
from ..common.commands import run_logged
from ..common.errors import TestbedError
from ..common.progress import Phase, say

SUITE = "bookworm"
ROLES = ("server", "client")
ENV_MIRROR = "TESTBED_DEBIAN_MIRROR"
# dpkg's fsync of every file it unpacks protects a system from a power
# cut; a half-built image is thrown away instead, so the build skips it
# (the file is removed before the image is made)
UNSAFE_IO = Path("etc/dpkg/dpkg.cfg.d/testbed-build-unsafe-io")


def read_list(path):
    """Package names from a list file: one a line, '#' comments."""
    names = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def mirror_from_sources(texts):
    """The first Debian archive URI (not -security) in apt source texts,
    in one-line or deb822 form; None when there is none."""
    for text in texts:
        for m in re.finditer(r"(?m)^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)",
                             text):
            uri, suite = m.groups()
            if "security" not in suite and "security" not in uri:
                return uri
        for stanza in re.split(r"\n\s*\n", text):
            uris = re.search(r"(?mi)^URIs:\s*(\S+)", stanza)
            types = re.search(r"(?mi)^Types:.*\bdeb\b", stanza)
            suites = re.search(r"(?mi)^Suites:\s*(.*)$", stanza)
            if uris and types and suites and "security" not in uris.group(1) \
                    and "security" not in suites.group(1):
                return uris.group(1)
    return None


def host_mirror():
    """The Debian mirror this host's apt uses ($TESTBED_DEBIAN_MIRROR wins)."""
    if os.environ.get(ENV_MIRROR):
        return os.environ[ENV_MIRROR]
    texts = []
    for path in [Path("/etc/apt/sources.list"),
                 *sorted(Path("/etc/apt/sources.list.d").glob("*.list")),
                 *sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))]:
        try:
            texts.append(path.read_text())
        except OSError:
            pass
    mirror = mirror_from_sources(texts)
    if not mirror:
        raise TestbedError("no Debian mirror found in /etc/apt/sources.list*; "
                           f"set {ENV_MIRROR}")
    return mirror


def image_key(repo):
    return content_key([("suite", SUITE), ("arch", "amd64")],
                       tree_files(repo / "images", "images/"))


def image_paths(cache, repo):
    """{role: path} of the cached images for the current images/."""
    d = cache / "images" / image_key(repo)
    return {role: d / f"{role}.ext4" for role in ROLES}


def server_boot(images_dir):
    """(vmlinuz, initrd) of the Debian kernel the server's image carries."""
    d = Path(images_dir)
    return d / "server-vmlinuz", d / "server-initrd.img"


def server_release(images_dir):
    """The release of the server's Debian kernel ("6.1.0-57-amd64"), or
    "unknown" for images built before it was recorded, or none given (a
    state file from before the images were recorded in it)."""
    if not images_dir:
        return "unknown"
    try:
        return (Path(images_dir) / "server-release").read_text().strip()
    except OSError:
        return "unknown"


def complete(paths):
    """Whether the images and the server's kernel of `paths` are all built."""
    server = paths["server"].parent
    return all(p.is_file() for p in (*paths.values(), *server_boot(server)))


def _take_kernel(root, out, log):
    """Copy the Debian kernel and initrd out of the server's tree into
    `out` (see server_boot()): exactly one of each must be there."""
    vmlinuz = sorted((root / "boot").glob("vmlinuz-*"))
    if len(vmlinuz) != 1:
        raise TestbedError(f"the server image has {len(vmlinuz)} kernels in "
                           f"/boot, not one (log: {log})")
    release = vmlinuz[0].name[len("vmlinuz-"):]
    initrd = root / "boot" / f"initrd.img-{release}"
    if not initrd.is_file():
        raise TestbedError(f"the server image has no {initrd.name} "
                           f"(initramfs-tools failed? log: {log})")
    dst_kernel, dst_initrd = server_boot(out)
    shutil.copyfile(vmlinuz[0], dst_kernel)
    shutil.copyfile(initrd, dst_initrd)
    (out / "server-release").write_text(release + "\n")


def _disk_full_check(log):
    text = Path(log).read_text(errors="replace")[-20000:]
    if "No space left on device" in text:
        raise TestbedError(f"disk full while building images (log: {log}); "
                           "free some space and run 'up' again")


class _Mounts:
    """The few mounts a chroot needs for apt; always undone."""

    def __init__(self, root, archives):
        self.root, self.archives, self.done = root, archives, []

    def __enter__(self):
        for src, dst, opts in (("proc", self.root / "proc", ["-t", "proc"]),
                               (self.archives,
                                self.root / "var/cache/apt/archives",
                                ["--bind"])):
            dst.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", *opts, str(src), str(dst)], check=True)
            self.done.append(dst)
        return self

    def __exit__(self, *exc):
        for dst in reversed(self.done):
            subprocess.run(["umount", "-l", str(dst)], check=False)


def _unmount_under(top):
    """Undo every mount below `top` (debootstrap's own /proc and /sys when
    it was interrupted), deepest first, before the tree is removed."""
    prefix = str(top).rstrip("/") + "/"
    try:
        mounts = [line.split()[1] for line in
                  Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return
    for m in sorted((m for m in mounts if m.startswith(prefix)),
                    key=len, reverse=True):
        subprocess.run(["umount", "-l", m], check=False)


def _chroot(root, cmd, log, what):
    env = {"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C.UTF-8",
           "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    run_logged(["chroot", root, *cmd], log, what, env=env)


def _debootstrap(cache, repo, root, mirror, log):
    base = read_list(repo / "images/packages-base.txt")
    dl = cache / "downloads" / "debootstrap"
    dl.mkdir(parents=True, exist_ok=True)
    (root / UNSAFE_IO).parent.mkdir(parents=True)
    (root / UNSAFE_IO).write_text("force-unsafe-io\n")
    run_logged(["debootstrap", "--variant=minbase", f"--cache-dir={dl}",
                "--include=" + ",".join(base), SUITE, root, mirror],
               log, "debootstrap")


def _make_role(cache, repo, base, root, role, log):
    run_logged(["cp", "-a", "--reflink=auto", base, root], log,
               f"copying the base tree for {role}")
    pkgs = read_list(repo / f"images/packages-{role}.txt")
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# no service starts in the image build\n"
                      "exit 101\n")
    policy.chmod(0o755)
    shutil.copy2("/etc/resolv.conf", root / "etc/resolv.conf")
    before = repo / "images" / "before-packages" / role
    if before.is_dir():
        run_logged(["cp", "-a", "--no-preserve=ownership", f"{before}/.",
                    root], log, f"copying images/before-packages/{role}")
    archives = cache / "downloads" / "apt-archives"
    archives.mkdir(parents=True, exist_ok=True)
    with _Mounts(root, archives):
        _chroot(root, ["apt-get", "update", "-q"], log, f"apt-get update ({role})")
        _chroot(root, ["apt-get", "install", "-y", "-q",
                       "--no-install-recommends", *pkgs], log,
                f"installing {role} packages")
    run_logged(["cp", "-a", "--no-preserve=ownership",
                f"{repo}/images/rootfs/.", root], log, "copying images/rootfs")
    shutil.copy2(repo / "images/customize.sh", root / "tmp/customize.sh")
    _chroot(root, ["/bin/sh", "/tmp/customize.sh", role], log,
            f"customizing the {role} image")
    (root / "tmp/customize.sh").unlink()
    policy.unlink()
    (root / UNSAFE_IO).unlink()
    (root / "etc/resolv.conf").write_text("")


def _mkfs(root, image, log):
    used = int(subprocess.run(["du", "-sb", str(root)], capture_output=True,
                              text=True).stdout.split()[0])
    size_mib = max(2048, used * 13 // 10 // (1 << 20) + 1024)
    run_logged(["mkfs.ext4", "-q", "-F", "-L", "root", "-d", root,
                image, f"{size_mib}M"], log, f"mkfs.ext4 {image.name}")


def build_images(cache, repo):
    """Return {role: image path}, building them when images/ changed."""
    paths = image_paths(cache, repo)
    if complete(paths):
        say(f"==> images {paths['server'].parent.name}: cached")
        return paths
    host_packages.require_root("building the guest images")
    final = paths["server"].parent
    tmp = final.with_name(final.name + ".tmp")
    log = cache / "logs" / "images.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    mirror = host_mirror()
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        base = tmp / "base"
        with Phase(f"debootstrap {SUITE} minbase (log {log})"):
            _debootstrap(cache, repo, base, mirror, log)
        for role in ROLES:
            root = tmp / f"{role}-root"
            with Phase(f"{role} image: packages and set-up"):
                _make_role(cache, repo, base, root, role, log)
                if role == "server":
                    _take_kernel(root, tmp, log)
                _mkfs(root, tmp / f"{role}.ext4", log)
            shutil.rmtree(root)
        shutil.rmtree(base)
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
    except TestbedError:
        _disk_full_check(log)
        raise
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise TestbedError(f"disk full while building images in {tmp}; "
                               "free some space and run 'up' again") from None
        raise
    finally:
        if tmp.exists():
            _unmount_under(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
    return paths
