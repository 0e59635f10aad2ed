"""Machine names written the way Slurm writes host lists: ``gpu-node-[017-019,033]``.

A fleet of a thousand machines cannot be read one name per line; runs of numbered names with
the same prefix, suffix and digit width fold into one bracket, in the order Slurm's
``scontrol show hostnames`` would unfold them again.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Tuple

_NUMBERED = re.compile(r"^(.*?)(\d+)(\D*)$")


def fold(names: Iterable[str]) -> str:
    """The names as one Slurm-style host list: numbered names sharing a prefix and suffix fold
    into ranges (zero-padded to their width, as written); other names stand as they are.
    Sorted, each name once."""
    by_stem: Dict[Tuple[str, str], List[str]] = {}
    parts: List[str] = []
    for name in sorted(set(names)):
        match = _NUMBERED.match(name)
        if match is None:
            parts.append(name)
            continue
        prefix, digits, suffix = match.groups()
        by_stem.setdefault((prefix, suffix), []).append(digits)
    for (prefix, suffix), all_digits in by_stem.items():
        for width, numbers in _by_width(all_digits).items():
            if len(numbers) == 1:
                parts.append(f"{prefix}{numbers[0]:0{width}d}{suffix}")
            else:
                parts.append(f"{prefix}[{_ranges(sorted(numbers), width)}]{suffix}")
    return ",".join(sorted(parts, key=_natural))


def _by_width(all_digits: List[str]) -> Dict[int, List[int]]:
    """The numbers under the width they are padded to: one group when the padding agrees
    (node-099 and node-100 are one run), else a group per written length."""
    padded = {len(d) for d in all_digits if d.startswith("0") and len(d) > 1}
    width = next(iter(padded)) if len(padded) == 1 else 0
    if len(padded) > 1 or any(len(d) < width for d in all_digits):
        groups: Dict[int, List[int]] = {}
        for d in all_digits:
            groups.setdefault(len(d), []).append(int(d))
        return groups
    return {width: [int(d) for d in all_digits]}


def _ranges(numbers: List[int], width: int) -> str:
    """017,018,019,033 -> 017-019,033"""
    runs: List[List[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ",".join(
        f"{r[0]:0{width}d}" if len(r) == 1 else f"{r[0]:0{width}d}-{r[-1]:0{width}d}" for r in runs
    )


def _natural(name: str) -> Tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def count(names: Iterable[str]) -> str:
    """``3 machines: gpu-node-[017-019]``, or the one name."""
    unique = sorted(set(names))
    return unique[0] if len(unique) == 1 else f"{len(unique)} machines: {fold(unique)}"


__all__ = ["count", "fold"]
