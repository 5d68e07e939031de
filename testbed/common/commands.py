"""Host commands run for the testbed: a long one with its output in a log
file (a clear error with the log's tail when it fails), a short one whose
output is wanted.

A long command runs in a process group of its own, so that when it times
out or is interrupted everything it started ends with it (make's sub-makes
and compilers, debootstrap's chroot), and stop_running() ends the ones that
other threads run (an interrupted `up` builds the images beside the
kernel); a kill(1) of orchestrate.py reaches no child by itself."""

import os
import signal
import subprocess
import threading

from .errors import TestbedError
from .progress import debug, fmt_secs, log_tail


# The long commands running now, in any thread.
_RUNNING = set()
_RUNNING_LOCK = threading.Lock()
STOP_GRACE = 10         # seconds from SIGTERM to SIGKILL


def _stop_group(proc):
    """End a long command and all it started: SIGTERM to its process
    group, SIGKILL to what is left of it after STOP_GRACE seconds (a child
    may outlive the leader)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def stop_running():
    """End every long command running now, whichever thread runs it."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        _stop_group(proc)


def run_logged(cmd, log, what, cwd=None, env=None, timeout=None):
    """Run a command with its output appended to `log`.

    On failure raise TestbedError naming `what`, with the log's tail as
    detail, so the user sees the compiler error (or apt's) without digging.
    """
    debug(" ".join(str(c) for c in cmd))
    full_env = dict(os.environ, **(env or {}))
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(str(c) for c in cmd)}\n".encode())
        out.flush()
        try:
            proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd,
                                    env=full_env, stdout=out,
                                    stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except FileNotFoundError as e:
            raise TestbedError(f"{what}: {e.filename} not found") from None
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            raise TestbedError(f"{what}: timed out after {fmt_secs(timeout)}"
                               f" (log: {log})", log_tail(log)) from None
        except BaseException:
            _stop_group(proc)
            raise
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
    if proc.returncode != 0:
        raise TestbedError(f"{what} failed (exit {proc.returncode}, log: {log})",
                           log_tail(log))
    return proc


def capture(cmd, cwd=None, check=True, timeout=60):
    """Run a short command and return its stdout as text."""
    debug(" ".join(str(c) for c in cmd))
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TestbedError(f"{cmd[0]} timed out after {timeout}s") from None
    if check and proc.returncode != 0:
        raise TestbedError(f"{' '.join(str(c) for c in cmd[:3])} failed: "
                           f"{proc.stderr.strip()[-500:]}")
    return proc.stdout
