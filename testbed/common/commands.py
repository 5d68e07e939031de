"""Host commands run for the testbed: a long one with its output in a log
file (a clear error with the log's tail when it fails), a short one whose
output is wanted."""

import os
import subprocess

from .errors import TestbedError
from .progress import debug, fmt_secs, log_tail


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
            proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env,
                                  stdout=out, stderr=subprocess.STDOUT,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"{what}: timed out after {fmt_secs(timeout)}"
                               f" (log: {log})", log_tail(log)) from None
        except FileNotFoundError as e:
            raise TestbedError(f"{what}: {e.filename} not found") from None
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
