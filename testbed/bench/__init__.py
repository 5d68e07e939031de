"""`orchestrate.py bench`: run.py chooses the measures; latency.py,
scale.py, io_cost.py and burst.py each measure one thing with the steps
of guest_steps.py; stats.py does the arithmetic, report.py writes the
files and plot.py draws them. Imports testbed.common, capture, kernel and
machine, never suite."""
