"""Can this driver run that CUDA build: the driver questions of the compatibility rules.

The checks (DRV001, DRV002, ...) and the resolver (which CUDA variant a driver runs) ask
them here, the same way; :mod:`envcheck.compat` holds the other shared questions.
"""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Optional, Tuple

from packaging.version import Version

from ._record import record, replace
from .facts import Facts
from .tables.model import Tables, parse_driver, parse_version
from .tegra import board, tegra_cuda
from .values import OsFamily, Variant


class DriverLevel(str, enum.Enum):
    """How well a driver runs a CUDA build: fully, through minor-version compatibility,
    not at all (too old), or not known to the tables."""

    FULL = "full"
    MINOR = "minor"
    TOO_OLD = "too_old"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


@record(frozen=True)
class DriverVerdict:
    """Can a driver run a CUDA build? ``level`` is full, minor, too_old or unknown."""

    level: DriverLevel
    cuda: Version
    driver: Optional[Version]
    full_from: Optional[Version]  # driver of the CUDA release the build bundles: everything works
    minimum: Optional[Version]  # minor-version-compatibility floor of the CUDA major
    basis: str  # one line: what the verdict rests on
    full_basis: str = ""  # which release full_from belongs to, and how sure that is
    full_branch: Optional[int] = None  # CUDA 13.x: the branch NVIDIA names instead of a version
    # A "full" verdict that rests on the GA floor while the build's bundled update is not
    # known and a later update of that CUDA needs a newer driver: the driver that rules it out.
    unverified_below: Optional[Version] = None


@record(frozen=True)
class FullFloor:
    """The driver from which a CUDA build is fully supported, and what that rests on."""

    driver: Optional[Version]
    branch: Optional[int]
    basis: str
    # GA floor used because the bundled update is unknown: the highest floor of that CUDA's
    # update releases, above the GA's (the build may bundle one of them)
    updates_up_to: Optional[Version] = None


def full_support_floor(
    tables: Tables,
    cuda: Version,
    os_name: str,
    torch: Optional[Version] = None,
    platform: Optional[str] = None,
) -> FullFloor:
    """The driver a build needs for full support: that of the CUDA *update* release it
    bundles when the tables know it (torch 2.9 cu130 bundles 13.0.2: 580.95.05, not the
    GA's 580.65.06), else the GA release's, said as such. For CUDA 13.x NVIDIA names a
    driver branch (13.4: R615) where it publishes no version; with neither, it is unknown."""
    toolkit = tables.toolkit(cuda)
    if toolkit is None:
        return FullFloor(None, None, f"CUDA {cuda} is not in the tables")
    windows = os_name == "Windows"
    variant = Variant.for_cuda(cuda)
    bundled = tables.bundled_update(torch, variant, platform or "") if platform else None
    driver: Optional[Version]
    if bundled is not None:
        update = toolkit.update(bundled.update)
        if update is not None:
            driver = update.windows if windows else update.linux
            what = f"CUDA {update.version} ({update.label}), the update torch {bundled.torch} {variant} bundles"
        elif bundled.update.micro == 0:
            driver = toolkit.windows if windows else toolkit.linux
            what = (
                f"CUDA {bundled.update} (GA), the release torch {bundled.torch} {variant} bundles"
            )
        else:
            driver = None
            what = f"CUDA {bundled.update}, the update torch {bundled.torch} {variant} bundles"
        if driver is not None:
            return FullFloor(driver, toolkit.branch, what)
        if toolkit.branch:
            return FullFloor(None, toolkit.branch, f"{what} (driver branch R{toolkit.branch})")
        return FullFloor(None, None, f"{what}: its driver is not known")
    ga = toolkit.windows if windows else toolkit.linux
    if ga is not None:
        floors = [u.windows if windows else u.linux for u in toolkit.updates]
        higher = any(f is None or f > ga for f in floors)
        caveat = "; the update this build bundles is not known and may need more" if higher else ""
        known = [f for f in floors if f is not None and f > ga]
        return FullFloor(
            ga, toolkit.branch, f"CUDA {cuda} GA{caveat}", max(known) if known else None
        )
    if toolkit.branch:
        return FullFloor(None, toolkit.branch, f"CUDA {cuda}: driver branch R{toolkit.branch}")
    return FullFloor(None, None, f"the driver CUDA {cuda} needs is not known")


