"""The testbed's life cycle: up, down, status. A run is one boot of both
guests; its directory under <cache>/runs/ keeps consoles, the capture and
the staging folder after the guests are gone."""

import json
import shutil
import subprocess
import threading
import time
from datetime import datetime
from pathlib import Path

from ..common import commands, host_packages
from ..common.errors import TestbedError, UsageError
from ..common.progress import Phase, fmt_secs, say
from ..kernel import build as kernel_build
from . import images, network, server_programs, snapshot, vm

# Bounds for waits, sized for TCG on a 2-core host (a boot there takes
# about a minute); KVM finishes far inside them.
BOOT_SECONDS = 300
RESUME_SECONDS = 120
SMBD_SECONDS = 90
MOUNT_SECONDS = 60
KEEP_RUNS = 10


def state_path(cache):
    return cache / "state.json"


def read_state(cache):
    try:
        return json.loads(state_path(cache).read_text())
    except (OSError, ValueError):
        return None


def running(cache):
    """(state, {role: pid or None}) of the current run, or (None, {})."""
    state = read_state(cache)
    if not state:
        return None, {}
    run = Path(state["run"])
    return state, {role: vm.read_pid(run, role) for role in vm.ROLES}


def read_conf(repo):
    """samba-server/testbed.conf as a dict (KEY=value lines)."""
    conf = {}
    for line in (repo / "samba-server/testbed.conf").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            k, v = line.split("=", 1)
            conf[k.strip()] = v.strip()
    return conf


def _new_run(cache, repo):
    runs = cache / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    name = datetime.now().strftime("%Y%m%d-%H%M%S")
    run = runs / name
    n = 1
    while run.exists():
        n += 1
        run = runs / f"{name}-{n}"
    staging = run / "staging"
    staging.mkdir(parents=True)
    for f in (repo / "samba-server").iterdir():
        if f.is_file():
            shutil.copy2(f, staging / f.name)
    conf = read_conf(repo)
    (staging / "testbed.env").write_text(network.env_file_text(
        conf["SMB_USER"], conf["SMB_PASS"], conf["SMB_DOMAIN"]))
    (staging / "bin").mkdir()
    latest = runs / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(run.name)
    old = sorted(p for p in runs.iterdir()
                 if p.is_dir() and not p.is_symlink())[:-KEEP_RUNS]
    for p in old:
        if p != run:
            shutil.rmtree(p, ignore_errors=True)
    return run


def _wait_for(what, check, seconds, run, role):
    """Poll check() until true, at most `seconds`; fail with the console."""
    deadline = time.monotonic() + seconds
    last = ""
    while time.monotonic() < deadline:
        ok, last = check()
        if ok:
            return
        time.sleep(2)
    raise TestbedError(f"{what}: not ready after {seconds}s ({last.strip()[-300:]})",
                       Path(vm.paths(run, role)["console"]).read_text(
                           errors="replace")[-3000:])


def _smbd_ready(run, conf):
    def check():
        code, out, err = vm.guest_exec(
            run, "server", f"smbclient -m SMB3 //127.0.0.1/share "
            f"-U '{conf['SMB_USER']}%{conf['SMB_PASS']}' -c ls", timeout=20)
        return code == 0, out + err
    _wait_for("smbd on the server", check, SMBD_SECONDS, run, "server")


# /mnt/share asks that every watcher (inotify, fanotify) hears of changes
# made on the server; a kernel without the series refuses the option, and
# the share is then mounted without it (inotify_cifs fails, as it should).
SHARE_OPTS = "vers=3.1.1,credentials=/etc/testbed/cifs.cred"
SHARE_NOTIFY_OPT = "remoteinotify"


def _mount_share(run):
    def check():
        code, out, err = vm.guest_exec(
            run, "client", "mountpoint -q /mnt/share || mount -t cifs "
            f"//server/share /mnt/share -o {SHARE_OPTS},{SHARE_NOTIFY_OPT} "
            "|| { echo 'testbed: this kernel has no remoteinotify' >&2; "
            f"mount -t cifs //server/share /mnt/share -o {SHARE_OPTS}; }}",
            timeout=30)
        return code == 0, out + err
    _wait_for("mounting //server/share on the client", check, MOUNT_SECONDS,
              run, "client")


# The server's knfsd export, mounted on the client for the check_flags tests.
NFS_MOUNTS = (("/mnt/nfs3", "nfs", "vers=3,nolock,mountproto=tcp"),
              ("/mnt/nfs42", "nfs4", "vers=4.2"))


def _mount_nfs(run, conf):
    for mnt, fstype, opts in NFS_MOUNTS:
        def check(mnt=mnt, fstype=fstype, opts=opts):
            code, out, err = vm.guest_exec(
                run, "client", f"mkdir -p {mnt}; mountpoint -q {mnt} || "
                f"mount -t {fstype} -o {opts},soft,timeo=50,retrans=2 "
                f"server:{conf['NFS_PATH']} {mnt}", timeout=40)
            return code == 0, out + err
        _wait_for(f"mounting server:{conf['NFS_PATH']} on {mnt} ({opts})",
                  check, MOUNT_SECONDS, run, "client")


