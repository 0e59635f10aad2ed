"""When no release that matches the wish fits: what conflicts, the blocker, and the nearest
ways out (a driver upgrade, NVIDIA forward compatibility, a release with kernels for the
GPUs here, another variant or manager)."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from packaging.version import Version

from ..driver_support import forward_compat_way_out
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release, parse_driver
from ..values import Platform, Variant
from .conda import conda_channel
from .cuda import cuda_of, driver_upgrade, gpu_names, releases_with_kernels
from .draft import Draft
from .plan import NoPlan
from .reasons import Blocker, Unknown, blocker_of


def no_fit(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    target: Platform,
    pyv: Optional[Version],
    gpu: bool,
    matching: Sequence[Release],
    usable: Sequence[Release],
    near: Optional[Version],
) -> NoPlan:
    """No release tried fits: each one's reason is a conflict, the first one's blocker is
    the plan's, and the ways out follow."""
    tried = plan.passed_over
    wish = plan.wish
    plan.conflicts.extend(f"torch {v}: {why}" for v, why in tried)
    blocker = blocker_of(tried[0][1]) if tried else Blocker.UNKNOWN
    if wish.for_conda and tried and all(isinstance(w, Unknown) for _, w in tried):
        _conda_unknowns(plan, tables, target, matching)
        return plan.no_plan(blocker)
    newest = usable[0] if near is None else max(usable, key=lambda r: Version(r.minor))
    needed = _driver_ways_out(plan, facts, tables, target, newest)
    if gpu and needed is None and wish.may_be_cuda:
        _kernel_ways_out(plan, facts, tables, target, pyv, usable)
    asked = wish.asked_variant
    if asked is not None and not asked.is_cpu:
        plan.ways_out.append("let envcheck choose the variant (--variant auto)")
    plan.ways_out.append("use the CPU build (--variant cpu)")
    if wish.for_conda:
        plan.ways_out.append("install the pip wheels into the conda environment (--manager pip)")
    return plan.no_plan(blocker)


def _conda_unknowns(
    plan: Draft, tables: Tables, target: Platform, matching: Sequence[Release]
) -> None:
    """Only what the tables do not know stands in the way: say what is known instead."""
    plan.unverified.extend(str(why) for _, why in plan.passed_over)
    releases = tables.conda.releases if tables.conda is not None else ()
    listed = [
        str(r.torch)
        for r in releases
        if str(target) in r.covers and any(r.torch in m.versions for m in matching)
    ]
    if listed:
        plan.ways_out.append(f"torch {', '.join(listed)}: PyTorch's pages give conda commands")
    plan.ways_out.append("install the pip wheels into the conda environment (--manager pip)")


def _driver_ways_out(
    plan: Draft, facts: Facts, tables: Tables, target: Platform, newest: Release
) -> Optional[Tuple[Variant, str]]:
    """A driver upgrade that makes a build of ``newest`` run (and NVIDIA forward
    compatibility where it applies); what upgrade was found (None: no driver helps)."""
    wish = plan.wish
    asked = wish.asked_variant
    if asked is not None and asked.is_cpu:
        asked = None  # the CPU build needs no driver
    only = asked if asked is not None and asked.is_cuda else None
    # A ROCm or XPU build asked for: no NVIDIA driver makes it, so none is proposed.
    needed = driver_upgrade(facts, tables, newest, target, only) if asked is None or only else None
    have = parse_driver(facts.nvidia.driver_version)
    floor = parse_driver(needed[1]) if needed else None
    if conda_channel(tables, wish, newest) is not None:
        needed = None  # the wheels' variants: not what the conda channel offers
    if needed and (have is None or floor is None or have < floor):  # only a real upgrade
        plan.ways_out.append(
            f"upgrade the NVIDIA driver to {needed[1]} or newer ({needed[0]} of torch {newest.newest})"
        )
        package, _ = forward_compat_way_out(facts, tables, cuda_of(needed[0]))
        if package is not None:  # a data-center GPU on a branch NVIDIA lists for the package
            plan.ways_out.append(
                f"or keep the driver and install {package} (NVIDIA forward compatibility) "
                f"for {needed[0]} of torch {newest.newest}"
            )
    return needed


def _kernel_ways_out(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    target: Platform,
    pyv: Optional[Version],
    usable: Sequence[Release],
) -> None:
    """The nearest release with kernels for every GPU here: the first newer, else the
    newest older."""
    with_kernels = releases_with_kernels(facts, tables, target, pyv, exclude=usable)
    low = min(Version(r.minor) for r in usable)
    newer = [m for m in with_kernels if Version(m) > low]
    older = [m for m in with_kernels if Version(m) < low]
    gpus = ", ".join(f"{g} ({cc.sm})" for g, cc in gpu_names(facts))
    if newer:
        plan.ways_out.append(
            f"torch {newer[0]} is the first newer release with kernels for {gpus} "
            f"(--torch {newer[0]})"
        )
    elif older:
        plan.ways_out.append(
            f"torch {older[-1]} is the newest older release with kernels for {gpus} "
            f"(--torch {older[-1]})"
        )
