"""The CUDA variant choice: which CUDA build of a release this driver runs with kernels for
every GPU here, and, when none does, the smallest driver upgrade or the nearest release
that has them. The verdicts come from the tables (compat.driver_verdict, arch_coverage)."""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from packaging.version import Version

from ..compat import (
    CoverageLevel,
    arch_coverage,
    build_arch_list,
    driver_predates,
    gpu_capabilities,
    sm_name,
    torch_variant,
    torch_version,
)
from ..driver_support import DriverLevel, DriverVerdict, machine_driver_verdict
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release, parse_driver, parse_version
from ..values import ComputeCapability, Platform, Variant
from .reasons import Blocker, Unknown, UnknownKernels, Why
from .releases import cuda_names


def cuda_of(variant: Variant) -> Version:
    """The CUDA version of a variant taken from a table's CUDA list."""
    if variant.cuda is None:
        raise ValueError(f"{variant} is not a CUDA variant")
    return variant.cuda


def _verdict(facts: Facts, tables: Tables, variant: Variant) -> DriverVerdict:
    """Whether this driver runs the CUDA of ``variant`` (by the tables)."""
    return machine_driver_verdict(facts, tables, cuda_of(variant))


def _is_this_build(facts: Facts, version: Optional[Version]) -> bool:
    installed = torch_version(facts)
    return (
        installed is not None and version is not None and Version(installed.base_version) == version
    )


def _missing(
    facts: Facts, tables: Tables, arches: Sequence[str]
) -> List[str]:  # "name (sm_XY)" of each GPU without kernels in ``arches``
    gpus = gpu_capabilities(facts)
    covered: Dict[ComputeCapability, bool] = {}  # a machine's GPUs are mostly one model
    for _, cc in gpus:
        if cc not in covered:
            covered[cc] = arch_coverage(tables, arches, cc).level is not CoverageLevel.NONE
    return [f"{name} ({sm_name(cc)})" for name, cc in gpus if not covered[cc]]


class CudaChoice(NamedTuple):
    """The CUDA build chosen, why the newer ones were not, and every build that fits (the
    chosen one among them), newest first: what the plan says it chose among."""

    variant: Optional[Variant]
    reasons: List[str]
    fits: List[Variant]
    rule: str = ""  # why the variant among ``fits`` (preferred_cuda)


def choose_cuda(
    facts: Facts,
    tables: Tables,
    release: Release,
    platform: Platform,
    prefer: Optional[Variant] = None,
    version: Optional[Version] = None,
    names: Optional[Sequence[Variant]] = None,
) -> CudaChoice:
    """The CUDA variant of ``release`` this driver runs with kernels for every GPU: ``prefer``
    (the installed one) when it fits, else as :func:`preferred_cuda` says among those that do.

    The installed build itself is judged by what it really carries (the deep probe's
    ``torch.cuda.get_arch_list()``) where that is known."""
    this_build = _is_this_build(facts, version) and prefer is not None
    if names is None:  # the wheels' variants (per platform); conda passes its channel's
        names = cuda_names(release, platform)
    variants = sorted(names or (), reverse=True)
    if prefer is not None and prefer in variants:
        variants.remove(prefer)
        variants.insert(0, prefer)
    fits: List[Variant] = []
    judged: List[Tuple[Variant, str]] = []  # (variant, why not), newest first
    may_fit: Optional[Variant] = None  # the first whose arch list the tables lack
    for variant in variants:
        why = _why_not(facts, tables, release, platform, variant, this_build and variant == prefer)
        if why is None:
            fits.append(variant)
        elif why == _UNKNOWN:
            may_fit = may_fit or variant
        else:
            judged.append((variant, why))
    preference = preferred_cuda(facts, tables, fits, prefer)
    chosen = preference.variant or may_fit
    order = {v: i for i, v in enumerate(variants)}
    last = order[chosen] if chosen is not None else len(variants)
    newer = [why for v, why in judged if order[v] < last]
    return CudaChoice(chosen, newer, sorted(fits, reverse=True), preference.rule)


class Preference(NamedTuple):
    """The CUDA build planned among those that fit, and the rule that chose it, in words."""

    variant: Optional[Variant]
    rule: str


NEWEST = "the newest CUDA is preferred"
KNOWN_TO_RUN = "the newest CUDA this driver is known to run is preferred"


