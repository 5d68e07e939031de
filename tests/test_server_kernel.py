"""The server boots the Debian kernel its image carries, the client the
built kernel: the QEMU arguments of each, and taking the kernel out of
the server's tree when its image is built."""

import pytest

from testbed.machine import images
from testbed.machine import vm
from testbed.common.errors import TestbedError


def test_built_kernel_has_no_initrd(tmp_path):
    argv = vm.qemu_argv("client", tmp_path, tmp_path, "tcg")
    assert argv[argv.index("-kernel") + 1] == str(tmp_path / "bzImage")
    assert "-initrd" not in argv


def test_debian_kernel_boots_with_its_initrd(tmp_path):
    boot = images.server_boot(tmp_path)
    argv = vm.qemu_argv("server", tmp_path, boot, "tcg")
    assert argv[argv.index("-kernel") + 1] == str(tmp_path / "server-vmlinuz")
    assert argv[argv.index("-initrd") + 1] == str(tmp_path /
                                                  "server-initrd.img")


def _tree(tmp_path, releases, initrd=True):
    root = tmp_path / "root"
    (root / "boot").mkdir(parents=True)
    for r in releases:
        (root / "boot" / f"vmlinuz-{r}").write_text(f"kernel {r}")
        if initrd:
            (root / "boot" / f"initrd.img-{r}").write_text(f"initrd {r}")
    out = tmp_path / "out"
    out.mkdir()
    return root, out


def test_take_kernel_copies_kernel_initrd_and_release(tmp_path):
    root, out = _tree(tmp_path, ["6.1.0-57-amd64"])
    images._take_kernel(root, out, "log")
    vmlinuz, initrd = images.server_boot(out)
    assert vmlinuz.read_text() == "kernel 6.1.0-57-amd64"
    assert initrd.read_text() == "initrd 6.1.0-57-amd64"
    assert images.server_release(out) == "6.1.0-57-amd64"
    paths = {role: out / f"{role}.ext4" for role in images.ROLES}
    assert not images.complete(paths)
    for p in paths.values():
        p.write_text("")
    assert images.complete(paths)


@pytest.mark.parametrize("releases,initrd", [([], True),
                                             (["6.1.0-1", "6.1.0-2"], True),
                                             (["6.1.0-1"], False)])
def test_take_kernel_wants_one_kernel_and_its_initrd(tmp_path, releases,
                                                      initrd):
    root, out = _tree(tmp_path, releases, initrd)
    with pytest.raises(TestbedError):
        images._take_kernel(root, out, "log")


def test_release_of_older_images_is_unknown(tmp_path):
    assert images.server_release(tmp_path) == "unknown"


def test_server_kernel_does_not_preempt():
    """Samba pairs a disk rename's inotify events only when notifyd cannot
    read between them: the server's Debian kernel boots with preempt=none;
    the client keeps KUnit at boot."""
    server = vm.kernel_cmdline("server").split()
    client = vm.kernel_cmdline("client").split()
    assert "preempt=none" in server and "preempt=none" not in client
    assert "kunit.enable=1" in client


def test_release_without_images_dir_reads_nothing(tmp_path, monkeypatch):
    """bench passes "" for a state without images: that must not read a
    server-release file from the current directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "server-release").write_text("stray\n")
    assert images.server_release("") == "unknown"
