"""The mount variants (host-driven): what they mount, that each runs the
core cases in one invocation per program on a mount point of its own, and
that it is unmounted whatever happened, /mnt/share left alone. The guest
is a fake that records commands."""

from testbed.suite import faults
from testbed.suite import mount_variants
from testbed.suite import selection


def _ktap(n):
    return "TAP version 13\n1..%d\n" % n + "".join(
        f"ok {i} case{i}\n" for i in range(1, n + 1))


class FakeGuest:
    def __init__(self, fail_mount_of=None, fail_program=None, channels=True):
        self.cmds = []
        self.channels = channels
        self.fail_mount_of = fail_mount_of
        self.fail_program = fail_program

    def __call__(self, run, role, cmd, timeout=None):
        assert role == "client"
        self.cmds.append(cmd)
        if "mount -t cifs" in cmd:
            if self.fail_mount_of and self.fail_mount_of in cmd:
                return 32, "", "mount error(95): Operation not supported"
            return 0, "//server/share /mnt/share cifs rw 0 0\n", ""
        if cmd.startswith("umount ") and "rmdir" in cmd:
            return 0, "", ""
        if "Extra Channels" in cmd:
            return (0, "", "") if self.channels else (1, "", "")
        for program, picked in mount_variants.CORE.items():
            if f"/{program} " in cmd:
                if program == self.fail_program:
                    return 1, "TAP version 13\n1..1\nnot ok 1 x\n", ""
                return 0, _ktap(len(picked)), ""
        raise AssertionError(f"unexpected command {cmd}")


def test_variants_cover_the_dialects_signing_and_sealing():
    opts = {name: o for name, (_, o) in mount_variants.VARIANTS.items()}
    assert opts["vers2.1"] == "vers=2.1,nosharesock"
    assert opts["vers3.0.2"] == "vers=3.0.2,nosharesock"
    assert "sign" in opts["sign"] and "seal" in opts["seal"]
    assert mount_variants.VARIANTS["seal"][0] == "share-sealed"


def _unmounted(cmd, name):
    return cmd.startswith(f"umount /mnt/variant-{name} ")


def test_a_variant_runs_each_program_once_on_its_own_mount(monkeypatch):
    guest = FakeGuest()
    monkeypatch.setattr(mount_variants.vm, "guest_exec", guest)
    ok, text, why, counts = mount_variants.run_variant("run", "vers3.0")
    assert ok and counts == (1, 0, 0), why
    assert "//server/share /mnt/variant-vers3.0 -o " \
        "vers=3.0,nosharesock,remoteinotify," in guest.cmds[0]
    runs = [c for c in guest.cmds if "TB_TEST_ID=mounts.vers3.0" in c]
    assert len(runs) == len(mount_variants.CORE)
    assert all("TB_SHARE_MNT=/mnt/variant-vers3.0 " in c for c in runs)
    assert runs[0].count(" -r ") == len(mount_variants.CORE["dnotify_cifs"])
    assert _unmounted(guest.cmds[-1], "vers3.0")
    assert not any("/mnt/share" in c for c in guest.cmds)


def test_variants_but_multichannel_may_run_side_by_side():
    assert all(selection.side_by_side(f"mounts.{name}")
               for name in mount_variants.VARIANTS if name != "multichannel")
    # its reconnect drops every connection of the client
    assert not selection.side_by_side("mounts.multichannel")


def test_a_failed_mount_fails_the_case_and_still_unmounts(monkeypatch):
    guest = FakeGuest(fail_mount_of="share-sealed")
    monkeypatch.setattr(mount_variants.vm, "guest_exec", guest)
    ok, text, why, counts = mount_variants.run_variant("run", "seal")
    assert not ok and counts == (0, 1, 0)
    assert "Operation not supported" in why
    assert not any("TB_TEST_ID" in c for c in guest.cmds)
    assert _unmounted(guest.cmds[-1], "seal")


def test_a_failed_case_names_its_program(monkeypatch):
    guest = FakeGuest(fail_program="inotify_cifs")
    monkeypatch.setattr(mount_variants.vm, "guest_exec", guest)
    ok, text, why, counts = mount_variants.run_variant("run", "sign")
    assert not ok and why.startswith("inotify_cifs:")
    n = len(mount_variants.CORE["dnotify_cifs"])
    assert f"dnotify_cifs: {n} case(s) passed" in text


def test_hard_mount_faults_mount_hard():
    for name in ("hard_mount_watcher_sigkilled",
                 "umount_force_server_stopped"):
        assert faults.FAULTS[name][2].endswith(",hard")
    assert not any(opts.endswith(",hard") for name, (_, _, opts)
                   in faults.FAULTS.items() if "hard" not in name
                   and "server_stopped" not in name)


def test_multichannel_waits_for_the_second_channel(monkeypatch):
    guest = FakeGuest()
    monkeypatch.setattr(mount_variants.vm, "guest_exec", guest)
    ok, text, why, counts = mount_variants.run_variant("run", "multichannel")
    assert ok, why
    assert "multichannel,max_channels=2" in guest.cmds[0]
    assert "Extra Channels: 1" in guest.cmds[1]
    assert "1 extra channel(s)" in text


def test_multichannel_without_a_second_channel_fails_and_unmounts(
        monkeypatch):
    guest = FakeGuest(channels=False)
    monkeypatch.setattr(mount_variants.vm, "guest_exec", guest)
    ok, text, why, counts = mount_variants.run_variant("run", "multichannel")
    assert not ok and "no session with 1 extra channel" in why
    assert not any("TB_TEST_ID" in c for c in guest.cmds)
    assert _unmounted(guest.cmds[-1], "multichannel")
