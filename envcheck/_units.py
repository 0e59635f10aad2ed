"""Byte sizes as people read them (80.0 GiB): one spelling for findings and renderers alike."""

from __future__ import annotations

from typing import Optional


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
