"""The compatibility rules, as pure functions over Facts and Tables.

Both the checks ("is this machine's setup right?") and the install resolver
("what should be installed?") ask the same questions: can this driver run that
CUDA build, and does that build carry kernels for every GPU here. The answers
live here, once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import List, Optional, Sequence, Tuple

from packaging.version import Version

from . import builds
from .facts import Facts, RuntimeStatus, SystemFacts
from .tables.model import Tables, parse_driver, parse_version
from .values import Arch, ComputeCapability, Gfx, OsFamily, Platform, Variant

INDEX_URL = "https://download.pytorch.org/whl/"


def platform_key(system: SystemFacts) -> Optional[Platform]:
    """The wheel platform of a machine: linux-x86_64, macos-arm64, windows-x86_64, ..."""
    return Platform.of(system.os, system.machine)


def platform_of(facts: Facts) -> Optional[Platform]:
    return platform_key(facts.system)


def cuda_of_variant(variant: str) -> Optional[Version]:
    """cu128 -> 12.8, cu102 -> 10.2, cu130 -> 13.0 (Variant's parser; None for others)."""
    parsed = Variant.maybe(variant)
    return parsed.cuda if parsed else None


# --------------------------------------------------------------------------- facts


def torch_version(facts: Facts) -> Optional[Version]:
    return parse_version(facts.torch.version) if facts.torch.installed else None


def torch_variant(facts: Facts) -> Optional[Variant]:
    return facts.torch.variant


def has_amd_gpu(facts: Facts) -> bool:
    return bool(facts.amd.gpus) and facts.system.family is OsFamily.LINUX


def has_nvidia_gpu(facts: Facts) -> bool:
    """An NVIDIA GPU is (or should be) here: NVML lists one, or the driver's devices exist."""
    nv = facts.nvidia
    return (
        bool(nv.gpus)
        or "/dev/nvidia0" in nv.device_nodes
        or bool(nv.driver_version and nv.driver_version_source != "override" and nv.device_nodes)
    )


# --------------------------------------------------------------------------- driver


class DriverLevel(str, enum.Enum):
    """How well a driver runs a CUDA build: fully, through minor-version compatibility,
    not at all (too old), or not known to the tables."""

    FULL = "full"
    MINOR = "minor"
    TOO_OLD = "too_old"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


class CoverageLevel(str, enum.Enum):
    """How a build's arch list serves a GPU: native SASS, PTX the driver JIT-compiles,
    or nothing."""

    NATIVE = "native"
    PTX = "ptx"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


# --------------------------------------------------------------------------- architectures


@dataclass(frozen=True)
class ArchCoverage:
    """How a build's arch list serves one GPU: native, ptx (JIT), none, or unknown."""

    capability: ComputeCapability
    level: CoverageLevel
    arch: Optional[str]  # the sm_XY or compute_XY that serves it


def arch_coverage(
    tables: Tables, arch_list: Sequence[str], capability: ComputeCapability
) -> ArchCoverage:
    arches = [(a, Arch.maybe(a)) for a in arch_list]
    native = [
        text
        for text, arch in arches
        if arch is not None and not arch.is_ptx and tables.sass_runs_on(text, capability)
    ]
    if native:
        return ArchCoverage(capability, CoverageLevel.NATIVE, native[-1])
    ptx = [
        text
        for text, arch in arches
        if arch is not None and arch.is_ptx and arch.capability <= capability
    ]
    if ptx:
        return ArchCoverage(capability, CoverageLevel.PTX, ptx[-1])
    return ArchCoverage(capability, CoverageLevel.NONE, None)


def sm_name(capability: ComputeCapability) -> str:
    """8.9 -> sm_89."""
    return capability.sm


def gpu_capabilities(facts: Facts) -> List[Tuple[str, ComputeCapability]]:
    """(name, capability) of every NVIDIA GPU, from NVML, else as torch saw them."""
    known = [
        (g.name or f"GPU {g.index}", g.compute_capability)
        for g in facts.nvidia.gpus
        if g.compute_capability is not None
    ]
    if known:
        return known
    return [
        (d.name or f"cuda:{d.index}", d.capability)
        for d in facts.torch_runtime.devices
        if d.capability is not None
    ]


def toolkit_misses(
    facts: Facts, tables: Tables, cuda: Version
) -> List[Tuple[str, ComputeCapability, str]]:
    """(name, capability, the toolkits that build for it) of each NVIDIA GPU a CUDA ``cuda``
    toolkit cannot compile for: its family came after that toolkit (sm_120 needs 12.8) or
    was dropped by its major (Pascal after 12.x). A GPU whose family the tables do not hold
    is not judged here."""
    out = []
    for name, cc in gpu_capabilities(facts):
        family = tables.family(cc)
        if family is None:
            continue
        if family.first_cuda is not None and Version(f"{cuda.major}.{cuda.minor}") < Version(
            f"{family.first_cuda.major}.{family.first_cuda.minor}"
        ):
            out.append((name, cc, f"CUDA {family.first_cuda} or newer"))
        elif family.last_cuda_major is not None and cuda.major > family.last_cuda_major:
            out.append((name, cc, f"CUDA {family.last_cuda_major}.x or older"))
    return sorted(set(out))


@dataclass(frozen=True)
class TorchLabel:
    """How torch's files (``torch/version.py``) and its metadata (the dist-info) name the
    installed build, when they differ. ``agree``: True when they are one install (PyPI's
    wheels carry the plain version in their metadata while version.py keeps the build's
    label: ``2.11.0+cu130`` beside ``2.11.0``); False when two installs were written over
    each other; None when the tables cannot tell."""

    agree: Optional[bool]
    why: str


def torch_label(facts: Facts, tables: Optional[Tables]) -> Optional[TorchLabel]:
    """The one decision on torch's files against its metadata, for INS002/INS005 and the
    probe's text alike; None when they say the same (or one was not read). Without tables
    (or a release, or a platform they know) a labelled file beside a plain metadata version
    is not known either way: never a silent pass, never a confident error."""
    t = facts.torch
    files, meta = t.version, t.dist_version
    if not files or not meta or files == meta:
        return None
    try:
        fv, mv = Version(files), Version(meta)
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        return TorchLabel(False, f"the versions {files} and {meta} cannot be compared")
    if fv.public != mv.public:
        return TorchLabel(False, f"the versions differ ({fv.public} and {mv.public})")
    labelled = builds.variant(files)
    if mv.local is not None:
        same = fv.local is not None and labelled is not None and builds.variant(meta) == labelled
        return TorchLabel(
            same,
            f"one build labelled twice ({fv.local}, {mv.local})"
            if same
            else f"the builds differ ({fv.local or 'no label'} and {mv.local})",
        )
    platform = platform_of(facts)
    release = tables.release(fv) if tables is not None else None
    default = release.default_variant.get(str(platform)) if release and platform else None
    if default is None or labelled is None:
        where = f" for {platform}" if platform else ""
        return TorchLabel(
            None,
            f"whether PyPI's torch {fv.public}{where} is the {fv.local} build (its metadata "
            "would then carry no label) is not known to the tables",
        )
    if default == labelled:
        return TorchLabel(
            True,
            f"PyPI's torch {fv.public} for {platform} is the {default} build, and its metadata "
            "carries no label",
        )
    return TorchLabel(
        False,
        f"PyPI's torch {fv.public} for {platform} is the {default} build, not {fv.local}: the "
        "files are another build's",
    )


def driver_predates(facts: Facts, tables: Tables) -> List[Tuple[str, ComputeCapability, str]]:
    """(name, capability, driver needed) of each NVIDIA GPU the installed driver's branch
    is older than: such a driver does not support the GPU at all, whatever CUDA a build
    uses. A GPU whose first driver the tables do not hold is not judged here."""
    driver = parse_driver(facts.nvidia.driver_version)
    if driver is None:
        return []
    out = []
    for name, cc in gpu_capabilities(facts):
        first = tables.first_driver(cc)
        if first is not None and not first.supports(driver):
            out.append((name, cc, first.needed(facts.system.os)))
    return sorted(set(out))


def driver_drops(
    facts: Facts, tables: Tables
) -> List[Tuple[int, str, ComputeCapability, str, int]]:
    """(index, name, capability, family, last branch) of each NVIDIA GPU the installed
    driver's branch no longer supports (a Pascal GPU on R590): such a driver does not run
    it at all, whatever CUDA a build uses. A family without a last branch is not judged."""
    driver = parse_driver(facts.nvidia.driver_version)
    if driver is None:
        return []
    out = []
    for gpu in facts.nvidia.gpus:
        if gpu.compute_capability is None:
            continue
        family = tables.family(gpu.compute_capability)
        if family is None or family.last_driver_branch is None:
            continue
        if driver.major > family.last_driver_branch:
            name = gpu.name or f"GPU {gpu.index}"
            out.append(
                (gpu.index, name, gpu.compute_capability, family.name, family.last_driver_branch)
            )
    return out


def runtime_gfx_targets(facts: Facts) -> Optional[List[str]]:
    """The gfx targets (features dropped) a ROCm torch's get_arch_list() gave the deep
    probe; None when it did not run or gave CUDA architectures."""
    rt = facts.torch_runtime
    if rt.status != RuntimeStatus.OK or not rt.arch_list:
        return None
    targets = [a.target for a in rt.arch_list if isinstance(a, Gfx)]
    return targets if len(targets) == len(rt.arch_list) else None


def build_arch_list(facts: Facts, tables: Tables) -> Tuple[Optional[List[str]], str]:
    """The architectures the installed torch carries, and where that came from."""
    rt = facts.torch_runtime
    if rt.status == RuntimeStatus.OK and rt.arch_list:
        return [str(a) for a in rt.arch_list], "torch.cuda.get_arch_list()"
    version = parse_version(facts.torch.version)
    variant = Variant.of_build(
        facts.torch.version, facts.torch.cuda, facts.torch.hip, facts.torch.xpu
    )
    if version is None or variant is None:
        return None, "unknown build"
    release = tables.release(version)
    if release is None:
        return None, f"torch {version} is not in the tables"
    windows = facts.system.family is OsFamily.WINDOWS  # Windows builds have their own lists
    arches = release.arch_list(variant, facts.system.machine.lower(), windows)
    if arches is None:
        where = " on Windows" if windows else ""
        return None, f"the tables do not list the architectures of {release.minor} {variant}{where}"
    return list(arches), f"compat table for torch {release.minor} {variant}"
