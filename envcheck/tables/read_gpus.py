"""gpu_arches.json: GPU families, which devices SASS of each sm_XY runs on, and GPU models."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from packaging.version import Version

from ..values import Arch, ComputeCapability
from .model import (
    Family,
    GpuModel,
    SassRule,
)
from .reader import Reader, plain_gfx

# --------------------------------------------------------------------------- GPUs


def read_gpu_arches(
    data: Dict[str, Any], file: str
) -> Tuple[Tuple[Family, ...], Dict[str, SassRule], Tuple[GpuModel, ...]]:
    r = Reader(file, {})
    return _families(r, data), _sass_rules(r, data), _gpu_models(r, data)


def _families(r: Reader, data: Dict[str, Any]) -> Tuple[Family, ...]:
    families = []
    for i, raw in enumerate(r.get(data, "families", "document", list)):
        where = f"families[{i}]"
        name = r.get(raw, "family", where, str)
        caps = r.capabilities(r.get(raw, "capabilities", where, list), f"{where}.capabilities")
        families.append(
            Family(
                name=name,
                capabilities=caps,
                first_cuda=r.opt_version(raw.get("first_cuda"), f"{where}.first_cuda"),
                last_cuda_major=r.get(raw, "last_cuda_major", where, int, optional=True),
                last_driver_branch=r.get(raw, "last_driver_branch", where, int, optional=True),
                first_cuda_by_capability=_first_cuda_by_capability(r, raw, where),
                provenance=r.provenance(
                    raw,
                    where,
                    [
                        "family",
                        "capabilities",
                        "first_cuda",
                        "last_cuda_major",
                        "last_driver_branch",
                        "first_cuda_by_capability",
                    ],
                ),
            )
        )
    return tuple(families)


def _first_cuda_by_capability(
    r: Reader, raw: Dict[str, Any], where: str
) -> Dict[ComputeCapability, Version]:
    """A family's capabilities that a later toolkit than the family's first added."""
    found = r.get(raw, "first_cuda_by_capability", where, dict, optional=True) or {}
    out: Dict[ComputeCapability, Version] = {}
    for cc, cuda in found.items():
        at = f"{where}.first_cuda_by_capability.{cc}"
        version = r.opt_version(cuda, at)
        if version is None:
            raise r.fail(at, "expected a CUDA version")
        out[r.capability(cc, at)] = version
    return out


def _sass_rules(r: Reader, data: Dict[str, Any]) -> Dict[str, SassRule]:
    """sm_XY -> the devices its SASS runs on (``only``, or ``min`` up to ``below``)."""
    sass_raw = r.get(data, "sass_compatibility", "document", dict)
    r.provenance(sass_raw, "sass_compatibility", ["rules", "ptx"])
    rules = {}
    for arch, rule in r.get(sass_raw, "rules", "sass_compatibility", dict).items():
        where = f"sass_compatibility.rules.{arch}"
        if Arch.maybe(arch) is None or not isinstance(rule, dict):
            raise r.fail(where, "expected sm_XY -> {only} or {min, below[, except]}")
        only = r.capabilities(rule.get("only", []), f"{where}.only")
        low = None if rule.get("min") is None else r.capability(rule["min"], f"{where}.min")
        below = None if rule.get("below") is None else r.capability(rule["below"], f"{where}.below")
        if not only and not (low and below):
            raise r.fail(where, "needs 'only', or 'min' and 'below'")
        rules[arch] = SassRule(
            only=only,
            min=low,
            below=below,
            exclude=r.capabilities(rule.get("except", []), f"{where}.except"),
        )
    return rules


def _gpu_models(r: Reader, data: Dict[str, Any]) -> Tuple[GpuModel, ...]:
    """GPU models by name: an NVIDIA GPU's compute capability or an AMD GPU's gfx target."""
    gpus = []
    names = set()
    for i, raw in enumerate(r.get(data, "gpus", "document", list)):
        where = f"gpus[{i}]"
        name = r.get(raw, "name", where, str)
        # an NVIDIA GPU has a compute capability, an AMD GPU an LLVM target (gfx): one of them
        gfx = r.get(raw, "gfx", where, str, optional=True)
        if gfx is None:
            cap = r.capability(r.get(raw, "capability", where, str), f"{where}.capability")
        elif raw.get("capability") is not None:
            raise r.fail(where, "has both a capability and a gfx target")
        elif not plain_gfx(gfx):
            raise r.fail(f"{where}.gfx", f"{gfx!r} is not an AMD LLVM target (gfx942, gfx90a)")
        else:
            cap = None
        if name in names:
            raise r.fail(where, f"{name!r} is listed twice")
        names.add(name)
        r.provenance(raw, where, ["name", "capability", "gfx", "family", "segment"])
        family = r.get(raw, "family", where, str)
        segment = r.get(raw, "segment", where, str, optional=True) or ""
        gpus.append(GpuModel(name, cap, family, segment, gfx))
    return tuple(gpus)
