"""The kernel under test: Debian's linux-source-6.12 unpacked into a git
tree with kernel/'s series applied, its configuration and build
(build.py), and `kernel check`: each patch applied, built and run through
checkpatch --strict in turn (per_patch.py). Imports testbed.common only."""
