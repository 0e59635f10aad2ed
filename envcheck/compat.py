"""The compatibility rules, as pure functions over Facts and Tables.

Both the checks ("is this machine's setup right?") and the install resolver
("what should be installed?") ask the same questions: can this driver run that
CUDA build (driver_support.py), and does that build carry kernels for every GPU
here (this module). The answers live in those two places, once.
"""

from __future__ import annotations

import enum
from typing import List, Optional, Sequence, Tuple

from packaging.version import Version

from . import builds
from ._record import record
from .facts import Facts, RuntimeStatus, SystemFacts
from .tables.model import Tables, parse_driver, parse_version
from .values import Arch, ComputeCapability, Gfx, OsFamily, Platform, Variant

INDEX_URL = "https://download.pytorch.org/whl/"


def platform_key(system: SystemFacts) -> Optional[Platform]:
    """The wheel platform of a machine: linux-x86_64, macos-arm64, windows-x86_64, ..."""
    return Platform.of(system.os, system.machine)


def platform_of(facts: Facts) -> Optional[Platform]:
    return platform_key(facts.system)


def platform_name(facts: Facts) -> Optional[str]:
    """The platform as the tables name it ("linux-x86_64"); None when not known."""
    platform = platform_of(facts)
    return str(platform) if platform else None


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


# --------------------------------------------------------------------------- architectures


class CoverageLevel(str, enum.Enum):
    """How a build's arch list serves a GPU: native SASS, PTX the driver JIT-compiles,
    or nothing."""

    NATIVE = "native"
    PTX = "ptx"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


@record(frozen=True)
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
        first = family.first_cuda_of(cc)
        if first is not None and Version(f"{cuda.major}.{cuda.minor}") < Version(
            f"{first.major}.{first.minor}"
        ):
            out.append((name, cc, f"CUDA {first} or newer"))
        elif family.last_cuda_major is not None and cuda.major > family.last_cuda_major:
            out.append((name, cc, f"CUDA {family.last_cuda_major}.x or older"))
    return sorted(set(out))


@record(frozen=True)
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
