"""What every part of the testbed uses: errors, progress lines, host
commands with logs, the cache directory and its content keys, the host's
packages, the private segment's addresses. Imports nothing else of
testbed."""