def machine_driver_verdict(
    facts: Facts,
    tables: Tables,
    cuda: Version,
    torch: Optional[Version] = None,
    platform: Optional[str] = None,
) -> DriverVerdict:
    """:func:`driver_verdict` for this machine's driver (or NVML's CUDA version) and OS; on a
    Jetson, :func:`_tegra_verdict`."""
    if board(facts, tables):
        return _tegra_verdict(facts, tables, cuda, torch, platform)
    nv = facts.nvidia
    return driver_verdict(
        tables,
        cuda,
        nv.driver_version,
        facts.system.os,
        nv.cuda_driver_version,
        torch=torch,
        platform=platform,
    )


def _tegra_verdict(
    facts: Facts,
    tables: Tables,
    cuda: Version,
    torch: Optional[Version],
    platform: Optional[str],
) -> DriverVerdict:
    """A Jetson's driver, judged by the CUDA version it supports (tegra.tegra_cuda), never by
    its number, which follows L4T (Thor's 580.00 runs CUDA 13.0 builds): the desktop and
    server floors do not apply. A newer CUDA minor of the same major is minor-version
    compatibility there too (DRV002 names JetPack as the way to full support)."""
    supported, where = tegra_cuda(facts, tables)
    drv = facts.nvidia.driver_version
    numbered = f"driver {drv} is numbered by L4T" if drv else "its driver comes with JetPack"
    judged = driver_verdict(
        tables, cuda, None, facts.system.os, supported, torch=torch, platform=platform
    )
    if supported is None:
        basis = f"a Jetson ({numbered}): {where}"
        level = DriverLevel.UNKNOWN
    else:
        basis = f"a Jetson's driver supports CUDA {supported} ({where}; {numbered})"
        level = judged.level
    return replace(
        judged,
        level=level,
        full_from=None,
        minimum=None,
        full_branch=None,
        basis=basis,
        full_basis=f"on a Jetson, a JetPack whose driver supports CUDA {cuda.major}.{cuda.minor}",
    )


def driver_verdict(
    tables: Tables,
    cuda: Version,
    driver: Optional[str],
    os_name: str,
    cuda_driver: Optional[str] = None,
    torch: Optional[Version] = None,
    platform: Optional[str] = None,
) -> DriverVerdict:
    """Judge ``driver`` (or, without it, the CUDA version NVML says it supports) against a
    build of CUDA ``cuda``; ``torch`` and ``platform`` name the build, so that the floor of
    the update release it bundles applies where the tables know it."""
    need = full_support_floor(tables, cuda, os_name, torch, platform)
    full, branch = need.driver, need.branch
    floor = tables.minor_compat_floor(cuda, os_name)
    drv = parse_driver(driver)

    def make(
        level: DriverLevel, drv: Optional[Version], full: Optional[Version], basis: str
    ) -> DriverVerdict:
        return DriverVerdict(level, cuda, drv, full, floor, basis, need.basis, branch)

    if drv is not None:
        if full is not None and drv >= full:
            verdict = make(DriverLevel.FULL, drv, full, f"driver {drv} >= {full}")
            if need.updates_up_to is not None and drv < need.updates_up_to:
                verdict = replace(verdict, unverified_below=need.updates_up_to)
            return verdict
        if full is None and branch is not None and drv.major >= branch:
            return make(
                DriverLevel.FULL, drv, None, f"driver {drv} is of branch R{branch} or newer"
            )
        if floor is not None and drv >= floor:
            return make(
                DriverLevel.MINOR,
                drv,
                full,
                f"driver {drv} >= {floor}, the CUDA {cuda.major}.x floor",
            )
        if full is None and floor is None:
            return make(DriverLevel.UNKNOWN, drv, None, f"CUDA {cuda} is not in the tables")
        low = floor or full
        return make(DriverLevel.TOO_OLD, drv, full, f"driver {drv} < {low}")
    supported = parse_version(cuda_driver)
    if supported is not None:
        if Version(f"{supported.major}.{supported.minor}") >= Version(f"{cuda.major}.{cuda.minor}"):
            return make(DriverLevel.FULL, None, full, f"the driver supports CUDA {supported}")
        if supported.major == cuda.major and cuda.major >= 11:
            return make(DriverLevel.MINOR, None, full, f"the driver supports CUDA {supported}")
        return make(DriverLevel.TOO_OLD, None, full, f"the driver supports CUDA {supported}")
    return make(DriverLevel.UNKNOWN, None, full, "no driver version known")


