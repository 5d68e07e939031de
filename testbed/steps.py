"""Long steps with progress: phase name, elapsed time, a log file.

A step's full output goes to its log file; the terminal sees one line per
phase and a ticking elapsed time, and the log's tail when the step fails.
"""

import os
import subprocess
import sys
import threading
import time
from collections import deque

from .errors import TestbedError

VERBOSE = False
TAIL_LINES = 25


def say(msg):
    """One line of progress on stderr."""
    print(msg, file=sys.stderr, flush=True)


def debug(msg):
    """A line only shown with -v."""
    if VERBOSE:
        say(f"  . {msg}")


def fmt_secs(seconds):
    """'75.2 s' as '1m15s', for humans."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"


def log_tail(path, lines=TAIL_LINES):
    """The last lines of a log file, or '' when it is missing."""
    try:
        with open(path, "rb") as f:
            dq = deque(f, maxlen=lines)
    except OSError:
        return ""
    return b"".join(dq).decode(errors="replace")


class Phase:
    """A named phase: prints its start, ticks while running, prints its end."""

    def __init__(self, name):
        self.name = name
        self.start = None
        self._stop = threading.Event()
        self._ticker = None

    def __enter__(self):
        self.start = time.monotonic()
        say(f"==> {self.name}")
        if sys.stderr.isatty() and not VERBOSE:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def _tick(self):
        while not self._stop.wait(5):
            el = fmt_secs(time.monotonic() - self.start)
            sys.stderr.write(f"\r    ... {self.name}: {el} ")
            sys.stderr.flush()

    def elapsed(self):
        return time.monotonic() - self.start

    def __exit__(self, exc_type, exc, tb):
        self._stop.set()
        if self._ticker:
            self._ticker.join()
            sys.stderr.write("\r\033[K")
        state = "done" if exc_type is None else "FAILED"
        say(f"    {self.name}: {state} in {fmt_secs(self.elapsed())}")
        return False


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
