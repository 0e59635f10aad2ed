"""The compatibility rules, as pure functions over Facts and Tables.

Both the checks ("is this machine's setup right?") and the install resolver
("what should be installed?") ask the same questions: can this driver run that
CUDA build, and does that build carry kernels for every GPU here. The answers
live here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from packaging.version import Version

from . import builds
from .facts import Facts, SystemFacts
from .tables.model import Tables, parse_driver, parse_version
from .values import Arch, ComputeCapability, Platform, Variant

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
    t = facts.torch
    return builds.variant(t.version, t.cuda, t.hip, t.xpu) if t.installed else None


def has_amd_gpu(facts: Facts) -> bool:
    return bool(facts.amd.gpus) and facts.system.os == "Linux"


def has_nvidia_gpu(facts: Facts) -> bool:
    """An NVIDIA GPU is (or should be) here: NVML lists one, or the driver's devices exist."""
    nv = facts.nvidia
    return (
        bool(nv.gpus)
        or "/dev/nvidia0" in nv.device_nodes
        or bool(nv.driver_version and nv.driver_version_source != "override" and nv.device_nodes)
    )


# --------------------------------------------------------------------------- driver


@dataclass(frozen=True)
class DriverVerdict:
    """Can a driver run a CUDA build? ``level`` is full, minor, too_old or unknown."""

    level: str
    cuda: Version
    driver: Optional[Version]
    full_from: Optional[Version]  # driver of the CUDA release itself: everything works
    minimum: Optional[Version]  # minor-version-compatibility floor of the CUDA major
    basis: str  # one line: what the verdict rests on


def driver_verdict(
    tables: Tables,
    cuda: Version,
    driver: Optional[str],
    os_name: str,
    cuda_driver: Optional[str] = None,
) -> DriverVerdict:
    """Judge ``driver`` (or, without it, the CUDA version NVML says it supports)."""
    full = tables.release_driver(cuda, os_name)
    floor = tables.minor_compat_floor(cuda, os_name)
    drv = parse_driver(driver)
    if drv is not None:
        if full is not None and drv >= full:
            return DriverVerdict("full", cuda, drv, full, floor, f"driver {drv} >= {full}")
        if floor is not None and drv >= floor:
            return DriverVerdict(
                "minor",
                cuda,
                drv,
                full,
                floor,
                f"driver {drv} >= {floor}, the CUDA {cuda.major}.x floor",
            )
        if full is None and floor is None:
            return DriverVerdict(
                "unknown", cuda, drv, None, None, f"CUDA {cuda} is not in the tables"
            )
        need = floor or full
        return DriverVerdict("too_old", cuda, drv, full, floor, f"driver {drv} < {need}")
    supported = parse_version(cuda_driver)
    if supported is not None:
        if Version(f"{supported.major}.{supported.minor}") >= Version(f"{cuda.major}.{cuda.minor}"):
            return DriverVerdict(
                "full", cuda, None, full, floor, f"the driver supports CUDA {supported}"
            )
        if supported.major == cuda.major and cuda.major >= 11:
            return DriverVerdict(
                "minor", cuda, None, full, floor, f"the driver supports CUDA {supported}"
            )
        return DriverVerdict(
            "too_old", cuda, None, full, floor, f"the driver supports CUDA {supported}"
        )
    return DriverVerdict("unknown", cuda, None, full, floor, "no driver version known")


# --------------------------------------------------------------------------- architectures


@dataclass(frozen=True)
class ArchCoverage:
    """How a build's arch list serves one GPU: native, ptx (JIT), none, or unknown."""

    capability: str
    level: str
    arch: Optional[str]  # the sm_XY or compute_XY that serves it


def arch_coverage(tables: Tables, arch_list: Sequence[str], capability: str) -> ArchCoverage:
    native = [a for a in arch_list if a.startswith("sm_") and tables.sass_runs_on(a, capability)]
    if native:
        return ArchCoverage(capability, "native", native[-1])
    want = ComputeCapability.parse(capability)
    ptx = [
        a
        for a in arch_list
        if (arch := Arch.maybe(a)) is not None and arch.is_ptx and arch.capability <= want
    ]
    if ptx:
        return ArchCoverage(capability, "ptx", ptx[-1])
    return ArchCoverage(capability, "none", None)


def sm_name(capability: str) -> str:
    """8.9 -> sm_89."""
    return ComputeCapability.parse(capability).sm


def gpu_capabilities(facts: Facts) -> List[Tuple[str, str]]:
    """(name, capability) of every NVIDIA GPU, from NVML, else as torch saw them."""
    gpus = [(g.name or f"GPU {g.index}", g.compute_capability) for g in facts.nvidia.gpus]
    known = [(n, c) for n, c in gpus if c and ComputeCapability.maybe(c)]
    if known:
        return known
    rt = facts.torch_runtime
    devices = [(d.name or f"cuda:{d.index}", d.capability) for d in rt.devices]
    return [(n, c) for n, c in devices if c and ComputeCapability.maybe(c)]


def driver_predates(facts: Facts, tables: Tables) -> List[Tuple[str, str, str]]:
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


def build_arch_list(facts: Facts, tables: Tables) -> Tuple[Optional[List[str]], str]:
    """The architectures the installed torch carries, and where that came from."""
    rt = facts.torch_runtime
    if rt.status == "ok" and rt.arch_list:
        return list(rt.arch_list), "torch.cuda.get_arch_list()"
    version = parse_version(facts.torch.version)
    variant = builds.variant(
        facts.torch.version, facts.torch.cuda, facts.torch.hip, facts.torch.xpu
    )
    if version is None or variant is None:
        return None, "unknown build"
    release = tables.release(version)
    if release is None:
        return None, f"torch {version} is not in the tables"
    windows = facts.system.os == "Windows"  # Windows builds have their own lists
    arches = release.arch_list(str(variant), facts.system.machine.lower(), windows)
    if arches is None:
        where = " on Windows" if windows else ""
        return None, f"the tables do not list the architectures of {release.minor} {variant}{where}"
    return list(arches), f"compat table for torch {release.minor} {variant}"
