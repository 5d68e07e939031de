"""Host-driven cases: the core dnotify and inotify cases again, on the
share mounted in another dialect (SMB 2.1, 3.0, 3.0.2) or with signing
required of the client (`sign`), so that a change in how the client
frames or checks CHANGE_NOTIFY for one of them shows. Each case mounts
the share on a mount point of its own (/mnt/variant-NAME), with a
connection of its own (nosharesock), runs the chosen cases of the client
programs there in one invocation each (TB_SHARE_MNT tells them where),
and unmounts it whatever happened: /mnt/share stays as it is, and the
variants can run side by side (selection.SIDE_BY_SIDE).

The encrypted variant (`seal`) mounts //server/share-sealed, the same
directory as a share of its own with `server smb encrypt = desired`, so
that the other shares' traffic stays readable in the capture.

The multichannel variant mounts with `multichannel,max_channels=2`: the
server advertises two addresses (setup-server.sh). The client learns them
only after the mount has tried to add channels, and adds one at its next
reconnect, so the case waits for the addresses, has tb-serverd drop the
connection, and waits until DebugData shows the second channel: the core
cases then run with a session of two channels."""

import time

from ..common.addresses import SERVERD_PORT
from ..common.errors import TestbedError
from ..machine import lifecycle, vm
from . import ktap

CLIENT_BIN = vm.CLIENT_BIN
MNT_PREFIX = "/mnt/variant-"
RUN_SECONDS = 600

# case name -> (share, the options that differ from the usual mount)
VARIANTS = {
    "vers2.1": ("share", "vers=2.1,nosharesock"),
    "vers3.0": ("share", "vers=3.0,nosharesock"),
    "vers3.0.2": ("share", "vers=3.0.2,nosharesock"),
    "sign": ("share", "vers=3.1.1,sign,nosharesock"),
    "seal": ("share-sealed", "vers=3.1.1,seal,nosharesock"),
    "multichannel": ("share", "vers=3.1.1,multichannel,max_channels=2"),
}

# case name -> extra channels the session must have before the cases run
EXTRA_CHANNELS = {"multichannel": 1}
CHANNEL_WAIT = 60
DEBUGDATA = "/proc/fs/cifs/DebugData"

# program -> the cases (harness names) run on each variant
CORE = {
    "dnotify_cifs": ["watched.server_disk_create", "watched.server_disk_delete",
                     "watched.server_disk_rename", "watched.second_session_create",
                     "watched.final_size_after_the_last_signal",
                     "watched.close_stops_and_handle_goes"],
    "inotify_cifs": ["inotify.server_disk_create_once_with_name",
                     "inotify.server_disk_mkdir_is_create_isdir",
                     "inotify.server_disk_rename_is_a_move_pair",
                     "inotify.local_changes_look_like_tmpfs"],
}


def _mount(run, mnt, opts, share):
    """Mount //server/`share` on `mnt` with `opts` (plus the credentials
    file), in place of anything a case before left there."""
    code, out, err = vm.guest_exec(
        run, "client", f"mkdir -p {mnt}; umount {mnt} 2>/dev/null; "
        f"mount -t cifs //server/{share} {mnt} -o "
        f"{opts},credentials=/etc/testbed/cifs.cred && grep ' {mnt} ' "
        "/proc/mounts", timeout=60)
    if code != 0:
        raise TestbedError(f"mounting {mnt} with {opts}: "
                           f"{(out + err).strip()[-200:]}")
    return out.strip()


def _umount(run, mnt):
    """Unmount a variant's mount point (lazily, if a case left it busy)."""
    code, out, err = vm.guest_exec(
        run, "client", f"umount {mnt} 2>/dev/null || umount -l {mnt}; "
        f"rmdir {mnt}", timeout=60)
    if code != 0:
        raise TestbedError(f"unmounting {mnt}: {(out + err).strip()[-200:]}")


def _wait_channels(run, mnt, extra):
    """Wait until a session of the client lists @extra extra channels:
    the server's addresses known, a reconnect, the channel bound."""
    code, out, err = vm.guest_exec(
        run, "client", f"for i in $(seq {CHANNEL_WAIT}); do "
        f"grep -q 'Server interfaces: [2-9]' {DEBUGDATA} && break; sleep 1; "
        "done; bash -c '. /mnt/testbed/testbed.env; "
        f"exec 3<>/dev/tcp/$SERVER_IP/{SERVERD_PORT}; "
        "echo disconnect >&3; "
        "read -t 20 r <&3'; "
        f"for i in $(seq {CHANNEL_WAIT}); do ls {mnt} >/dev/null 2>&1; "
        f"grep -q 'Extra Channels: {extra}' {DEBUGDATA} && exit 0; sleep 1; "
        f"done; grep -h -e interfaces -e 'Extra Channels' {DEBUGDATA}; exit 1",
        timeout=2 * CHANNEL_WAIT + 60)
    if code != 0:
        raise TestbedError(f"no session with {extra} extra channel(s) after "
                           f"{CHANNEL_WAIT}s ({out.strip() or 'none listed'})")
    return f"{extra} extra channel(s)"


def _run_program(run, name, mnt, program, cases):
    """(ok, output, reason) of the chosen cases of one client program, on
    the share mounted at `mnt`."""
    picks = " ".join(f"-r {c}" for c in cases)
    code, out, err = vm.guest_exec(
        run, "client", f"TB_TEST_ID=mounts.{name} TB_SHARE_MNT={mnt} "
        f"{CLIENT_BIN}/{program} {picks}", timeout=RUN_SECONDS)
    plan, results = ktap.parse(out)
    ok, why = ktap.verdict(plan, results, code)
    if ok and len(results) != len(cases):
        ok, why = False, f"{len(results)} results for {len(cases)} cases"
    return ok, out + "".join(f"# {line}\n" for line in err.splitlines()), why


def run_variant(run, name):
    """(ok, output, reason, counts) of one mount variant."""
    share, opts = VARIANTS[name]
    mnt = MNT_PREFIX + name
    lines, text, ok, why = [], "", True, ""
    t0 = time.monotonic()
    try:
        lines.append(_mount(run, mnt, f"{opts},{lifecycle.SHARE_NOTIFY_OPT}",
                            share))
        if name in EXTRA_CHANNELS:
            lines.append(_wait_channels(run, mnt, EXTRA_CHANNELS[name]))
        for program, cases in CORE.items():
            p_ok, out, p_why = _run_program(run, name, mnt, program, cases)
            text += out
            lines.append(f"{program}: {len(cases)} case(s) "
                         f"{'passed' if p_ok else 'FAILED: ' + p_why}")
            if not p_ok and ok:
                ok, why = False, f"{program}: {p_why}"
    except (TestbedError, TimeoutError, OSError) as e:
        ok, why = False, str(e)
    finally:
        try:
            _umount(run, mnt)
        except (TestbedError, TimeoutError, OSError) as e:
            ok, why = False, why or str(e)
            lines.append(str(e))
    lines.append(f"{time.monotonic() - t0:.1f}s")
    text = "".join(f"    {line}\n" for line in text.splitlines()) + \
        "".join(f"# {line}\n" for line in lines)
    return ok, text, why, (1, 0, 0) if ok else (0, 1, 0)
