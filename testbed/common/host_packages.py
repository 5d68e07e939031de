"""Host prerequisites: what the testbed runs on the host, and from which
Debian package it comes. Missing ones are installed with apt-get when we are
root; otherwise the exact command is printed and we exit 2.
"""

import os
import shutil
import subprocess

from .errors import UsageError
from .progress import Phase, say

KERNEL_SOURCE_TARBALL = "/usr/src/linux-source-6.12.tar.xz"

# (package, a file or command proving it is installed)
REQUIREMENTS = [
    ("qemu-system-x86", "cmd:qemu-system-x86_64"),
    ("qemu-utils", "cmd:qemu-img"),
    ("linux-source-6.12", KERNEL_SOURCE_TARBALL),
    ("debootstrap", "cmd:debootstrap"),
    ("gcc", "cmd:gcc"),
    ("libc6-dev", "/usr/lib/x86_64-linux-gnu/libc.a"),
    ("make", "cmd:make"),
    ("flex", "cmd:flex"),
    ("bison", "cmd:bison"),
    ("bc", "cmd:bc"),
    ("libelf-dev", "/usr/include/gelf.h"),
    ("libssl-dev", "/usr/include/openssl/ssl.h"),
    ("tshark", "cmd:tshark"),
    ("git", "cmd:git"),
    ("xz-utils", "cmd:xz"),
    ("e2fsprogs", "cmd:mkfs.ext4"),
    ("ccache", "cmd:ccache"),
    ("cpio", "cmd:cpio"),
    ("rsync", "cmd:rsync"),
    ("python3-pytest", "/usr/lib/python3/dist-packages/pytest/__init__.py"),
    # checkpatch.pl's SPDX check (kernel check)
    ("python3-ply", "/usr/lib/python3/dist-packages/ply/__init__.py"),
    # the bench's plots (bench/plot.py)
    ("python3-matplotlib",
     "/usr/lib/python3/dist-packages/matplotlib/__init__.py"),
]


def _present(probe):
    if probe.startswith("cmd:"):
        name = probe[4:]
        return bool(shutil.which(name) or
                    any(os.access(os.path.join(d, name), os.X_OK)
                        for d in ("/usr/sbin", "/sbin")))
    return os.path.exists(probe)


def missing_packages(requirements=REQUIREMENTS):
    """The packages whose proof file or command is absent."""
    return [pkg for pkg, probe in requirements if not _present(probe)]


def apt_command(packages):
    """The one apt-get line that installs `packages`."""
    return ("apt-get install -y --no-install-recommends "
            + " ".join(sorted(packages)))


def ensure_host_packages():
    """Install what is missing (as root) or tell the user how, exit 2."""
    missing = missing_packages()
    if not missing:
        return
    line = apt_command(missing)
    if os.geteuid() != 0:
        raise UsageError(f"missing host packages: {' '.join(missing)}; run as "
                         f"root: apt-get update && {line}")
    with Phase(f"installing host packages: {' '.join(missing)}"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (["apt-get", "update", "-q"], line.split()):
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                say(proc.stdout[-3000:])
                raise UsageError(f"'{' '.join(cmd)}' failed "
                                 f"(exit {proc.returncode})")
    still = missing_packages()
    if still:
        raise UsageError(f"still missing after apt-get: {' '.join(still)}")


def require_root(what):
    """Image builds need root (debootstrap, chroot); say so plainly."""
    if os.geteuid() != 0:
        raise UsageError(f"{what} needs root (debootstrap and chroot); run "
                         f"'sudo python3 orchestrate.py up' once, later runs "
                         f"reuse the cached result")
