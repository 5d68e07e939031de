"""The two-VM CIFS change-notification testbed behind orchestrate.py.

Its packages, each importing only those listed before it (tests/test_layout.py
holds them to it):

- common: errors, progress lines, host commands, the cache directory and
  its keys, the host's packages, the segment's addresses.
- capture: reading the client's pcap (timeline, notify view, slices,
  sequence diagrams): `orchestrate.py pcap`.
- kernel: the kernel tree, its build (`kernel build|path|export|reset`)
  and the per-patch check of the series (`kernel check`).
- machine: the images, the QEMU guests and their agents, the private
  network, snapshots, the programs started on the server, and `up`,
  `down`, `status`, `shell`, `exec`.
- suite: `test`: which cases, in which order and how many side by side,
  the host-driven cases (faults, mount variants, smbtorture), the checks
  after them (KUnit, kmemleak, splats), KTAP and JUnit.
- bench: `bench`: the measures, their guest steps, statistics, report and
  plots.
"""

# The order of the packages: each may import those before it only.
LAYERS = ("common", "capture", "kernel", "machine", "suite", "bench")
