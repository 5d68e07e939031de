"""Tests in a capture: the frames between a test's begin and end markers.

The client sends 'TBMARK begin <id>' and 'TBMARK end <id>' around each
test, on the capture's own clock, so a test's SMB2 traffic is the frames
between them (both included). A repeated test (--repeat) gets '#2', '#3'
after its id; a test whose end marker never came (it crashed, the guest
died) runs to the next begin, or to the end of the capture. Tests the
suite ran side by side (test --jobs) have slices that overlap: each holds
the frames of the tests beside it too, and a frame counts for the latest
begun of them (`test --jobs 1` gives one test per frame).

write_slices() cuts one small pcap per test (editcap), for wireshark.
"""

import bisect
import fnmatch
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass

from ..common.errors import TestbedError, UsageError
from .read import read_markers

SLICES_DIR = "slices"           # <run>/slices/<test-id>.pcap
LAST_FRAME = 2**32 - 1          # editcap wants a number for "to the end"


@dataclass
class TestSlice:
    """One occurrence of a test in a capture."""
    test_id: str                # 'T', or 'T#2' for its second occurrence
    base_id: str                # 'T'
    first_frame: int            # its begin marker
    last_frame: int | None      # its end marker; None: to the end of the capture
    complete: bool              # closed by its own end marker

    def holds(self, frame):
        """Whether frame lies in this test's slice."""
        return self.first_frame <= frame and (self.last_frame is None
                                              or frame <= self.last_frame)


def occurrence_id(base_id, n):
    """'T' for the first occurrence of a test, 'T#2' for the second..."""
    return base_id if n == 1 else f"{base_id}#{n}"


def _end_of(ordered, i):
    """The end marker closing the begin at ordered[i], or None when the
    same test begins again, or the capture ends, first."""
    for later in ordered[i + 1:]:
        if later.test_id == ordered[i].test_id:
            return later if later.kind == "end" else None
    return None


def build_slices(markers):
    """The test slices of a capture from its markers: each begin to the
    end marker of the same test; without one, to just before the next
    begin of any test (or to the end of the capture)."""
    ordered = sorted(markers, key=lambda m: m.frame)
    slices, seen = [], Counter()
    for i, m in enumerate(ordered):
        if m.kind != "begin":
            continue
        seen[m.test_id] += 1
        end = _end_of(ordered, i)
        if end is None:
            after = next((n for n in ordered[i + 1:] if n.kind == "begin"),
                         None)
            last = after.frame - 1 if after else None
        else:
            last = end.frame
        slices.append(TestSlice(occurrence_id(m.test_id, seen[m.test_id]),
                                m.test_id, m.frame, last, end is not None))
    return slices


def matches(test_slice, pattern):
    """The -k rule of 'test': a shell pattern or a substring of the id."""
    return any(fnmatch.fnmatchcase(name, pattern) or pattern in name
               for name in (test_slice.test_id, test_slice.base_id))


def select_slices(slices, pattern, source="this capture"):
    """The slices -k PATTERN keeps; a one-line usage error listing the
    test ids seen when none matches."""
    if not slices:
        raise UsageError(f"no test markers in {source}: -k needs a run "
                         "whose tests sent markers")
    chosen = [s for s in slices if matches(s, pattern)]
    if not chosen:
        ids = ", ".join(s.test_id for s in slices)
        raise UsageError(f"no test matches '{pattern}' in {source}; "
                         f"tests seen: {ids}")
    return chosen


class SliceIndex:
    """Which test slice a frame lies in, by bisection (a whole run has
    over a hundred tests and a hundred thousand PDUs)."""

    def __init__(self, slices):
        self.slices = sorted(slices, key=lambda s: s.first_frame)
        self.starts = [s.first_frame for s in self.slices]
        # the last frame any slice up to each one reaches: where a search
        # back through overlapping slices can stop
        self.reach, reach = [], -1
        for s in self.slices:
            reach = LAST_FRAME if s.last_frame is None else \
                max(reach, s.last_frame)
            self.reach.append(reach)

    def find(self, frame):
        """The slice holding frame, the latest begun of those that do
        (tests run side by side), or None."""
        i = bisect.bisect_right(self.starts, frame) - 1
        while i >= 0 and self.reach[i] >= frame:
            if self.slices[i].holds(frame):
                return self.slices[i]
            i -= 1
        return None


def keep_frames(events, slices):
    """The events (PDUs, markers) whose frame lies in one of the slices."""
    index = SliceIndex(slices)
    return [e for e in events if index.find(e.frame) is not None]


def slice_file_name(test_id):
    """A file name for a test id: ids are dotted names; anything else
    that a shell or a file system minds becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._#+=-]", "_", test_id) + ".pcap"


def editcap_range(test_slice):
    """editcap's inclusive frame range for a slice."""
    last = LAST_FRAME if test_slice.last_frame is None else test_slice.last_frame
    return f"{test_slice.first_frame}-{last}"


def write_slices(pcap, outdir):
    """Cut <outdir>/<test-id>.pcap for each test in the capture (the suite
    calls this after a run); returns {test id: path}. Slices of an earlier
    call that no longer exist are removed, so outdir matches the capture."""
    if not shutil.which("editcap"):
        raise UsageError("editcap is not installed (apt-get install tshark)")
    markers, _ = read_markers(pcap)
    slices = build_slices(markers)
    outdir.mkdir(parents=True, exist_ok=True)
    written = {}
    for test_slice in slices:
        path = outdir / slice_file_name(test_slice.test_id)
        proc = subprocess.run(["editcap", "-F", "pcap", "-r", str(pcap), str(path),
                               editcap_range(test_slice)],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0 or not path.exists():
            raise TestbedError(f"editcap could not cut {test_slice.test_id} "
                               f"from {pcap}: {proc.stderr.strip()[-200:]}")
        written[test_slice.test_id] = path
    for stale in outdir.glob("*.pcap"):
        if stale not in written.values():
            stale.unlink()
    return written


def existing_slices(outdir):
    """{file stem: path} of the slices already cut for a run."""
    if not outdir.is_dir():
        return {}
    return {p.name.removesuffix(".pcap"): p for p in sorted(outdir.glob("*.pcap"))}
