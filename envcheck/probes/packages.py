"""Find installed distributions by listing metadata folders on sys.path.

``importlib.metadata`` would work, but it builds a Distribution for every
package in every path entry; envcheck needs a dozen names and must stay fast in
environments with thousands of packages. One ``scandir`` per sys.path entry,
name and version from the folder name (the wheel spec puts them there), and one
small INSTALLER read for the packages we keep.
"""

from __future__ import annotations

import json
import os
import re
from typing import Callable, Iterable, List, Optional, Tuple
from urllib.parse import unquote

from .._record import record
from .._text import normalise as normalise  # diagnose.collect_env reads it here
from ..facts import CondaPackageFacts, PackageFacts


@record
class FoundDist:
    name: str
    version: str
    location: str  # the sys.path entry
    metadata_dir: str

    def facts(self) -> PackageFacts:
        return PackageFacts(
            name=self.name,
            version=self.version,
            location=self.location,
            installer=read_installer(self.metadata_dir),
        )


def parse_metadata_dir(entry: str) -> Optional[Tuple[str, str]]:
    """``torch-2.8.0+cu128.dist-info`` -> ("torch", "2.8.0+cu128"); None for others."""
    if entry.endswith(".dist-info"):
        stem = entry[: -len(".dist-info")]
        name, sep, version = stem.rpartition("-")
    elif entry.endswith(".egg-info"):
        stem = entry[: -len(".egg-info")]
        parts = stem.split("-")  # name-version[-pyX.Y]
        if len(parts) < 2:
            return None
        name, sep, version = parts[0], "-", parts[1]
    else:
        return None
    if not sep or not name or not version:
        return None
    return normalise(name), version


def scan(sys_path: Iterable[str], wanted: Callable[[str], bool]) -> List[FoundDist]:
    """Every distribution whose normalised name ``wanted`` accepts, in sys.path order."""
    found: List[FoundDist] = []
    seen_dirs = set()
    for entry in sys_path:
        real = os.path.realpath(entry)
        if real in seen_dirs or not os.path.isdir(real):
            continue
        seen_dirs.add(real)
        try:
            names = sorted(os.listdir(real))
        except OSError:
            continue
        for item in names:
            parsed = parse_metadata_dir(item)
            if parsed and wanted(parsed[0]):
                found.append(FoundDist(parsed[0], parsed[1], entry, os.path.join(real, item)))
    return found


# A Requires-Dist line on torch itself (not torchvision, torch-scatter or torch_geometric),
# or on NVIDIA's CUDA runtime or cuDNN wheel (the CUDA and cuDNN a package was built for).
_WATCHED_REQ = re.compile(
    r"^Requires-Dist:[ \t]*((?:torch|nvidia-(?:cuda-runtime|cudnn)(?:-cu[0-9]+)?)(?![\w.-])[^\r\n]*)",
    re.I | re.M,
)


def metadata_headers(metadata_dir: str, limit: int = 256 * 1024) -> str:
    """The headers of a dist-info's METADATA (up to the first blank line: the long
    description after it can be megabytes), read in small pieces; "" when unreadable."""
    try:
        with open(os.path.join(metadata_dir, "METADATA"), encoding="utf-8", errors="replace") as fh:
            text = ""
            while len(text) < limit:
                piece = fh.read(8192)
                text += piece
                end = text.find("\n\n")
                if end >= 0 or not piece:
                    return text if end < 0 else text[:end]
            return text
    except OSError:
        return ""


def watched_requirements(metadata_dir: str) -> List[str]:
    """A distribution's Requires-Dist lines on torch and on NVIDIA's CUDA runtime and cuDNN
    wheels, as written (version and markers): ``torch==2.4.1``, ``torch>=2.0; extra ==
    "gpu"``, ``nvidia-cudnn-cu12~=9.0; extra == "cudnn"``."""
    return [m.group(1).strip() for m in _WATCHED_REQ.finditer(metadata_headers(metadata_dir))]


def recorded_wheel(metadata_dir: str, limit: int = 64 * 1024) -> Optional[str]:
    """The wheel file name an install from a URL or file recorded (PEP 610 ``direct_url.json``):
    ``flash_attn-2.8.1+cu12torch2.7cxx11abiTRUE-cp311-cp311-linux_x86_64.whl``. Some projects
    put the torch they were built for only there: the wheel's name carries a label its
    metadata does not. None when nothing, or no wheel, was recorded."""
    try:
        with open(os.path.join(metadata_dir, "direct_url.json"), encoding="utf-8") as fh:
            data = json.loads(fh.read(limit))
    except (OSError, ValueError):  # absent, unreadable, not JSON (or cut at the limit)
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str):
        return None
    name = unquote(url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1])
    return name if name.endswith(".whl") and len(name) < 512 else None


def read_installer(metadata_dir: str) -> Optional[str]:
    try:
        with open(os.path.join(metadata_dir, "INSTALLER"), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def scan_conda_meta(prefix: str, wanted: Callable[[str], bool]) -> List[CondaPackageFacts]:
    """Conda packages of interest, from ``conda-meta/NAME-VERSION-BUILD.json`` file names.

    The JSON files themselves list every file of a package (megabytes for
    pytorch); the name carries all we need, so they are not opened.
    """
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return []
    out = []
    for item in names:
        if not item.endswith(".json"):
            continue
        parts = item[: -len(".json")].rsplit("-", 2)
        if len(parts) != 3:
            continue
        name, version, build = parts
        if wanted(name):
            out.append(CondaPackageFacts(name=name, version=version, build=build))
    return out
