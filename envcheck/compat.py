"""The compatibility rules, as pure functions over Facts and Tables.

Both the checks ("is this machine's setup right?") and the install resolver
("what should be installed?") ask the same questions: can this driver run that
CUDA build, and does that build carry kernels for every GPU here. The answers
live here, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from packaging.version import Version

from . import builds
from .facts import Facts, SystemFacts
from .tables.model import Tables, parse_driver, parse_version

INDEX_URL = "https://download.pytorch.org/whl/"
_CAPABILITY = re.compile(r"^\d{1,2}\.\d$")


def platform_key(system: SystemFacts) -> Optional[str]:
    """The wheel platform of a machine: linux-x86_64, macos-arm64, windows-x86_64, ..."""
    machine = system.machine.lower()
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
        machine
    )
    if system.os == "Linux" and arch:
        return f"linux-{arch}"
    if system.os == "Darwin" and arch:
        return "macos-arm64" if arch == "aarch64" else "macos-x86_64"
    if system.os == "Windows" and arch == "x86_64":
        return "windows-x86_64"
    return None


def cuda_of_variant(variant: str) -> Optional[Version]:
    """cu128 -> 12.8, cu102 -> 10.2, cu130 -> 13.0."""
    if not variant.startswith("cu") or not variant[2:].isdigit() or len(variant) < 4:
        return None
    digits = variant[2:]
    return Version(f"{digits[:-1]}.{digits[-1]}")


# --------------------------------------------------------------------------- facts


def torch_version(facts: Facts) -> Optional[Version]:
    return parse_version(facts.torch.version) if facts.torch.installed else None


def torch_variant(facts: Facts) -> Optional[str]:
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
    windows = os_name == "Windows"
    toolkit = tables.toolkit(cuda)
    compat = tables.minor_compat.get(cuda.major)
    full = (toolkit.windows if windows else toolkit.linux) if toolkit else None
    floor = (compat.windows if windows else compat.linux) if compat else None
    drv = parse_driver(driver)
    if drv is not None and floor is None and compat is not None and compat.branch:
        # No exact floor published for this OS (Windows, CUDA 13): NVIDIA states the
        # family floor as a driver branch, which holds on every OS.
        floor = parse_driver(str(compat.branch))
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
        if (supported.major, supported.minor) >= (cuda.major, cuda.minor):
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
    want = sm_number(capability)
    ptx = [
        a
        for a in arch_list
        if a.startswith("compute_") and int(a.split("_")[1].rstrip("af")) <= want
    ]
    if ptx:
        return ArchCoverage(capability, "ptx", ptx[-1])
    return ArchCoverage(capability, "none", None)


def sm_number(capability: str) -> int:
    major, _, minor = capability.partition(".")
    return int(major) * 10 + int(minor or 0)


def sm_name(capability: str) -> str:
    return f"sm_{sm_number(capability)}"


def gpu_capabilities(facts: Facts) -> List[Tuple[str, str]]:
    """(name, capability) of every NVIDIA GPU, from NVML, else as torch saw them."""
    gpus = [(g.name or f"GPU {g.index}", g.compute_capability) for g in facts.nvidia.gpus]
    known = [(n, c) for n, c in gpus if c and _CAPABILITY.match(c)]
    if known:
        return known
    rt = facts.torch_runtime
    devices = [(d.name or f"cuda:{d.index}", d.capability) for d in rt.devices]
    return [(n, c) for n, c in devices if c and _CAPABILITY.match(c)]


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
    arches = release.arch_list(variant, facts.system.machine.lower())
    if arches is None:
        return None, f"the tables do not list the architectures of {release.minor} {variant}"
    return list(arches), f"compat table for torch {release.minor} {variant}"


def uses_default_index(
    version: Version, variant: str, platform: Optional[str], tables: Tables
) -> bool:
    """Whether PyTorch's install page gives the plain default-index command.

    It does on macOS, and up to 2.0 for the default CUDA of Linux x86_64; from 2.1
    it gives ``--index-url`` for every Linux and Windows variant, even the one PyPI
    also serves (an explicit index cannot pick another variant).
    """
    if (platform or "").startswith("macos"):
        return True
    release = tables.release(version)
    default = release.default_variant.get(platform or "") if release else None
    return variant == default and platform == "linux-x86_64" and version < Version("2.1")


def install_command(version: Version, variant: str, platform: Optional[str], tables: Tables) -> str:
    """The pip command for torch alone (checks' fixes; `envcheck install` adds companions)."""
    pin = f"torch=={version}"
    if uses_default_index(version, variant, platform, tables):
        return f"pip install {pin}"
    return f"pip install {pin} --index-url {INDEX_URL}{variant}"


def best_cuda_variant(
    facts: Facts, tables: Tables, version: Version
) -> Tuple[Optional[str], List[str]]:
    """The newest CUDA variant of a torch release this driver runs with kernels for every GPU.

    Returns (variant or None, reasons). A small form of the install resolver:
    enough for a check to name the fix.
    """
    release = tables.release(version)
    platform = platform_key(facts.system)
    if release is None:
        return None, [f"torch {version} is not in the tables"]
    variants = (
        release.cuda_aarch64_variants if platform == "linux-aarch64" else release.cuda_variants
    )
    reasons: List[str] = []
    caps = gpu_capabilities(facts)
    for variant in sorted(
        variants or [], key=lambda v: cuda_of_variant(v) or Version("0"), reverse=True
    ):
        cuda = cuda_of_variant(variant)
        if cuda is None:
            continue
        verdict = driver_verdict(
            tables,
            cuda,
            facts.nvidia.driver_version,
            facts.system.os,
            facts.nvidia.cuda_driver_version,
        )
        if verdict.level == "too_old":
            reasons.append(f"{variant}: {verdict.basis}")
            continue
        arches = release.arch_list(variant, facts.system.machine.lower())
        if arches is not None:
            missing = [
                f"{name} ({sm_name(cc)})"
                for name, cc in caps
                if arch_coverage(tables, arches, cc).level == "none"
            ]
            if missing:
                reasons.append(f"{variant}: no kernels for {', '.join(missing)}")
                continue
        return variant, reasons
    return None, reasons


def nearest_working_release(
    facts: Facts, tables: Tables, below: Optional[Version] = None
) -> Optional[Tuple[Version, str]]:
    """The newest torch (older than ``below``) with a wheel for this Python and platform
    and a CUDA variant this driver runs with kernels for every GPU."""
    py = parse_version(facts.python.version)
    platform = platform_key(facts.system)
    for release in reversed(tables.releases):
        if below is not None and Version(release.minor) >= Version(f"{below.major}.{below.minor}"):
            continue
        if py is None or not release.supports_python(py) or platform not in release.platforms:
            continue
        variant, _ = best_cuda_variant(facts, tables, release.newest)
        if variant:
            return release.newest, variant
    return None


def driver_needed(facts: Facts, tables: Tables, version: Version) -> Optional[Tuple[str, str]]:
    """(variant, minimum driver) of the newest variant of ``version`` with kernels for every
    GPU: the driver upgrade that would make it work."""
    release = tables.release(version)
    if release is None:
        return None
    caps = gpu_capabilities(facts)
    windows = facts.system.os == "Windows"
    for variant in sorted(
        release.cuda_variants or [], key=lambda v: cuda_of_variant(v) or Version("0"), reverse=True
    ):
        cuda = cuda_of_variant(variant)
        arches = release.arch_list(variant, facts.system.machine.lower())
        if cuda is None or arches is None:
            continue
        if any(arch_coverage(tables, arches, cc).level == "none" for _, cc in caps):
            continue
        compat = tables.minor_compat.get(cuda.major)
        floor = (compat.windows if windows else compat.linux) if compat else None
        if floor is not None:
            return variant, str(floor)
    return None