def forward_compat_way_out(
    facts: Facts, tables: Tables, cuda: Version
) -> Tuple[Optional[str], str]:
    """NVIDIA forward compatibility as a way out for a driver too old for CUDA ``cuda``:
    (the cuda-compat package to install, or None; why not / a caveat, one line).

    Only on Linux, only when every NVIDIA GPU here is a data-center GPU the tables name, and
    only on a driver branch NVIDIA lists for that package. Consumer GPUs never qualify (the
    CUDA driver refuses them: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)."""
    fc = tables.forward_compat
    drv = parse_driver(facts.nvidia.driver_version)
    if fc is None:
        return None, "forward compatibility is not in the tables"
    if fc.linux_only and facts.system.family is not OsFamily.LINUX:
        return None, "forward compatibility (cuda-compat) exists on Linux only"
    names = [g.name or f"GPU {g.index}" for g in facts.nvidia.gpus]
    if not names:
        return None, "no GPU listed: whether forward compatibility applies is not known"
    segments = {n: tables.gpu_segment(n) for n in names}
    unknown = sorted(n for n, s in segments.items() if s is None)
    barred = sorted(
        n for n, s in segments.items() if s is not None and s not in fc.eligible_segments
    )
    if barred:
        return None, (
            f"forward compatibility (cuda-compat) is for data-center GPUs only, not {', '.join(barred)}"
        )
    if unknown:
        return None, (
            f"whether forward compatibility (cuda-compat) works on {', '.join(unknown)} is not known "
            "(NVIDIA allows it on data-center GPUs and select NGC Server Ready RTX SKUs only)"
        )
    if drv is None:
        return None, "the driver version is unknown: whether cuda-compat applies is not known"
    package = fc.package_for(cuda, drv.major)
    if package is None:
        return None, (
            f"NVIDIA lists no cuda-compat package for CUDA {cuda.major}.{cuda.minor} on the "
            f"R{drv.major} branch"
        )
    life = fc.branches.get(drv.major)
    caveat = _end_of_life_caveat(drv.major, life.end_of_life if life else None)
    return package.package, (
        f"install {package.package} (forward compatibility on this data-center GPU; "
        f"R{drv.major} is listed for it{caveat})"
    )


def _end_of_life_caveat(
    branch: int, end_of_life: Optional[str], today: Optional[date] = None
) -> str:
    """NVIDIA's end of life of a driver branch, in the tense today calls for: a branch whose
    support has ended still runs cuda-compat, but the user should know it gets no fixes."""
    if not end_of_life:
        return ""
    try:
        ends = datetime.strptime(end_of_life, "%B %Y").date()
    except ValueError:  # a date written in another form: quote it as NVIDIA gives it
        return f"; NVIDIA gives R{branch}'s end of life as {end_of_life}"
    now = today or date.today()
    if (now.year, now.month) > (ends.year, ends.month):
        return f"; R{branch} reached its end of life in {end_of_life}: it gets no more fixes"
    return f"; NVIDIA gives R{branch}'s end of life as {end_of_life}"
