"""Resume instead of boot: the state of both guests, saved once after a
fresh boot passed its readiness checks, restored by a later `up`.

A snapshot is each guest's memory and devices (QEMU migration to a file,
taken with both guests stopped, so that the TCP connections between them
are consistent), a copy of each disk overlay as it was then, and each
console log so far (the suite reads the boot's KUnit results and scans
the whole console). It lives under <cache>/snapshots/<key>, the key made
of what the guests were booted from: the kernel, the images, samba-server/,
the QEMU command line's shape, the accelerator and QEMU's version. A
changed input is a new key and a fresh boot; the two newest snapshots are
kept (the debug and the bench kernel), `down --forget` removes them all.

What a restore breaks, and how it is mended: the 9p staging folder cannot
migrate while mounted (QEMU blocks it), so the guests unmount it before
the save and mount the new run's after; the guests' clocks stop while
saved, so both are set from the host's; the SMB connection is the one of
the save, so the share is listed and smbd asked before `up` returns.
"""
import json
import shutil
import subprocess
import time
from pathlib import Path

from ..common.cache import content_key, tree_files
from ..common.errors import TestbedError
from ..common.progress import debug
from . import vm
from .guest_agent import Qmp

# bump when what a snapshot holds changes, the guests' state included
# (2: the extra smbd instances run before the save)
FORMAT = "2"
KEEP = 2
MIGRATE_SECONDS = 300   # writing or reading one guest's state under TCG
STAGING_MOUNT = ("mkdir -p /mnt/testbed && { mountpoint -q /mnt/testbed || "
                 "mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=none "
                 "testbed /mnt/testbed; }")


