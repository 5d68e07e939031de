"""Long steps with progress: phase name, elapsed time, a log file.

A step's full output goes to its log file; the terminal sees one line per
phase and a ticking elapsed time, and the log's tail when the step fails.
"""

import sys
import threading
import time
from collections import deque

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
