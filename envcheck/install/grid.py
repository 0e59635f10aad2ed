"""The compatibility grid: on this machine, which torch release runs in which variant, and
when it does not, why (driver too old, no kernels for a GPU here, no wheel, unknown).

Each cell is the one resolver's answer (``resolve``) for that release and variant, so
the grid never disagrees with ``envcheck install --torch 2.5 --variant cu124``: the grid
only sorts the plan's outcome into a state. A build the tables cannot judge is "unknown",
never "fits".
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.version import Version

from .._record import record
from ..compat import has_amd_gpu, has_nvidia_gpu, platform_of
from ..facts import Facts
from ..tables import Tables
from ..values import Variant
from .plan import Planned
from .reasons import Blocker
from .releases import variants_of
from .resolve import resolve
from .wish import Wish

FITS = "fits"
CPU_ONLY = "cpu_only"  # the CPU build on a machine with a GPU: runs, without the GPU
# The other states are the plan's blockers: no_wheel, driver, kernels, unknown.

LABELS = {
    FITS: "fits",
    CPU_ONLY: "CPU only",
    Blocker.NO_WHEEL.value: "no wheel",
    Blocker.DRIVER.value: "driver too old",
    Blocker.KERNELS.value: "no kernels",
    Blocker.UNKNOWN.value: "unknown",
}


@record(frozen=True)
class Cell:
    state: str  # FITS, CPU_ONLY or a Blocker's value
    why: str  # one line, the resolver's own words
    torch: Optional[str] = None  # the version the plan pins, when one is planned

    @property
    def label(self) -> str:
        return LABELS.get(self.state, self.state)


@record(frozen=True)
class CompatGrid:
    platform: Optional[str]
    python: Optional[str]
    torches: Tuple[str, ...]  # release minors, newest first
    variants: Tuple[str, ...]  # columns: cpu, then CUDA (and ROCm) oldest to newest
    cells: Mapping[Tuple[str, str], Cell]
    notes: Tuple[str, ...] = ()  # columns left out, and why

    def cell(self, torch: str, variant: str) -> Cell:
        return self.cells[(torch, variant)]

    def to_dict(self) -> Dict[str, object]:
        return {
            "platform": self.platform,
            "python": self.python,
            "torches": list(self.torches),
            "variants": list(self.variants),
            "cells": [
                {"torch": t, "variant": v, "state": c.state, "why": c.why, "version": c.torch}
                for (t, v), c in self.cells.items()
            ],
            "notes": list(self.notes),
        }


def compat_grid(facts: Facts, tables: Tables, releases: int = 8) -> CompatGrid:
    """The newest ``releases`` torch minors of the tables by the variants PyTorch published
    for this platform. CUDA columns appear when an NVIDIA GPU is here, ROCm ones when an AMD
    GPU is (a CUDA build on a machine without one would only run on the CPU)."""
    platform = platform_of(facts)
    python = ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None
    rows = list(reversed(tables.releases))[: max(releases, 1)]
    nvidia, amd = has_nvidia_gpu(facts), has_amd_gpu(facts)
    notes: List[str] = []
    if platform is None:
        return CompatGrid(
            None, python, (), (), {}, ("PyTorch publishes no wheels for this platform",)
        )
    published = {v for r in rows for v in variants_of(r, platform)}
    columns = [v for v in published if _shown(v, nvidia, amd)]
    hidden = sorted({v.kind for v in published} - {v.kind for v in columns})
    for kind in hidden:
        notes.append(_why_hidden(kind))
    if python is None:
        notes.append("the Python version is not known: wheels are judged for any Python")
    columns.sort(
        key=lambda v: (("cpu", "cuda", "rocm", "xpu").index(v.kind), v.version or Version("0"))
    )
    cells: Dict[Tuple[str, str], Cell] = {}
    for release in rows:
        for variant in columns:
            cells[(release.minor, str(variant))] = _judge(
                facts, tables, release.minor, variant, nvidia or amd
            )
    return CompatGrid(
        str(platform),
        python,
        tuple(r.minor for r in rows),
        tuple(str(v) for v in columns),
        cells,
        tuple(notes),
    )


def _shown(variant: Variant, nvidia: bool, amd: bool) -> bool:
    return variant.is_cpu or (variant.is_cuda and nvidia) or (variant.is_rocm and amd)


def _why_hidden(kind: str) -> str:
    return {
        "cuda": "CUDA builds: no NVIDIA GPU here (they would run on the CPU only)",
        "rocm": "ROCm builds: no AMD GPU here",
        "xpu": "XPU builds: envcheck does not probe Intel GPUs",
    }.get(kind, f"{kind} builds: not judged")


def _judge(facts: Facts, tables: Tables, minor: str, variant: Variant, any_gpu: bool) -> Cell:
    plan = resolve(facts, tables, Wish(torch=minor, variant=str(variant), companions=()))
    if not isinstance(plan, Planned):
        return Cell(plan.blocker.value, _first(plan.conflicts))
    if plan.unverified:
        return Cell(Blocker.UNKNOWN.value, f"may fit; not known: {plan.unverified[0]}", plan.torch)
    if variant.is_cpu and any_gpu:
        return Cell(CPU_ONLY, f"torch {plan.torch}+cpu runs, without the GPU", plan.torch)
    return Cell(FITS, "; ".join(plan.reasons) or f"torch {plan.torch}+{variant}", plan.torch)


def _first(conflicts: Sequence[str]) -> str:
    """The resolver's first conflict without its "torch X.Y.Z: " lead (the row says it)."""
    text = conflicts[0] if conflicts else "no build fits"
    head, sep, rest = text.partition(": ")
    return rest if sep and head.startswith("torch ") else text