def preferred_cuda(
    facts: Facts, tables: Tables, fits: Sequence[Variant], prefer: Optional[Variant]
) -> Preference:
    """Among the CUDA builds that fit (newest first), the one to plan: the installed one; else
    the newest of the driver's own CUDA major that it runs fully; else the newest the tables
    know it runs, even if only through minor-version compatibility (a newer major's build is
    never given up for an older major's just to avoid that); else the newest. A build the
    driver is not known to run (a Jetson's driver and a newer CUDA minor) never wins over
    one it is. The one place this rule is decided and said."""
    if prefer in fits:
        return Preference(prefer, "the installed build is kept")
    levels = {v: _verdict(facts, tables, v).level for v in fits}
    own = _drivers_cuda(facts, tables)
    for n, variant in enumerate(fits):
        cuda = variant.cuda
        if own is None or cuda is None:
            break
        if cuda.major == own.major and levels[variant] is DriverLevel.FULL:
            if n == 0:
                return Preference(variant, NEWEST)
            if any(levels[v] is DriverLevel.UNKNOWN for v in fits[:n]):
                return Preference(variant, KNOWN_TO_RUN)
            return Preference(
                variant,
                "the newest CUDA this driver runs without minor-version compatibility is preferred",
            )
    known = [v for v in fits if levels[v] is not DriverLevel.UNKNOWN]
    if known and known[0] != fits[0]:
        return Preference(known[0], KNOWN_TO_RUN)
    return Preference(fits[0] if fits else None, NEWEST)


def _drivers_cuda(facts: Facts, tables: Tables) -> Optional[Version]:
    """The CUDA version the driver reports, or the one its branch reports (the tables)."""
    nv = facts.nvidia
    driver = parse_driver(nv.driver_version)  # None for text no driver prints (a fuzzed report)
    text = nv.cuda_driver_version or (
        tables.cuda_for_driver_branch(driver.release[0]) if driver is not None else None
    )
    return parse_version(text or "")


_UNKNOWN = "the tables do not hold its architecture list"


def _why_not(
    facts: Facts,
    tables: Tables,
    release: Release,
    platform: Platform,
    variant: Variant,
    installed: bool,
) -> Optional[str]:
    """Why ``variant`` does not fit this driver and every GPU (a ``Why``), ``_UNKNOWN`` when
    its kernels are not known, None when it fits: the one test every choice of a CUDA build
    goes through."""
    verdict = _verdict(facts, tables, variant)
    if verdict.level is DriverLevel.TOO_OLD:
        return Why(f"{variant}: {verdict.basis}", Blocker.DRIVER)
    arches: Optional[Sequence[str]] = release.arch_list(
        variant, platform.machine, platform.is_windows
    )
    if installed:
        arches = build_arch_list(facts, tables)[0] or arches
    if arches is not None:
        missing = _missing(facts, tables, arches)
        if missing:
            return Why(f"{variant}: no kernels for {', '.join(missing)}", Blocker.KERNELS)
        return None
    return _UNKNOWN if gpu_capabilities(facts) else None


def kernels(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Optional[Version],
    variant: Variant,
    platform: Platform,
) -> Union[str, List[str]]:
    """Whether ``variant`` of ``release`` has kernels for every GPU here: a reason it
    has not (str), or the facts that are not known ([] when all are)."""
    caps = gpu_capabilities(facts)
    if not caps or not variant.is_cuda:
        return []
    arches: Optional[Sequence[str]] = release.arch_list(
        variant, platform.machine, platform.is_windows
    )
    if _is_this_build(facts, version) and torch_variant(facts) == variant:
        arches = build_arch_list(facts, tables)[0] or arches
    if arches is None:
        gpus = ", ".join(sorted({f"{n} ({sm_name(c)})" for n, c in caps}))
        return [
            UnknownKernels(
                f"kernels for {gpus} in torch {version or release.minor}+{variant}: "
                "the tables do not hold this build's architecture list"
            )
        ]
    missing = sorted(set(_missing(facts, tables, arches)))
    return f"no kernels for {', '.join(missing)}" if missing else []


# How the driver runs a build's CUDA, by the verdict's level; any other level says its basis.
_HOW: Dict[DriverLevel, str] = {
    DriverLevel.FULL: "driver {driver} runs CUDA {cuda}",
    DriverLevel.MINOR: "driver {driver} runs CUDA {major}.x through minor-version compatibility",
    DriverLevel.UNKNOWN: "the driver version is unknown",
}


