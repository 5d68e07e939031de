"""Running the suite's entries in order, some of them side by side.

Most of a case's time in the emulated guests is waiting: for a signal
that must come, or for the seconds of silence that show one does not.
Cases that each watch a directory made for them, and change nothing
another case watches or counts, can wait together. An entry is
(name, fn, together): entries with `together` run up to `width` at a
time, each on a thread of its own; any other entry runs alone, once all
before it have ended and before any after it starts. The results come
back in the entries' order, each as soon as it and all before it have
ended, so the KTAP document has the order it has with `width` 1.

The threads are daemons: an interrupted suite leaves without waiting for
the cases still running in the guest (each is bounded there by timeout(1),
and `down` stops the guests)."""

import queue
import threading
from collections import deque


class _Job:
    """One entry running on a thread; `finished` hears when it ends."""

    def __init__(self, name, fn, call, finished):
        self.name = name
        self.result = self.error = None
        self.ended = False
        self._finished = finished
        threading.Thread(target=self._run, args=(fn, call), name=name,
                         daemon=True).start()

    def _run(self, fn, call):
        try:
            self.result = call(self.name, fn)
        except BaseException as e:      # re-raised in the suite's thread
            self.error = e
        finally:
            self.ended = True
            self._finished.put(self)


def _ended_in_order(jobs):
    """(name, result) of the jobs at the head of `jobs` that have ended."""
    while jobs and jobs[0].ended:
        job = jobs.popleft()
        if job.error is not None:
            raise job.error
        yield job.name, job.result


def in_order(entries, width, call):
    """Yield (name, call(name, fn)) for each (name, fn, together) of
    `entries`, in their order, running `together` entries up to `width`
    at a time."""
    finished = queue.Queue()
    jobs = deque()          # started, not yet yielded, in entry order
    running = 0
    for name, fn, together in entries:
        while running >= (width if together else 1):
            finished.get()
            running -= 1
            yield from _ended_in_order(jobs)
        if not together or width <= 1:
            yield from _ended_in_order(jobs)
            yield name, call(name, fn)
            continue
        jobs.append(_Job(name, fn, call, finished))
        running += 1
        yield from _ended_in_order(jobs)
    while running:
        finished.get()
        running -= 1
    yield from _ended_in_order(jobs)
