"""The ROCm variant choice: which ROCm build of a release has kernels for every AMD GPU here
(its gfx list), for Linux x86_64, the one platform PyTorch builds ROCm wheels for."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from packaging.version import Version

from ..compat import has_amd_gpu, runtime_gfx_targets, torch_variant, torch_version
from ..facts import Facts
from ..tables.model import Release
from ..values import Platform, Variant
from .reasons import Blocker, Unknown, UnknownKernels, Why

# (the variant, the reasons) or (None, why not): what every variant choice answers.
Choice = Tuple[Optional[Variant], Union[str, List[str]]]


def rocm_variant(facts: Facts, release: Release, version: Version, platform: Platform) -> Choice:
    """The newest ROCm build of ``release`` whose gfx list has every AMD GPU here (Linux
    x86_64 only); else the newest whose list the tables lack, with that said; else why not.
    The installed build itself is judged by what it carries (get_arch_list()) when known."""
    gfx = amd_targets(facts)
    shown = ", ".join(gfx) or "an AMD GPU"
    if str(platform) != "linux-x86_64":
        return None, Why(
            f"ROCm builds exist for linux-x86_64 only ({shown} on {platform})", Blocker.NO_WHEEL
        )
    if not release.rocm_variants:
        if release.rocm_variants is None:
            return None, Unknown(f"ROCm builds of {release.minor}: not known")
        return None, Why(f"ROCm builds of {release.minor}: none", Blocker.NO_WHEEL)
    reasons: List[str] = []
    may_fit: Optional[Variant] = None
    for variant in sorted(release.rocm_variants, reverse=True):
        kernels = rocm_kernels(facts, release, version, variant)
        if isinstance(kernels, str):
            reasons.append(Why(f"{variant}: {kernels}", Blocker.KERNELS))
        elif kernels:
            may_fit = may_fit or variant
        else:
            inferred = (
                " (its gfx list inferred from PyTorch's build scripts)"
                if release.provenance.inferred_at("gfx_lists", variant)
                else ""
            )
            return variant, [
                f"AMD GPU ({shown}) -> {variant}, whose gfx list has it{inferred}: "
                f"torch {version}+{variant}"
            ] + [f"skipped {r}" for r in reasons]
    if may_fit is None:
        return None, Why("; ".join(reasons), Blocker.KERNELS)
    unknown = rocm_kernels(facts, release, version, may_fit)
    assert isinstance(unknown, list)
    return may_fit, [
        f"AMD GPU ({shown}) -> {may_fit}, the newest ROCm build of torch {version} "
        "not known to lack it",
        *unknown,
    ] + [f"skipped {r}" for r in reasons]


def amd_targets(facts: Facts) -> List[str]:
    return sorted({g.gfx for g in facts.amd.gpus if g.gfx})


def _installed_targets(
    facts: Facts, version: Optional[Version], variant: Variant
) -> Optional[List[str]]:
    """The gfx targets the installed build carries (the deep probe's get_arch_list()), when
    it is this version and variant and that list was read."""
    installed = torch_version(facts)
    if (
        installed is not None
        and version is not None
        and Version(installed.base_version) == version
        and torch_variant(facts) == variant
    ):
        return runtime_gfx_targets(facts)
    return None


def rocm_kernels(
    facts: Facts, release: Release, version: Optional[Version], variant: Variant
) -> Union[str, List[str]]:
    """Whether ROCm ``variant`` of ``release`` has kernels for every AMD GPU here: a reason
    it has not (str), or the facts that are not known ([] when all are)."""
    if not variant.is_rocm or not has_amd_gpu(facts):
        return []
    gfx = amd_targets(facts)
    targets: Optional[Sequence[str]] = release.gfx_list(variant)
    targets = _installed_targets(facts, version, variant) or targets
    if not gfx:
        return [Unknown("the gfx target of the AMD GPU here: not read")]
    if targets is None:
        return [
            UnknownKernels(
                f"kernels for {', '.join(gfx)} in torch {version or release.minor}+{variant}: "
                "the tables do not hold this build's gfx list"
            )
        ]
    missing = [g for g in gfx if g not in targets]
    return f"no kernels for {', '.join(missing)} (carries {' '.join(targets)})" if missing else []
