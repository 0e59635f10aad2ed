"""Small questions several checks ask of Facts."""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from .. import builds
from ..compat import driver_needed, nearest_working_release
from ..facts import Facts
from ..tables import Tables
from ..tables.model import parse_version


def torch_version(facts: Facts) -> Optional[Version]:
    return parse_version(facts.torch.version) if facts.torch.installed else None


def torch_variant(facts: Facts) -> Optional[str]:
    t = facts.torch
    return builds.variant(t.version, t.cuda, t.hip, t.xpu) if t.installed else None


def has_nvidia_gpu(facts: Facts) -> bool:
    """An NVIDIA GPU is (or should be) here: NVML lists one, or the driver's devices exist."""
    nv = facts.nvidia
    return (
        bool(nv.gpus)
        or "/dev/nvidia0" in nv.device_nodes
        or bool(nv.driver_version and nv.driver_version_source != "override" and nv.device_nodes)
    )


def driver_text(facts: Facts) -> str:
    nv = facts.nvidia
    if nv.driver_version:
        cuda = f", supports CUDA {nv.cuda_driver_version}" if nv.cuda_driver_version else ""
        return f"driver {nv.driver_version} (from {nv.driver_version_source}){cuda}"
    if nv.cuda_driver_version:
        return f"driver supports CUDA {nv.cuda_driver_version}"
    return "driver version unknown"


def gpu_list(facts: Facts) -> str:
    names = [g.name or f"GPU {g.index}" for g in facts.nvidia.gpus]
    if not names:
        return "no GPU listed"
    counts = {n: names.count(n) for n in names}
    return ", ".join(f"{c}x {n}" if c > 1 else n for n, c in counts.items())


def ways_out(facts: Facts, tables: Tables, version: Version) -> str:
    """The nearest ways out when no build of ``version`` fits: a driver upgrade, an older torch."""
    parts = []
    needed = driver_needed(facts, tables, version)
    if needed:
        parts.append(f"upgrade the driver to {needed[1]} or newer for the {needed[0]} build")
    older = nearest_working_release(facts, tables, below=version)
    if older:
        parts.append(f"or install torch {older[0]} ({older[1]}), the newest that fits this driver")
    return (" Ways out: " + ", ".join(parts) + ".") if parts else ""
