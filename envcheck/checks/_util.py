"""Small questions several checks ask of Facts."""

from __future__ import annotations

from packaging.version import Version

from ..compat import (  # noqa: F401 - re-exported for the checks
    driver_needed,
    has_amd_gpu,
    has_nvidia_gpu,
    nearest_working_release,
    torch_variant,
    torch_version,
)
from ..facts import Facts
from ..tables import Tables


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
