"""Small, failure-proof readers for /proc, /sys and /etc files.

Every probe reads system files through these helpers with a ``root`` folder in
front, so tests can point a probe at a fake tree of real files (a container's
/proc, an old kernel's cgroup v1 layout) instead of patching functions.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Dict, Optional, Union

    Root = Union["os.PathLike[str]", str]

# A folder: a pathlib.Path in the probes and tests, a str in the healthcheck (which does not
# import pathlib: a tenth of its own cost).


def read_text(root: Root, path: str, limit: int = 1 << 20) -> Optional[str]:
    """Contents of ``root/path``, or None when it is missing or unreadable."""
    try:
        with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def read_first_line(root: Root, path: str) -> Optional[str]:
    text = read_text(root, path, limit=4096)
    if text is None:
        return None
    line = text.strip().splitlines()
    return line[0].strip() if line else ""


def exists(root: Root, path: str) -> bool:
    return os.path.lexists(os.path.join(root, path.lstrip("/")))


def parse_key_values(text: str) -> Dict[str, str]:
    """Parse os-release style ``KEY="value"`` lines."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out
