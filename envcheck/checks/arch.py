"""Does the torch build carry kernels for every GPU here ("no kernel image is available")?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable, Iterable, List, Optional, Set, Tuple, TypeVar

from packaging.version import Version

from ..compat import (
    CoverageLevel,
    arch_coverage,
    build_arch_list,
    gpu_capabilities,
    runtime_gfx_targets,
    sm_name,
)
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tegra import board as jetson_board
from ..values import ComputeCapability, Variant
from ._util import has_amd_gpu, torch_variant, torch_version, what_fits
from .jetson import JETPACK_WHEELS

if TYPE_CHECKING:
    from ._util import Planned

Gpus = List[Tuple[str, ComputeCapability]]  # (name, compute capability) of each GPU
H = TypeVar("H", bound=Hashable)


def check(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> List[Finding]:
    """``planned``: the report's install plan, which ARC001's fix explains (what_fits)."""
    caps = gpu_capabilities(facts)
    if not caps:
        return _installed_rocm_build(facts, tables, planned)
    findings = _installed_build(facts, tables, caps, planned)
    findings += _newest_release(facts, tables, caps)
    return findings


def _installed_build(
    facts: Facts, tables: Tables, caps: Gpus, planned: Optional[Planned]
) -> List[Finding]:
    variant = torch_variant(facts)
    if variant is None or not variant.is_cuda:
        return []
    arches, source = build_arch_list(facts, tables)
    if arches is None:
        return [
            RULES["ARC004"](
                f"Cannot tell which GPU architectures torch {facts.torch.version} carries",
                [source],
                "Run `envcheck probe` (the deep probe asks torch.cuda.get_arch_list()), "
                'or `python -c "import torch; print(torch.cuda.get_arch_list())"`.',
            )
        ]
    findings = []
    evidence_arches = f"{source}: {' '.join(arches)}"
    missing: Gpus = []
    ptx_only: List[Tuple[str, ComputeCapability, Optional[str]]] = []
    for name, cc in caps:
        cov = arch_coverage(tables, arches, cc)
        if cov.level is CoverageLevel.NONE:
            missing.append((name, cc))
        elif cov.level is CoverageLevel.PTX:
            ptx_only.append((name, cc, cov.arch))
    if missing:
        gpus = ", ".join(f"{n} ({sm_name(c)})" for n, c in _unique(missing))
        findings.append(
            RULES["ARC001"](
                f"torch {facts.torch.version} has no kernels for {gpus}: "
                '"no kernel image is available for execution on the device"',
                [evidence_arches, *(f"{n}: compute capability {c}" for n, c in _unique(missing))],
                "Install a build with kernels for every GPU here. "
                + what_fits(facts, tables, planned),
            )
        )
    for name, cc, arch in _unique(ptx_only):
        findings.append(
            RULES["ARC002"](
                f"{name} ({sm_name(cc)}) runs torch only through PTX ({arch}) compiled at first use",
                [evidence_arches],
                "It works, but the first start spends minutes JIT-compiling kernels (cached in "
                "~/.nv/ComputeCache), and the driver must be at least as new as the build's CUDA. "
                "A build with native kernels for this GPU avoids it.",
            )
        )
    return findings


def _installed_rocm_build(
    facts: Facts, tables: Tables, planned: Optional[Planned]
) -> List[Finding]:
    """The AMD analogue of ARC001: a ROCm wheel carries kernels for the gfx targets in its
    PYTORCH_ROCM_ARCH only, and HIP finds no code object for any other GPU."""
    variant = torch_variant(facts)
    if variant is None or not variant.is_rocm or not has_amd_gpu(facts):
        return []
    gfx = sorted({g.gfx for g in facts.amd.gpus if g.gfx})
    targets, source = rocm_gfx_list(facts, tables)
    if targets is None or not gfx:
        why = source if targets is None else "the AMD GPUs' gfx targets were not read"
        return [
            RULES["ARC004"](
                f"Cannot tell whether torch {facts.torch.version} carries kernels for "
                f"{', '.join(gfx) or 'the AMD GPUs here'}",
                [why],
                "Run `envcheck probe` (the deep probe asks torch.cuda.get_arch_list(), which "
                'lists gfx targets on ROCm), or `python -c "import torch; '
                'print(torch.cuda.get_arch_list())"`.',
            )
        ]
    missing = [g for g in gfx if g not in targets]
    if not missing:
        return []
    return [
        RULES["ARC001"](
            f"torch {facts.torch.version} has no kernels for the AMD GPU's {', '.join(missing)}: "
            '"HIP error: invalid device function"',
            [f"{source}: {' '.join(targets)}", *(f"AMD GPU: {g}" for g in missing)],
            "Install a ROCm build whose gfx list has this GPU. "
            + what_fits(facts, tables, planned),
        )
    ]


def rocm_gfx_list(facts: Facts, tables: Tables) -> Tuple[Optional[List[str]], str]:
    """The gfx targets the installed ROCm torch carries, and where that came from: the deep
    probe's get_arch_list() (gfx names on ROCm) when it ran, else the tables."""
    seen = runtime_gfx_targets(facts)
    if seen is not None:
        return seen, "torch.cuda.get_arch_list()"
    variant, version = torch_variant(facts), torch_version(facts)
    release = tables.release(version) if version is not None else None
    if variant is None or release is None:
        return None, f"torch {facts.torch.version} is not in the tables"
    targets = release.gfx_list(variant)
    if targets is None:
        return None, f"the tables do not list the gfx targets of {release.minor} {variant}"
    return list(targets), f"compat table for torch {release.minor} {variant}"


def _newest_release(facts: Facts, tables: Tables, caps: Gpus) -> List[Finding]:
    """GPUs that the newest torch no longer builds for (Pascal/Volta after cu126 went)."""
    newest = tables.newest_release
    lists = newest.arch_lists
    if not lists:
        return []
    findings = []
    for name, cc in _unique(caps):
        if any(
            arch_coverage(tables, arches, cc).level is not CoverageLevel.NONE
            for arches in lists.values()
        ):
            continue
        last = _last_release_for(tables, cc)
        fix = (
            f"The newest torch with kernels for this GPU is torch {last[0]} ({last[1]}). Pin it "
            "(and its companions) for this machine, or plan for newer GPUs."
            if last
            else "No torch release in the tables has kernels for this GPU: PyTorch's own "
            "wheels do not run on it. "
            + (
                f"On this Jetson, use NVIDIA's torch wheels for its JetPack release ({JETPACK_WHEELS})."
                if jetson_board(facts, tables)
                else "Use a torch build made for it, or plan for another GPU."
            )
        )
        findings.append(
            RULES["ARC003"](
                f"torch {newest.minor} has no build for {name} ({sm_name(cc)})",
                [
                    f"torch {newest.minor} builds: "
                    + "; ".join(f"{v}: {' '.join(a)}" for v, a in lists.items())
                ],
                fix,
            )
        )
    return findings


def _last_release_for(tables: Tables, cc: ComputeCapability) -> Optional[Tuple[Version, Variant]]:
    for release in reversed(tables.releases):
        for variant, arches in sorted(release.arch_lists.items(), reverse=True):
            if arch_coverage(tables, arches, cc).level is CoverageLevel.NATIVE:
                return release.newest, variant
    return None


def _unique(pairs: Iterable[H]) -> List[H]:
    seen: Set[H] = set()
    out: List[H] = []
    for p in pairs:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
