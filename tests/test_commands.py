"""A long host command ends with everything it started: on its timeout,
and when stop_running() is called from another thread (an interrupted
`up` stops the images' build beside the kernel's)."""
import threading
import time
from pathlib import Path

import pytest

from testbed.common import commands
from testbed.common.errors import TestbedError

# a leader that starts a child and waits for it, as make does its sub-make
SCRIPT = "sleep 60 & echo $! > {pid}; wait"


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(path, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _gone(pid, seconds=5):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_timeout_ends_the_commands_children(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "STOP_GRACE", 2)
    pidfile = tmp_path / "pid"
    with pytest.raises(TestbedError, match="timed out"):
        commands.run_logged(["sh", "-c", SCRIPT.format(pid=pidfile)],
                            tmp_path / "log", "sleeping", timeout=1)
    assert _gone(_wait_for(pidfile))


def test_stop_running_ends_another_threads_command(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "STOP_GRACE", 2)
    pidfile = tmp_path / "pid"
    raised = []

    def run():
        try:
            commands.run_logged(["sh", "-c", SCRIPT.format(pid=pidfile)],
                                tmp_path / "log", "sleeping", timeout=120)
        except TestbedError as e:
            raised.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    child = _wait_for(pidfile)
    commands.stop_running()
    thread.join(timeout=15)
    assert not thread.is_alive() and raised
    assert _gone(child)
    assert not commands._RUNNING


def test_a_failure_still_says_what_and_where(tmp_path):
    with pytest.raises(TestbedError, match=r"listing failed \(exit 2"):
        commands.run_logged(["ls", "/nonexistent"], tmp_path / "log",
                            "listing")