def _start_guests(run, kern, imgs, accel, started, incoming=None):
    """Start QEMU for both guests (the server's NIC listens, so first):
    the client boots `kern`, the server the Debian kernel of its image."""
    incoming = incoming or {}
    started.append("server")
    vm.start("server", run, images.server_boot(imgs["server"].parent),
             imgs["server"], accel,
             incoming=incoming.get("server"))
    deadline = time.monotonic() + 30
    while not (run / "segment.sock").exists():
        if time.monotonic() > deadline:
            raise TestbedError("the server's network socket did not appear")
        time.sleep(0.1)
    started.append("client")
    vm.start("client", run, kern, imgs["client"], accel,
             incoming=incoming.get("client"))


def _boot(run, kern, imgs, accel, conf, started):
    with Phase(f"booting server and client ({accel}; run {run})"):
        t_boot = time.monotonic()
        _start_guests(run, kern, imgs, accel, started)
        deadline = time.monotonic() + BOOT_SECONDS
        for role in vm.ROLES:
            vm.wait_agent(run, role, deadline)
        say(f"    both guest agents answer after "
            f"{fmt_secs(time.monotonic() - t_boot)}")
        _smbd_ready(run, conf)
        _mount_share(run)
        _mount_nfs(run, conf)
        server_programs.start_smbds(run)


def _resume(cache, run, kern, imgs, accel, conf, snap, started):
    """Both guests from the snapshot, checked as a boot is; False (said in
    one line, the snapshot dropped, the run cleaned) when that fails."""
    try:
        with Phase(f"resuming server and client from snapshot {snap.name} "
                   f"({accel}; run {run})"):
            incoming = snapshot.prepare_run(snap, run)
            _start_guests(run, kern, imgs, accel, started, incoming)
            deadline = time.monotonic() + RESUME_SECONDS
            snapshot.wait_running(run, deadline)
            for role in vm.ROLES:
                vm.wait_agent(run, role, deadline)
            snapshot.set_clocks(run)
            snapshot.mount_staging(run)
            _smbd_ready(run, conf)
            _check_mounts(run)
        return True
    except (TestbedError, TimeoutError, OSError,
            subprocess.CalledProcessError) as e:
        say(f"    resume failed ({str(e)[:200]}): booting fresh")
        for role in reversed(started):
            vm.kill(run, role)
        started.clear()
        for role in vm.ROLES:
            for path in vm.paths(run, role).values():
                path.unlink(missing_ok=True)
        (run / "segment.sock").unlink(missing_ok=True)
        snapshot.forget(cache, snap.name)
        return False


def _save(cache, key, run):
    """Save both guests for the next `up`; a failure costs only that."""
    try:
        with Phase("saving both guests for the next 'up' (snapshot "
                   f"{key})"):
            snapshot.save(cache, key, run)
    except (TestbedError, TimeoutError, OSError,
            subprocess.CalledProcessError) as e:
        say(f"    not saved ({str(e)[:200]}); the next 'up' boots")


def _check_mounts(run):
    """The restored SMB and NFS connections answer (a listing of each)."""
    mounts = ["/mnt/share"] + [m for m, _, _ in NFS_MOUNTS]
    code, out, err = vm.guest_exec(
        run, "client", " && ".join(f"ls {m} >/dev/null" for m in mounts),
        timeout=MOUNT_SECONDS)
    if code != 0:
        raise TestbedError(f"the mounts do not answer after the resume: "
                           f"{(err or out).strip()[-200:]}")


def _kernel_and_images(cache, repo, extra_config, bench):
    """(kernel dir, {role: image}), built when missing: the images in a
    thread while the kernel builds (debootstrap waits on the mirror and the
    disk more than on the CPU), so that a cold set-up pays the longer of
    the two rather than their sum."""
    if images.complete(images.image_paths(cache, repo)):
        return (kernel_build.build_kernel(cache, repo, extra_config,
                                          bench=bench),
                images.build_images(cache, repo))
    host_packages.require_root("building the guest images")
    built = {}

    def build_images():
        try:
            built["images"] = images.build_images(cache, repo)
        except BaseException as e:      # raised again below, in `up`
            built["error"] = e

    thread = threading.Thread(target=build_images, name="images")
    thread.start()
    try:
        kern = kernel_build.build_kernel(cache, repo, extra_config,
                                         bench=bench)
    except KeyboardInterrupt:
        # the images' commands end too (each runs in a process group of
        # its own, which neither a Ctrl-C nor a kill of ours reaches), and
        # their thread then stops; a failed kernel build lets them finish,
        # for the next try
        commands.stop_running()
        raise
    finally:
        thread.join()
    if "error" in built:
        raise built["error"]
    return kern, built["images"]


