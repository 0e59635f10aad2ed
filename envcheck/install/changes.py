"""What a plan changes on this machine against the installed torch (read before you
upgrade), and the GPUs its build covers only by PTX."""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from ..compat import (
    CoverageLevel,
    arch_coverage,
    gpu_capabilities,
    sm_name,
    torch_variant,
    torch_version,
)
from ..cuda_needs import built_for_other_major, runtime_majors
from ..facts import Facts
from ..pins import builds_for_other_torch, numpy_mismatch, torch_cxx11_abi, unmet_pins
from ..tables import Tables
from ..tables.model import Release
from ..values import Platform, Variant
from .companions import COMPANIONS, for_installed
from .draft import Draft
from .releases import variants_of


def ptx_notes(
    plan: Draft, facts: Facts, tables: Tables, release: Release, variant: Variant
) -> None:
    """A GPU whose kernels come only from PTX: it runs, after a slow first start."""
    windows = bool(plan.platform) and Platform.parse(plan.platform or "").is_windows
    arches = release.arch_list(variant, facts.system.machine.lower(), windows)
    if not arches:
        return
    for name, cc in sorted(set(gpu_capabilities(facts))):
        if arch_coverage(tables, arches, cc).level is CoverageLevel.PTX:
            plan.notes.append(f"{name} ({sm_name(cc)}) is covered only by PTX: slow first start")


def add_changes(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    variant: Variant,
) -> None:
    """What an upgrade (or downgrade) changes for this machine (read before you upgrade)."""
    current = torch_version(facts)
    if current is None or not for_installed(plan, facts):
        return
    old_variant = torch_variant(facts)
    if Version(current.base_version) == version and old_variant == variant:
        if all(not p.local for p in plan.packages):
            plan.notes.append(f"torch {version} ({variant}) is already installed")
        return
    old = tables.release(current)
    plan.changes.append(f"torch {current} -> {plan.installs}")
    unmet = unmet_pins(facts, tables, str(version))
    for pin in unmet:  # pip only warns: say it before, not after
        plan.changes.append(
            f"{pin.text}: torch {version} does not meet it (pip installs it anyway)"
        )
    numpy = numpy_mismatch(facts, tables, version, plan.platform)
    if numpy is not None:
        plan.changes.append(
            f"numpy {numpy[0].version}: torch {version} was built against numpy{numpy[1].numpy} "
            f'(pip install "numpy{numpy[1].numpy}" with it)'
        )
    abi = torch_cxx11_abi(facts, tables, version, variant, plan.platform, planned=True)
    rebuilt = builds_for_other_torch(facts, tables, version, variant, abi)
    for b in rebuilt:
        where = f" ({b.reinstall})" if b.reinstall else ""
        plan.changes.append(
            f"{b.package.name} {b.package.version} is built for {b.made_for}: "
            f"reinstall it for torch {version.major}.{version.minor}{where}"
        )
    _cuda_needs(plan, facts, tables, version, variant)
    if (unmet or rebuilt) and not plan.wish.near:
        plan.changes.append("`envcheck install --keep` plans a torch that keeps them working")
    if old is None:
        return
    if release.python_min > old.python_min:
        plan.changes.append(f"Python floor raised: {old.python_min} -> {release.python_min}")
    platform = Platform.parse(plan.platform) if plan.platform else None
    if old_variant and platform and old_variant not in variants_of(release, platform):
        plan.changes.append(f"{old_variant} is no longer published; {variant} replaces it")
    _lost_kernels(plan, facts, tables, old, release, old_variant, variant, platform)
    for p in facts.torch.companions:
        if p.name in COMPANIONS and not release.companion(p.name, version):
            plan.changes.append(f"{p.name} has no release for torch {version}")
    old_cuda = old_variant.cuda if old_variant else None
    new_cuda = variant.cuda
    if old_cuda and new_cuda and new_cuda.major > old_cuda.major:
        floor = tables.minor_compat_floor(new_cuda, facts.system.os)
        if floor:
            plan.changes.append(
                f"driver minimum raised: CUDA {new_cuda.major}.x needs {floor} or newer"
            )


def _cuda_needs(
    plan: Draft, facts: Facts, tables: Tables, version: Version, variant: Variant
) -> None:
    """The packages built for another CUDA major than the planned torch's (cuda_needs): pip
    leaves the runtime wheels the old torch brought, so they keep loading while those stay."""
    cuda = variant.cuda if variant.is_cuda else None
    if cuda is None:
        return
    have = runtime_majors(facts, tables)
    for need in built_for_other_major(facts, tables, variant):
        other = need.replacement(cuda.major)
        instead = f"; {other} is its CUDA {cuda.major} build" if other else ""
        kept = (
            f"it keeps loading the CUDA {need.major} runtime wheels installed now (pip leaves them)"
            if need.major in have
            else f"no CUDA {need.major} runtime is installed for it"
        )
        plan.changes.append(
            f"{need.package.name} {need.package.version} is built for CUDA {need.major}, torch "
            f"{version} ({variant}) for CUDA {cuda.major}: {kept}{instead}"
        )


def _lost_kernels(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    old: Release,
    release: Release,
    old_variant: Optional[Variant],
    variant: Variant,
    platform: Optional[Platform],
) -> None:
    """Each GPU the installed build has kernels for and the planned one has not."""
    machine = facts.system.machine.lower()
    windows = platform is not None and platform.is_windows
    old_list = old.arch_list(old_variant, machine, windows) if old_variant else None
    new_list = release.arch_list(variant, machine, windows)
    for name, cc in sorted(set(gpu_capabilities(facts))):
        if (
            old_list
            and new_list
            and arch_coverage(tables, old_list, cc).level is not CoverageLevel.NONE
            and arch_coverage(tables, new_list, cc).level is CoverageLevel.NONE
        ):
            plan.changes.append(f"{name} ({sm_name(cc)}) loses its kernels")
