"""`orchestrate.py test`: run.py puts it together; selection.py knows the
test ids, -k and which cases may run side by side; scheduler.py runs them
in order, up to --jobs at once; the host-driven cases are faults.py,
mount_variants.py and smbtorture.py; kernel_checks.py runs KUnit,
kmemleak and the console scan (splats.py) after them; ktap.py and
junit.py read and write the results. Imports testbed.common, capture,
kernel and machine."""
