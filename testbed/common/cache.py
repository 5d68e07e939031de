"""Where the testbed keeps what it builds, and the keys that name it.

Everything generated (kernel tree, build directory, kernels, images, runs)
lives under one cache directory outside the checkout, so a clean clone
reuses what an earlier run built from the same inputs.
"""

import hashlib
import os
from pathlib import Path

ENV_CACHE = "TESTBED_CACHE_DIR"
APP = "cifs-notify-testbed"


def cache_root(override=None):
    """The cache directory: --cache-dir, $TESTBED_CACHE_DIR, then XDG."""
    if override:
        return Path(override).expanduser().resolve()
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser().resolve() / APP


def content_key(parts, files=(), length=16):
    """A short, stable hex key over strings and the contents of files.

    `parts` are (name, value) pairs; `files` are (label, path) pairs whose
    label and bytes enter the key, so renaming or editing an input changes
    the key and moving the checkout does not.
    """
    h = hashlib.sha256()
    for name, value in parts:
        h.update(f"{name}={value}\0".encode())
    for label, path in sorted((str(lab), Path(p)) for lab, p in files):
        h.update(f"file:{label}\0".encode())
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:length]


def tree_files(directory, label_prefix=""):
    """(label, path) for every file under a directory, for content_key()."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return [(label_prefix + str(p.relative_to(directory)), p)
            for p in sorted(directory.rglob("*")) if p.is_file()
            and "__pycache__" not in p.parts]
