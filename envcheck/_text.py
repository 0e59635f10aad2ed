"""Text helpers every layer may use: messages that must stay on one line, sizes, project names."""

from __future__ import annotations

import re
from typing import Iterable, List, Optional

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEPARATORS = re.compile(r"[-_.]+")


def one_line(text: str) -> str:
    """A message with its control characters escaped: a key or path that holds a newline
    must not split the one-line error."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def size(n: Optional[int]) -> str:
    """Bytes in binary units, as nvidia-smi and free -h print them: 80.0 GiB."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def normalise(name: str) -> str:
    """PEP 503 normalised project name: ``Nvidia_CUDNN.cu12`` -> ``nvidia-cudnn-cu12`` (what
    packaging.utils.canonicalize_name does, without importing its platform tags and logging:
    10 ms of a static check)."""
    return _SEPARATORS.sub("-", name).lower()


def int_ranges(numbers: Iterable[int], sep: str = ",") -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8": the kernel's cpulist notation, for CPUs and ranks alike."""
    out: List[str] = []
    for n in sorted(set(numbers)):
        if out and int(out[-1].split("-")[-1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return sep.join(out)