def up(cache, repo, extra_config=(), kernel_dir=None, bench=False,
       fresh=False):
    """Build what is missing, resume both guests from their snapshot or
    boot them, mount the share. With `kernel_dir` (a directory holding
    bzImage and config, such as a cached kernels/<key>), boot that kernel
    instead of building kernel/; with `bench`, the kernel built without
    the debug checkers; with `fresh`, boot even when a snapshot exists."""
    state, pids = running(cache)
    if state and all(pids.values()):
        running_kernel = Path(state.get("kernel", ""))
        if kernel_dir and Path(kernel_dir).resolve() != running_kernel:
            raise UsageError(f"the testbed runs the kernel {running_kernel}, "
                             f"not --kernel {kernel_dir}: 'down' first")
        say(f"testbed already up (run {state['run']}, kernel "
            f"{running_kernel.name}); 'down' stops it, and the next 'up' "
            "boots what kernel/ builds then")
        return state
    if state:
        say("cleaning up a run whose guests are gone")
        down(cache, quiet=True)
    t0 = time.monotonic()
    host_packages.ensure_host_packages()
    if kernel_dir:
        kern = Path(kernel_dir).resolve()
        if not (kern / "bzImage").is_file() or not (kern / "config").is_file():
            raise UsageError(f"--kernel {kernel_dir}: no bzImage and config "
                             "there (a directory like <cache>/kernels/<key>)")
        say(f"==> kernel {kern}: given with --kernel (the client's)")
        imgs = images.build_images(cache, repo)
    else:
        kern, imgs = _kernel_and_images(cache, repo, extra_config, bench)
    accel = vm.choose_accel(cache, kern)
    run = _new_run(cache, repo)
    conf = read_conf(repo)
    key = snapshot.snapshot_key(repo, kern, imgs["server"].parent, accel)
    snap = None if fresh else snapshot.find(cache, key)
    started = []
    try:
        resumed = snap is not None and _resume(cache, run, kern, imgs,
                                               accel, conf, snap, started)
        if not resumed:
            _boot(run, kern, imgs, accel, conf, started)
            _save(cache, key, run)
        state = {"run": str(run), "accel": accel, "kernel": str(kern),
                 "release": _release(kern),
                 "images": str(imgs["server"].parent),
                 "resumed": key if resumed else None,
                 "started": datetime.now().isoformat(timespec="seconds"),
                 "up_seconds": round(time.monotonic() - t0, 1)}
        state_path(cache).write_text(json.dumps(state, indent=1))
    except BaseException:
        for role in reversed(started):
            vm.kill(run, role)
        raise
    say(f"testbed up in {fmt_secs(time.monotonic() - t0)}: //server/share "
        f"on client:/mnt/share, kernel {state['release']}, {accel}")
    say(f"  consoles and capture: {run}")
    return state


def _release(kern):
    try:
        return (kern / "release").read_text().strip()
    except OSError:
        return "unknown"


def down(cache, quiet=False, forget=False):
    """Stop both guests (clean poweroff, bounded) and forget the run; with
    `forget`, the saved guests (snapshots) too."""
    if forget:
        gone = snapshot.forget(cache)
        say(f"{gone} saved snapshot(s) removed; the next 'up' boots")
    state = read_state(cache)
    if not state:
        if not quiet:
            say("testbed is not up")
        return
    run = Path(state["run"])
    with Phase("stopping the guests"):
        if vm.read_pid(run, "client"):
            try:
                vm.guest_exec(run, "client", "umount -f /mnt/share /mnt/nfs3 "
                              "/mnt/nfs42", timeout=20)
            except (TestbedError, TimeoutError, OSError):
                pass
        for role in ("client", "server"):
            vm.stop(run, role)
    for role in vm.ROLES:
        for key in ("qga", "qmp", "shell"):
            vm.paths(run, role)[key].unlink(missing_ok=True)
    (run / "segment.sock").unlink(missing_ok=True)
    state_path(cache).unlink(missing_ok=True)
    if not quiet:
        say(f"testbed down; logs and capture kept in {run}")


def status(cache):
    """Print what runs, with which kernel and accelerator; True when up."""
    state, pids = running(cache)
    if not state:
        print("testbed: down")
        return False
    up_ok = all(pids.values())
    print(f"testbed: {'up' if up_ok else 'partly down'}")
    print(f"  run:         {state['run']}")
    print(f"  started:     {state['started']} (up took "
          f"{fmt_secs(state['up_seconds'])})")
    print(f"  kernel:      {state['release']} ({state['kernel']}), "
          "the client's")
    if state.get("images"):
        print(f"  server:      Debian's kernel "
              f"{images.server_release(state['images'])}")
    print(f"  accelerator: {state['accel']}")
    if state.get("resumed"):
        print(f"  resumed:     from snapshot {state['resumed']}")
    for role in vm.ROLES:
        pid = pids[role]
        print(f"  {role:<7}      {'running, pid ' + str(pid) if pid else 'stopped'}")
    return up_ok
