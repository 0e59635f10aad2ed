"""Extract every pip command of PyTorch's previous-versions page into a test data file.

Reads ``_get_started/previous-versions.md`` (pytorch/pytorch.github.io, or a verbatim copy)
and prints one JSON row per command: torch version, variant, the platforms the page gives
it for (``OSX`` -> macOS; ``Linux and Windows`` -> both x86_64, "(Linux only)" -> Linux)
and the command as written. tests/data/pytorch_pip_commands.json is its output for torch
1.8 and later, with the source commit of each row.

    python tools/pip_commands_from_page.py previous-versions.md SOURCE > rows.json
"""

from __future__ import annotations

import json
import re
import sys
from typing import Dict, List, Optional

_VERSION = re.compile(r"^### v(\d+\.\d+\.\d+)")
_LABEL = re.compile(r"^#\s*(ROCM|RocM|CUDA|CPU)\s*([\d.]*)", re.IGNORECASE)


def variant_of(label: re.Match) -> str:
    kind, number = label.group(1).lower(), label.group(2)
    if kind == "cpu":
        return "cpu"
    if kind == "cuda":
        return "cu" + number.replace(".", "")
    return "rocm" + number


def rows(text: str, source: str, oldest: str = "1.8.0") -> List[Dict[str, object]]:
    out: List[Dict[str, object]] = []
    version: Optional[str] = None
    wheel = False
    section = ""
    label: Optional[re.Match] = None
    for line in text.splitlines():
        found = _VERSION.match(line)
        if found:
            version, wheel, section, label = found.group(1), False, "", None
            continue
        if line.startswith("#### "):
            wheel = line.strip() == "#### Wheel"
            continue
        if line.startswith("##### "):
            section, label = line[6:].strip(), None
            continue
        if not wheel or version is None:
            continue
        found = _LABEL.match(line)
        if found:
            label = found
            continue
        if not re.match(r"^pip3? install ", line):
            continue
        if section == "OSX":
            platforms, variant = ["macos"], "cpu"
        elif label is None:
            continue  # a bare command outside a labelled block
        else:
            variant = variant_of(label)
            linux_only = "linux only" in label.string.lower() or variant.startswith("rocm")
            platforms = ["linux-x86_64"] if linux_only else ["linux-x86_64", "windows-x86_64"]
        out.append(
            {
                "torch": version,
                "variant": variant,
                "platforms": platforms,
                "command": " ".join(line.split()),
                "source": source,
            }
        )
    keep = [r for r in out if tuple(map(int, str(r["torch"]).split("."))) >= _key(oldest)]
    return keep


def _key(version: str) -> tuple:
    return tuple(int(p) for p in version.split("."))


if __name__ == "__main__":
    path, source = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as fh:
        print(json.dumps(rows(fh.read(), source), indent=1))
