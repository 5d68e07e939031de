"""What the suite starts early: smbtorture beside the client's cases, and
the two kmemleak scans together (no guest needed: the guest calls are
replaced)."""
from testbed.suite import kernel_checks
from testbed.suite import run as suite_run
from testbed.suite import smbtorture


def test_smbtorture_starts_beside_other_cases(monkeypatch):
    monkeypatch.setattr(suite_run, "BACKGROUND",
                        {"smbtorture": (lambda run: ("pid", run), None)})
    chosen = {"dnotify_cifs": ["watched.a"], "smbtorture": ["smb2.notify"]}
    assert suite_run._start_background("run", chosen, 1) == \
        {"smbtorture": ("pid", "run")}


def test_smbtorture_alone_or_repeated_runs_in_its_turn(monkeypatch):
    monkeypatch.setattr(suite_run, "BACKGROUND",
                        {"smbtorture": (lambda run: 1 / 0, None)})
    assert suite_run._start_background("run", {"smbtorture": ["x"]}, 1) == {}
    both = {"dnotify_cifs": ["a"], "smbtorture": ["x"]}
    assert suite_run._start_background("run", both, 2) == {}


def test_smbtorture_reports_its_own_running_time(monkeypatch):
    out = "test: dir\nsuccess: dir\nsmbtorture-seconds: 212\n"
    monkeypatch.setattr(smbtorture.vm, "guest_wait",
                        lambda run, role, pid, deadline: (0, out, ""))
    ok, text, _, _ = smbtorture.finish("run", (7, 0.0))
    assert not ok                   # 22 of the 23 cases never ran
    assert "# smbtorture ran 212s" in text


def test_first_kmemleak_check_starts_both_scans(monkeypatch):
    started, waited = [], []
    monkeypatch.setattr(kernel_checks.vm, "guest_spawn",
                        lambda run, role, cmd, timeout: started.append(role)
                        or len(started))
    monkeypatch.setattr(kernel_checks.vm, "guest_wait",
                        lambda run, role, pid, deadline: waited.append(
                            (role, pid)) or (0, "", ""))
    entries = kernel_checks.entries("run", "kernel", ["kmemleak_server",
                                               "kmemleak_client"])
    assert [name for name, _ in entries] == ["kmemleak_server",
                                             "kmemleak_client"]
    assert entries[0][1]()[0] and started == ["server", "client"]
    assert entries[1][1]()[0] and started == ["server", "client"]
    assert waited == [("server", 1), ("client", 2)]
