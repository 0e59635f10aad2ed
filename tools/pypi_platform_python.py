"""Which CPython versions have a torch wheel on the default index, per platform and release.

Asks pip only for the index's file list (``pip index versions``: no download), once per
platform and Python version, and prints, per torch minor, the Python range of each
platform (``python_by_platform`` in compat_tables/torch_releases.json) and the patch
versions a platform lacks (``versions_by_platform``). Review the diff before pasting.

    python tools/pypi_platform_python.py > /tmp/ranges.json        # queries the index
    python tools/pypi_platform_python.py --transcript FILE          # also keeps the answers

Two traps this avoids: ``--python-version 3.6`` means 3.6.0, which torch 1.8's
``Requires-Python >=3.6.2`` refuses (so the micro version is given as .99), and Python
before 3.8 has the ``m`` ABI (``cp37m``). A manylinux platform tag is not widened to newer
glibc tags by pip, so each old and new Linux tag is given.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

PYTHONS = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
PLATFORM_TAGS = {
    "linux-x86_64": ["manylinux1_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64"],
    "linux-aarch64": ["manylinux2014_aarch64", "manylinux_2_28_aarch64"],
    "windows-x86_64": ["win_amd64"],
    "windows-arm64": ["win_arm64"],
    "macos-arm64": ["macosx_15_0_arm64"],
    "macos-x86_64": ["macosx_10_15_x86_64"],
}
TABLE = Path(__file__).resolve().parent.parent / "compat_tables" / "torch_releases.json"


def available(platform: str, python: str) -> List[str]:
    digits = python.replace(".", "")
    abi = f"cp{digits}m" if python in ("3.6", "3.7") else f"cp{digits}"
    cmd = [sys.executable, "-m", "pip", "--isolated", "index", "versions", "torch"]
    cmd += ["--python-version", f"{python}.99", "--abi", abi, "--only-binary=:all:"]
    for tag in PLATFORM_TAGS[platform]:
        cmd += ["--platform", tag]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    found = re.search(r"Available versions: (.*)", out)
    return [v.strip() for v in found.group(1).split(",")] if found else []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcript", type=Path)
    args = parser.parse_args()
    answers: Dict[str, Dict[str, List[str]]] = {
        p: {py: available(p, py) for py in PYTHONS} for p in PLATFORM_TAGS
    }
    if args.transcript:
        args.transcript.write_text(json.dumps(answers, indent=1))
    releases = json.loads(TABLE.read_text())["releases"]
    out: Dict[str, Dict[str, object]] = {}
    for release in releases:
        minor, versions = release["minor"], release["versions"]
        ranges: Dict[str, object] = {}
        lacking: Dict[str, List[str]] = {}
        for platform, by_python in answers.items():
            pythons = [py for py in PYTHONS if any(v in by_python[py] for v in versions)]
            if not pythons:
                continue
            ranges[platform] = {"min": pythons[0], "max": pythons[-1]}
            have = sorted({v for py in pythons for v in by_python[py] if v in versions})
            if have != sorted(versions):
                lacking[platform] = have
        out[minor] = {"python_by_platform": ranges, "versions_by_platform": lacking}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