def _qemu_version():
    try:
        out = subprocess.run(["qemu-system-x86_64", "--version"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def snapshot_key(repo, kern, images_dir, accel):
    """The key of a snapshot of guests booted from these inputs."""
    bzimage = Path(kern) / "bzImage"
    stat = bzimage.stat()
    parts = [("format", FORMAT), ("kernel", str(Path(kern).resolve())),
             ("bzimage", f"{stat.st_size}:{stat.st_mtime_ns}"),
             ("images", str(images_dir)), ("accel", accel),
             ("qemu", _qemu_version()),
             ("argv", json.dumps([vm.MEMORY_MIB, vm.KVM_CPU, vm.TCG_CPU,
                                 vm.TCG_CLIENT_CPU])),
             ("cmdline", json.dumps([vm.kernel_cmdline(r) for r in vm.ROLES]))]
    return content_key(parts, tree_files(repo / "samba-server",
                                         "samba-server/"))


def root(cache):
    return cache / "snapshots"


def find(cache, key):
    """The snapshot directory for `key`, or None."""
    d = root(cache) / key
    if all((d / f"{role}.{ext}").is_file()
           for role in vm.ROLES for ext in ("state", "qcow2")):
        return d
    return None


def forget(cache, key=None):
    """Remove one snapshot, or all of them; how many went."""
    top = root(cache)
    if not top.is_dir():
        return 0
    gone = 0
    for d in list(top.iterdir()):
        if key is None or d.name in (key, f".tmp-{key}"):
            shutil.rmtree(d, ignore_errors=True)
            gone += not d.name.startswith(".")
    return gone


def _prune(cache):
    dirs = sorted((d for d in root(cache).iterdir()
                   if d.is_dir() and not d.name.startswith(".")),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for d in dirs[KEEP:]:
        shutil.rmtree(d, ignore_errors=True)


def _wait_migration(qmp, what):
    deadline = time.monotonic() + MIGRATE_SECONDS
    while time.monotonic() < deadline:
        info = qmp.command("query-migrate") or {}
        status = info.get("status")
        if status == "completed":
            return
        if status in ("failed", "cancelled"):
            raise TestbedError(f"{what}: migration {status}: "
                               f"{info.get('error-desc', '')}")
        time.sleep(0.2)
    raise TestbedError(f"{what}: not done in {MIGRATE_SECONDS} s")


def set_clocks(run):
    """Both guests' wall clocks from the host's (they stop while saved)."""
    for role in vm.ROLES:
        code, out, err = vm.guest_exec(run, role,
                                       f"date -s @{time.time():.6f} "
                                       ">/dev/null", timeout=20)
        if code != 0:
            raise TestbedError(f"setting the {role}'s clock: {err.strip()}")


def mount_staging(run):
    for role in vm.ROLES:
        code, out, err = vm.guest_exec(run, role, STAGING_MOUNT, timeout=30)
        if code != 0:
            raise TestbedError(f"mounting the staging folder on the {role}: "
                               f"{(err or out).strip()[-200:]}")


def save(cache, key, run):
    """Save both running guests under `key`, then let them go on. Raises
    TestbedError; the guests run on either way."""
    top = root(cache)
    top.mkdir(parents=True, exist_ok=True)
    tmp = top / f".tmp-{key}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        try:
            for role in vm.ROLES:
                code, out, err = vm.guest_exec(run, role,
                                               "umount /mnt/testbed",
                                               timeout=30)
                if code != 0:
                    raise TestbedError(
                        f"unmounting the staging folder on the {role}: "
                        f"{(err or out).strip()[-200:]}")
            _stop_and_save(run, tmp)
        finally:
            # whatever happened, the guests go on with their staging folder
            mount_staging(run)
            set_clocks(run)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)     # no half snapshot kept
        raise
    (tmp / "info.json").write_text(json.dumps(
        {"key": key, "run": str(run),
         "saved": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    final = top / key
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    _prune(cache)
    return final


def _stop_and_save(run, tmp):
    """Stop both guests, then save each (overlay, memory and devices,
    console) into `tmp`; both are continued whatever happens."""
    qmps = {}
    try:
        for role in vm.ROLES:
            qmps[role] = Qmp(vm.paths(run, role)["qmp"], timeout=10)
        for role in vm.ROLES:
            qmps[role].command("stop")
        for role in vm.ROLES:
            p = vm.paths(run, role)
            subprocess.run(["cp", "--sparse=always", str(p["overlay"]),
                            str(tmp / f"{role}.qcow2")], check=True)
            qmps[role].command("migrate",
                               uri=f"exec:cat > {tmp / (role + '.state')}")
            _wait_migration(qmps[role], f"saving the {role}")
            shutil.copyfile(p["console"], tmp / f"{role}-console.log")
    finally:
        for role, qmp in qmps.items():
            try:
                qmp.command("cont")
            except (TestbedError, TimeoutError, OSError) as e:
                debug(f"{role}: cont after the save: {e}")
            qmp.close()


def prepare_run(snap, run):
    """The run's overlays and console logs from the snapshot; the argument
    QEMU needs per role to load its state."""
    incoming = {}
    for role in vm.ROLES:
        p = vm.paths(run, role)
        subprocess.run(["cp", "--sparse=always", str(snap / f"{role}.qcow2"),
                        str(p["overlay"])], check=True)
        console = snap / f"{role}-console.log"
        text = console.read_bytes() if console.is_file() else b""
        p["console"].write_bytes(
            text + f"\n==== testbed: restored from snapshot {snap.name} at "
            f"{time.strftime('%H:%M:%S')} ====\n".encode())
        incoming[role] = f"exec:cat {snap / (role + '.state')}"
    return incoming


def wait_running(run, deadline):
    """Until both guests run again after loading their state: the state was
    saved with both stopped (so that their connections agree), and QEMU
    loads a stopped guest as stopped: each is continued once loaded."""
    for role in vm.ROLES:
        with Qmp(vm.paths(run, role)["qmp"], timeout=10) as qmp:
            while True:
                status = (qmp.command("query-status") or {}).get("status")
                if status == "running":
                    break
                if status == "paused":
                    qmp.command("cont")
                    continue
                if status not in ("inmigrate", "prelaunch", "restore-vm"):
                    raise TestbedError(f"the {role} did not resume "
                                       f"(state {status})")
                if time.monotonic() > deadline:
                    raise TestbedError(f"the {role} did not resume in time "
                                       f"(state {status})")
                time.sleep(0.2)
