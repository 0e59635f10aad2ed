"""Extract the pip commands of PyTorch's get-started selector into a test data file.

Reads ``published_versions.json`` (pytorch/pytorch.github.io, or a verbatim copy): the
command the "Start Locally" selector shows for each release, OS (linux, windows, macos)
and compute platform (``accnone`` = CPU, ``cuda.x``/``cuda.y``/``cuda.z``, ``rocm5.x``).
Prints one JSON row per (release, OS, selection) for releases from ``--oldest`` on:

- ``variant``: read from the data itself, never from envcheck's tables: the index URL of
  the command (``/whl/cu126``), or, for a command without one (the build on the default
  index, such as Linux ``cuda.y``), the ``libtorch`` download of the same release, OS and
  selection (``/libtorch/cu130/...``). macOS has only the default (CPU) package.
- ``platforms``: linux -> linux-x86_64 (the page does not tell aarch64 apart), windows ->
  windows-x86_64, macos -> macos-arm64 (the only macOS wheels from 2.3 on; keep
  ``--oldest`` at 2.3 or later).
- ``command``: as written (unpinned: the selector always shows the newest release), or
  null where the page says the selection has no build (its ``note``: ROCm on Windows).
- Where one selection gives a command per CPU ("For Linux x86 use: ... For Linux Aarch64:
  ...", 2.9.1 and 2.10.0 CUDA 12.8), one row each, linux-x86_64 and linux-aarch64.
- ``fallback``: true for macOS CUDA/ROCm selections, which show the default CPU package
  with "CUDA is not available on MacOS" (``"default": true`` in the data).

    python tools/pip_commands_from_getstarted.py published_versions.json SOURCE \
        [--oldest 2.4.0] [--source-for VERSION=OTHER_SOURCE ...]

``--source-for`` names another revision for one release's rows, where that revision's
entries were compared with the file read and found identical (tests/data's 2.4.0 rows:
pytorch/pytorch.github.io@21e77f1d, the newest upstream revision stored, which describes
2.4.0; the file read is PyTorch Korea's verbatim copy, which goes on to 2.13.0).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

PLATFORM = {"linux": "linux-x86_64", "windows": "windows-x86_64", "macos": "macos-arm64"}
_WHL = re.compile(r"download\.pytorch\.org/whl/([a-z0-9.]+)(?:\s|$)")
_LIBTORCH = re.compile(r"download\.pytorch\.org/libtorch/([a-z0-9.]+)/")


def _key(version: str) -> tuple:
    return tuple(int(p) for p in version.split("."))


def _libtorch_variant(entry: Optional[Dict[str, Any]]) -> Optional[str]:
    urls = (entry or {}).get("versions") or {}
    found = {m.group(1) for u in urls.values() for m in [_LIBTORCH.search(u)] if m}
    return found.pop() if len(found) == 1 else None


def variant_of(release: Dict[str, Any], os_name: str, selection: str) -> Optional[str]:
    """The build a selection stands for, from the command's index or the libtorch link."""
    if os_name == "macos":
        return "cpu"
    command = release[os_name]["pip"][selection].get("command") or ""
    found = _WHL.search(command + " ")
    if found:
        return found.group(1)
    own = _libtorch_variant(release[os_name].get("libtorch", {}).get(selection))
    if own is not None:
        return own
    # Windows ROCm has neither a command nor a download: name the Linux build it stands for.
    return _libtorch_variant(release.get("linux", {}).get("libtorch", {}).get(selection))


_CPU = {"linux x86": "linux-x86_64", "linux aarch64": "linux-aarch64"}


def per_cpu(platform: str, command: Optional[str]) -> List[Tuple[str, Optional[str]]]:
    """(platform, command) pairs of one selection: one, or one per "For Linux ..." part."""
    if not command or "<br" not in command:
        return [(platform, " ".join(command.split()) if command else None)]
    out: List[Tuple[str, Optional[str]]] = []
    where = None
    for part in re.split(r"<br\s*/?>", command):
        part = part.strip()
        label = re.match(r"For (Linux \w+)", part, re.IGNORECASE)
        if label:
            where = _CPU[label.group(1).lower()]
        elif part:
            if where is None:
                raise ValueError(f"a command without its platform: {command!r}")
            out.append((where, " ".join(part.split())))
    return out


def rows(data: Dict[str, Any], source: str, oldest: str = "2.4.0") -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for version, release in data["versions"].items():
        if not re.fullmatch(r"\d+\.\d+\.\d+", version) or _key(version) < _key(oldest):
            continue
        for os_name, platform in PLATFORM.items():
            for selection, entry in release.get(os_name, {}).get("pip", {}).items():
                variant = variant_of(release, os_name, selection)
                fallback = bool(entry.get("default"))
                if os_name == "macos" and fallback:
                    variant = _libtorch_variant(release["linux"]["libtorch"].get(selection))
                for where, command in per_cpu(platform, entry.get("command")):
                    found = _WHL.search((command or "") + " ")
                    out.append(
                        {
                            "torch": version,
                            "selection": f"{os_name}/{selection}",
                            "variant": found.group(1) if found and not fallback else variant,
                            "platforms": [where],
                            "command": command,
                            "note": entry.get("note"),
                            "fallback": fallback,
                            "source": source,
                        }
                    )
    out.sort(key=lambda r: (_key(r["torch"]), r["selection"]), reverse=True)
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    oldest = "2.4.0"
    other: Dict[str, str] = {}
    while "--oldest" in args or "--source-for" in args:
        at = args.index("--oldest" if "--oldest" in args else "--source-for")
        if args[at] == "--oldest":
            oldest = args[at + 1]
        else:
            version, _, named = args[at + 1].partition("=")
            other[version] = named
        del args[at : at + 2]
    path, source = args
    with open(path, encoding="utf-8") as fh:
        found = rows(json.load(fh), source, oldest)
    for row in found:
        row["source"] = other.get(row["torch"], row["source"])
    print(json.dumps(found, indent=1))
