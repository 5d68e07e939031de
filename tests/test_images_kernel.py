from testbed.common import host_packages
from testbed.kernel import build as kernel_build
from testbed.machine import images

ONELINE = "deb http://mirror.example/debian bookworm main\n" \
          "deb http://mirror.example/debian-security bookworm-security main\n"
DEB822 = """\
Types: deb
URIs: http://sec.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://arch.example/debian
Suites: bookworm bookworm-updates
Components: main
"""


def test_mirror_from_sources_one_line_and_deb822():
    assert images.mirror_from_sources([ONELINE]) == "http://mirror.example/debian"
    assert images.mirror_from_sources([DEB822]) == "http://arch.example/debian"
    assert images.mirror_from_sources(["# nothing\n"]) is None


def test_read_list(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("# comment\nsamba  # the server\n\nnfs-kernel-server\n")
    assert images.read_list(f) == ["samba", "nfs-kernel-server"]


def test_apt_command_and_missing():
    assert host_packages.apt_command(["tshark", "bc"]) == \
        "apt-get install -y --no-install-recommends bc tshark"
    reqs = [("pkg-a", "/nonexistent/file"), ("pkg-b", "cmd:sh")]
    assert host_packages.missing_packages(reqs) == ["pkg-a"]


PATCH = """\
Subject: [PATCH] x

diff --git a/fs/a.c b/fs/a.c
--- a/fs/a.c
+++ b/fs/a.c
@@ -10,3 +10,4 @@ void f(void)
 a
+b
 c
@@ -40,2 +41,3 @@ void g(void)
 x
+y
"""


def test_rejected_hunk_is_found(tmp_path):
    p = tmp_path / "0001-x.patch"
    p.write_text(PATCH)
    out = "error: patch failed: fs/a.c:40\nerror: fs/a.c: patch does not apply"
    hunk = kernel_build._rejected_hunk(p, out)
    assert hunk.startswith("@@ -40,2") and "+y" in hunk and "+b" not in hunk
    assert kernel_build._rejected_hunk(p, "something else") == ""


def test_series_excludes_cover_letter(tmp_path):
    (tmp_path / "kernel").mkdir()
    for n in ("0000-cover-letter.patch", "0002-b.patch", "0001-a.patch"):
        (tmp_path / "kernel" / n).write_text("")
    assert [p.name for p in kernel_build.series(tmp_path)] == \
        ["0001-a.patch", "0002-b.patch"]


def test_missing_package_without_root_prints_apt_line(monkeypatch):
    import pytest
    from testbed.common.errors import UsageError
    monkeypatch.setattr(host_packages, "missing_packages", lambda *a: ["tshark"])
    monkeypatch.setattr(host_packages.os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError) as e:
        host_packages.ensure_host_packages()
    assert e.value.exit_code == 2
    assert "apt-get install -y --no-install-recommends tshark" in str(e.value)


def test_disk_full_in_log_is_a_clear_error(tmp_path):
    import pytest
    from testbed.common.errors import TestbedError
    log = tmp_path / "images.log"
    log.write_text("tar: ./usr/lib/x: Cannot write: No space left on device\n")
    with pytest.raises(TestbedError, match="disk full"):
        images._disk_full_check(log)
    log.write_text("all fine\n")
    images._disk_full_check(log)


def test_make_command_uses_ccache_in_depend_mode(monkeypatch, tmp_path):
    monkeypatch.setattr(kernel_build.shutil, "which",
                        lambda name: "/usr/bin/ccache")
    argv, env = kernel_build.make_command(tmp_path, tmp_path / "t", tmp_path / "b",
                                    jobs=2)
    assert "CC=ccache gcc" in argv and "-j2" in argv
    assert env["CCACHE_DEPEND"] == "1"
    assert env["CCACHE_DIR"] == str(tmp_path / "ccache")
    monkeypatch.setattr(kernel_build.shutil, "which", lambda name: None)
    argv, env = kernel_build.make_command(tmp_path, tmp_path / "t", tmp_path / "b")
    assert "CC=gcc" in argv and "CCACHE_DEPEND" not in env


def test_boot_payload_is_assembled_again_without_ccache(monkeypatch, tmp_path):
    # piggy.S pulls the compressed kernel in with .incbin, which ccache's
    # depend mode does not see: a stale piggy.o booted the previous kernel
    piggy = tmp_path / "arch/x86/boot/compressed/piggy.o"
    piggy.parent.mkdir(parents=True)
    piggy.write_bytes(b"stale")
    calls = []

    def fake_run(cmd, log, what, env=None):
        calls.append((piggy.exists(), env))

    monkeypatch.setattr(kernel_build, "run_logged", fake_run)
    kernel_build._rebuild_boot_payload(tmp_path, ["make", "bzImage"],
                                       tmp_path / "log",
                                       {"CCACHE_DEPEND": "1"})
    assert calls == [(False, {"CCACHE_DEPEND": "1", "CCACHE_DISABLE": "1"})]