def how_driver_runs(
    facts: Facts, tables: Tables, variant: Variant, version: Version, platform: Platform
) -> Tuple[str, DriverVerdict]:
    """(how the driver runs this build, the verdict): the first words of a CUDA plan's reason."""
    cuda = cuda_of(variant)
    verdict = machine_driver_verdict(facts, tables, cuda, torch=version, platform=str(platform))
    how = _HOW.get(verdict.level)
    if how is None:
        return verdict.basis, verdict
    driver = facts.nvidia.driver_version
    if verdict.level is not DriverLevel.MINOR:
        driver = driver or ""
    text = how.format(driver=driver, cuda=cuda, major=cuda.major)
    return (text.replace("  ", " ") if verdict.level is DriverLevel.FULL else text), verdict


def driver_unknown(verdict: DriverVerdict) -> List[str]:
    """A driver the tables cannot judge against a build's CUDA: said, never read as a pass."""
    if verdict.level is not DriverLevel.UNKNOWN:
        return []
    return [Unknown(f"whether the driver runs CUDA {verdict.cuda}: {verdict.basis}")]


def asked_cuda(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wanted: Variant,
    platform: Platform,
) -> Tuple[Optional[Variant], Union[str, List[str]]]:
    """The CUDA build asked for (``--variant cu126``), judged against this driver and GPUs.
    A driver older than a GPU here was decided once, in resolve, before any release."""
    verdict = _verdict(facts, tables, wanted)
    if verdict.level is DriverLevel.TOO_OLD:
        return None, Why(f"{wanted}: {verdict.basis}", Blocker.DRIVER)
    found = kernels(facts, tables, release, version, wanted, platform)
    if isinstance(found, str):
        return None, Why(f"{wanted}: {found}", Blocker.KERNELS)
    return wanted, [f"{wanted} as asked", *driver_unknown(verdict), *found]


def driver_predates_text(facts: Facts, tables: Tables) -> str:
    """Why no CUDA build can run: the driver is older than a GPU here ("" when it is not)."""
    gaps = driver_predates(facts, tables)
    return "; ".join(
        f"driver {facts.nvidia.driver_version} is older than {name} ({sm_name(cc)}), "
        f"which needs {need} or newer"
        for name, cc, need in gaps
    )


def releases_with_kernels(
    facts: Facts,
    tables: Tables,
    platform: Platform,
    python: Optional[Version],
    exclude: Sequence[Release] = (),
) -> List[str]:
    """The minors (oldest first) outside ``exclude`` with a CUDA build for this platform and
    Python whose arch list has kernels for every GPU here: the way out when the release asked
    for has none (an RTX 5090 with torch 2.5). A build without a list is not counted."""
    caps = gpu_capabilities(facts)
    out = []
    for release in tables.releases:
        if release in exclude or str(platform) not in release.platforms:
            continue
        if python is not None and not release.supports_python(python, str(platform)):
            continue
        for variant in cuda_names(release, platform) or ():
            arches = release.arch_list(variant, platform.machine, platform.is_windows)
            if arches is not None and all(
                arch_coverage(tables, arches, cc).level is not CoverageLevel.NONE for _, cc in caps
            ):
                out.append(release.minor)
                break
    return out


def gpu_names(facts: Facts) -> List[Tuple[str, ComputeCapability]]:
    """(name, compute capability) of each distinct NVIDIA GPU model here."""
    seen: Dict[str, ComputeCapability] = {}
    for gpu in facts.nvidia.gpus:
        if gpu.compute_capability:
            seen.setdefault(gpu.name or f"GPU {gpu.index}", gpu.compute_capability)
    return list(seen.items())


def driver_upgrade(
    facts: Facts,
    tables: Tables,
    release: Release,
    platform: Platform,
    only: Optional[Variant] = None,
) -> Optional[Tuple[Variant, str]]:
    """(variant, minimum driver) of the variant of ``release`` with kernels for every GPU
    that needs the lowest driver: the smallest driver upgrade that makes a build of it run
    (not the newest build's floor). Between equal floors, the newer CUDA. ``only``: the
    variant the user asked for, the one build to judge."""
    names = offered = cuda_names(release, platform)
    if only is not None:  # only a build published there (none on macOS): no driver makes one
        names = (only,) if offered is None or only in offered else ()
    best: Optional[Tuple[Variant, Version]] = None
    for variant in sorted(names or (), reverse=True):
        arches = release.arch_list(variant, platform.machine, platform.is_windows)
        if arches is None or _missing(facts, tables, arches):
            continue
        floor = tables.minor_compat_floor(cuda_of(variant), facts.system.os)
        if floor is not None and (best is None or floor < best[1]):
            best = (variant, floor)
    return (best[0], str(best[1])) if best else None
