"""The pure parts of resume-instead-of-boot (testbed/machine/snapshot.py)."""
import os

from testbed.machine import snapshot
from testbed.machine import vm


def _inputs(tmp_path):
    repo = tmp_path / "repo"
    (repo / "samba-server").mkdir(parents=True)
    (repo / "samba-server/smb.conf").write_text("[global]\n")
    kern = tmp_path / "kernels/k1"
    kern.mkdir(parents=True)
    (kern / "bzImage").write_bytes(b"kernel")
    return repo, kern, tmp_path / "images/i1"


def test_key_follows_every_input(tmp_path):
    repo, kern, images = _inputs(tmp_path)
    key = snapshot.snapshot_key(repo, kern, images, "tcg")
    assert key == snapshot.snapshot_key(repo, kern, images, "tcg")
    assert key != snapshot.snapshot_key(repo, kern, images, "kvm")
    assert key != snapshot.snapshot_key(repo, kern, tmp_path / "images/i2",
                                        "tcg")
    (repo / "samba-server/smb.conf").write_text("[global]\n\tx = y\n")
    changed_conf = snapshot.snapshot_key(repo, kern, images, "tcg")
    assert changed_conf != key
    (kern / "bzImage").write_bytes(b"kernel, rebuilt")
    os.utime(kern / "bzImage", ns=(1, 1))
    assert snapshot.snapshot_key(repo, kern, images, "tcg") != changed_conf


def test_find_wants_both_guests_whole(tmp_path):
    d = snapshot.root(tmp_path) / "k"
    d.mkdir(parents=True)
    for role in vm.ROLES:
        (d / f"{role}.state").write_bytes(b"s")
    assert snapshot.find(tmp_path, "k") is None
    for role in vm.ROLES:
        (d / f"{role}.qcow2").write_bytes(b"q")
    assert snapshot.find(tmp_path, "k") == d
    assert snapshot.find(tmp_path, "other") is None


def test_forget_one_or_all(tmp_path):
    top = snapshot.root(tmp_path)
    for name in ("a", "b", ".tmp-a"):
        (top / name).mkdir(parents=True)
    assert snapshot.forget(tmp_path, "a") == 1
    assert sorted(p.name for p in top.iterdir()) == ["b"]
    assert snapshot.forget(tmp_path) == 1
    assert list(top.iterdir()) == []
    assert snapshot.forget(tmp_path / "nothing") == 0


def test_prepare_run_keeps_the_boot_console(tmp_path):
    snap = tmp_path / "snap"
    snap.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    for role in vm.ROLES:
        (snap / f"{role}.qcow2").write_bytes(b"disk")
        (snap / f"{role}.state").write_bytes(b"state")
        (snap / f"{role}-console.log").write_text(f"{role} booted\nKTAP\n")
    incoming = snapshot.prepare_run(snap, run)
    for role in vm.ROLES:
        p = vm.paths(run, role)
        assert p["overlay"].read_bytes() == b"disk"
        text = p["console"].read_text()
        assert text.startswith(f"{role} booted\nKTAP\n")
        assert "restored from snapshot snap" in text
        assert incoming[role] == f"exec:cat {snap / (role + '.state')}"


def test_restore_argv_loads_state_and_appends_console(tmp_path):
    boot = vm.qemu_argv("client", tmp_path, tmp_path, "tcg")
    resume = vm.qemu_argv("client", tmp_path, tmp_path, "tcg",
                          incoming="exec:cat /x")
    assert "-incoming" not in boot
    assert resume[resume.index("-incoming") + 1] == "exec:cat /x"
    assert any("id=con" in a and a.endswith("append=on") for a in boot)
