"""The compatibility tables as typed, immutable values, with the questions code asks.

Code asks questions ("which CUDA variants did torch 2.7 publish?", "what driver does CUDA
12.8 need?", "does an sm_90 kernel run on a 9.0 GPU?"); the answers live in compat_tables/*.json.
Every comparison goes through ``packaging.version.Version``: driver 535.104.05 is (535, 104, 5).
"""

from __future__ import annotations

import functools
import re
from datetime import date
from pathlib import Path
from typing import Dict, FrozenSet, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import field, record
from ..values import ComputeCapability, Variant
from . import gpu_records as gpu
from .gpu_records import Family as Family
from .gpu_records import FirstDriver as FirstDriver
from .gpu_records import GpuKey
from .gpu_records import GpuModel as GpuModel
from .gpu_records import SassRule as SassRule
from .jetpack_records import JetPack as JetPack
from .message_records import MessageCase as MessageCase
from .message_records import MessageRule as MessageRule
from .origin import TablesOrigin as TablesOrigin
from .package_build_records import PackageBuilds as PackageBuilds
from .uv_backends import NO_UV_BACKENDS as NO_UV_BACKENDS
from .uv_backends import UvBackends as UvBackends
from .versions import PLATFORMS as PLATFORMS
from .versions import DriverVersion as DriverVersion
from .versions import Provenance as Provenance
from .versions import RowConfidence as RowConfidence
from .versions import capability_key as capability_key
from .versions import minor_of as minor_of
from .versions import parse_driver as parse_driver
from .versions import parse_version as parse_version


def _arch_field(machine: str, windows: bool) -> str:
    """The Release field holding the architecture lists of this platform's builds."""
    aarch64 = machine in ("aarch64", "arm64")
    return "arch_lists_windows" if windows else "arch_lists_aarch64" if aarch64 else "arch_lists"


@record(frozen=True)
class Release:
    minor: str
    versions: Tuple[Version, ...]
    released: Optional[str]
    python_min: Version
    python_max: Version
    platforms: FrozenSet[str]
    cuda_variants: Optional[Tuple[Variant, ...]]  # None: not known
    cuda_aarch64_variants: Optional[Tuple[Variant, ...]]
    rocm_variants: Optional[Tuple[Variant, ...]]
    xpu: Optional[bool]
    cpu: bool
    default_variant: Mapping[str, Variant]  # platform -> the build the default index serves
    torchvision: Mapping[str, Optional[str]]
    torchaudio: Mapping[str, Optional[str]]
    compatible: Mapping[str, SpecifierSet]
    arch_lists: Mapping[Variant, Tuple[str, ...]]
    arch_lists_aarch64: Mapping[Variant, Tuple[str, ...]]
    bundled: Mapping[Variant, Mapping[str, str]]
    provenance: Provenance
    # ROCm variant -> gfx targets of its wheels (get_arch_list() on ROCm); absent: not known
    gfx_lists: Mapping[Variant, Tuple[str, ...]] = field(default_factory=dict)
    # Per platform, where the release's facts do not hold for every platform. A platform missing
    # from python_by_platform is not checked: its range is the release's, not verified.
    python_by_platform: Mapping[str, Tuple[Version, Version]] = field(default_factory=dict)
    versions_by_platform: Mapping[str, Tuple[Version, ...]] = field(default_factory=dict)
    windows_cuda: Optional[Tuple[Variant, ...]] = None  # None: the Windows CUDA builds unknown
    windows_xpu: Optional[bool] = None
    arch_lists_windows: Mapping[Variant, Tuple[str, ...]] = field(default_factory=dict)
    pip_index: Mapping[str, str] = field(default_factory=dict)  # version -> index base URL
    # variant -> companion -> torch version -> companion version (None: no build of it for
    # this torch), where a build differs from the release's pairs (1.10 on ROCm 4.0.1)
    companions_by_variant: Mapping[Variant, Mapping[str, Mapping[str, Optional[str]]]] = field(
        default_factory=dict
    )
    confidence: RowConfidence = RowConfidence.RELEASE  # what the row was read from
    source_date: Optional[str] = None  # when its newest source was read (YYYY-MM-DD)

    @property
    def newest(self) -> Version:
        return max(self.versions)

    def python_range(self, platform: Optional[str] = None) -> Tuple[Version, Version]:
        """(min, max) Python of the wheels for ``platform``: its own range where the tables
        hold one, else the release's (see ``python_verified``)."""
        if platform is not None and platform in self.python_by_platform:
            return self.python_by_platform[platform]
        return self.python_min, self.python_max

    def python_verified(self, platform: str) -> bool:
        """Whether the tables hold the Python range of this platform's wheels."""
        return platform in self.python_by_platform

    def supports_python(self, python: Version, platform: Optional[str] = None) -> bool:
        """Whether wheels exist for this Python minor (3.13.1 counts as 3.13), on
        ``platform`` where given (its own range where known)."""
        low, high = self.python_range(platform)
        mm = Version(f"{python.major}.{python.minor}")
        return low <= mm <= high

    def versions_on(self, platform: str) -> Tuple[Version, ...]:
        """The patch versions with wheels for ``platform`` (1.9.1 has no macOS arm64 wheel)."""
        return self.versions_by_platform.get(platform, self.versions)

    def companion(
        self, name: str, torch: Version, variant: Optional[Variant] = None
    ) -> Optional[str]:
        """The torchvision/torchaudio version paired with this exact torch release (and
        build: a variant may have its own pairing)."""
        base = str(Version(torch.base_version))
        by_name = self.companions_by_variant.get(variant, {}) if variant is not None else {}
        own = by_name.get(name, {})
        if base in own:
            return own[base]  # None: no build of it for this torch and variant
        pairs = self.torchvision if name == "torchvision" else self.torchaudio
        return pairs.get(base)

    def arch_list(
        self, variant: Variant, machine: str = "x86_64", windows: bool = False
    ) -> Optional[Tuple[str, ...]]:
        """The architectures a build carries (None: not known); Windows and aarch64 builds
        have their own lists, for which a Linux x86_64 list never stands in."""
        return getattr(self, _arch_field(machine, windows)).get(variant)  # type: ignore[no-any-return]

    def arch_list_inferred(self, variant: Variant, machine: str, windows: bool) -> bool:
        """Whether ``arch_list``'s answer was inferred (from build scripts not tied to this
        release's branch), not read from the release: an answer built on it says so."""
        return self.provenance.inferred_at(_arch_field(machine, windows), variant)

    def gfx_list(self, variant: Variant) -> Optional[Tuple[str, ...]]:
        """The gfx targets the ``variant`` (rocm6.2) wheels carry; None when not known."""
        return self.gfx_lists.get(variant)


@record(frozen=True)
class ToolkitUpdate:
    """An update release of a CUDA minor (12.8.1 = "12.8 Update 1") and the driver it was
    released with, which can be higher than the GA's (570.124.06 against 570.26)."""

    version: Version
    label: str
    linux: Optional[DriverVersion]  # None: not published
    windows: Optional[DriverVersion]
    provenance: Provenance


@record(frozen=True)
class CondaBuild:
    """One ``conda install`` line of PyTorch's pages: a build on the ``pytorch`` channel."""

    platforms: Tuple[str, ...]
    variant: Variant  # cpu or cuXYZ
    package: Optional[str]  # cudatoolkit=11.3, pytorch-cuda=12.1, cpuonly; None (macOS)
    channels: Tuple[str, ...]  # in the command's order: pytorch first


@record(frozen=True)
class CondaRelease:
    """The conda view of one torch version: the builds PyTorch gave conda commands for."""

    torch: Version
    torchvision: Optional[str]
    torchaudio: Optional[str]
    covers: FrozenSet[str]  # platforms this record answers for; others are not known
    builds: Tuple[CondaBuild, ...]
    python_max: Optional[Version]  # a narrower Python range than the wheels (1.8.2 LTS)
    provenance: Provenance

    def builds_for(self, platform: str) -> Optional[Tuple[CondaBuild, ...]]:
        """The builds for a platform; () when there are none, None when not known."""
        if platform not in self.covers:
            return None
        return tuple(b for b in self.builds if platform in b.platforms)

    def companion(self, name: str) -> Optional[str]:
        return self.torchvision if name == "torchvision" else self.torchaudio


@record(frozen=True)
class CondaChannel:
    """PyTorch's own conda channel: the releases it published, and the last one."""

    name: str
    last: Version  # the last torch minor published there (2.5)
    releases: Tuple[CondaRelease, ...]  # oldest first
    provenance: Provenance

    def publishes(self, minor: str) -> bool:
        """Whether the channel published this torch minor at all (False after ``last``)."""
        return Version(minor) <= self.last

    def release(self, version: Version) -> Optional[CondaRelease]:
        base = Version(version.base_version)
        return next((r for r in self.releases if r.torch == base), None)


@record(frozen=True)
class Toolkit:
    cuda: Version
    linux: Optional[Version]  # driver of the GA release: full compatibility from here
    windows: Optional[Version]
    provenance: Provenance
    branch: Optional[int] = None  # CUDA 13.x: the corresponding driver branch (R580 -> 580)
    updates: Tuple[ToolkitUpdate, ...] = ()  # oldest first

    def update(self, version: Version) -> Optional[ToolkitUpdate]:
        return next((u for u in self.updates if u.version == version), None)


@record(frozen=True)
class BundledCuda:
    """The CUDA update release a torch build bundles (its CUDA runtime wheel pin)."""

    torch: str  # minor, 2.9
    variant: Variant  # cu130
    platforms: FrozenSet[str]
    cuda_runtime: str  # the nvidia-cuda-runtime version pinned: 13.0.96
    update: Version  # the toolkit release of that runtime: 13.0.2
    provenance: Provenance


@record(frozen=True)
class CompatPackage:
    """A forward-compatibility package and the driver branches NVIDIA lists it for."""

    package: str  # cuda-compat-13-0
    cuda: Version  # the newest CUDA it runs: 13.0
    branches: Tuple[int, ...]


@record(frozen=True)
class CompatBranch:
    branch: int
    designation: Optional[str]
    end_of_life: Optional[str]


@record(frozen=True)
class ForwardCompat:
    """NVIDIA forward compatibility: a cuda-compat package lets an older kernel driver of a
    listed branch run a newer CUDA, on Linux, on data-center GPUs only."""

    linux_only: bool
    eligible_segments: FrozenSet[str]
    packages: Tuple[CompatPackage, ...]
    branches: Mapping[int, CompatBranch]
    provenance: Provenance

    def package_for(self, cuda: Version, branch: int) -> Optional[CompatPackage]:
        """The smallest package that runs CUDA ``cuda`` on driver branch ``branch``: the one
        named for that CUDA minor, else the next newer one NVIDIA lists for the branch."""
        want = Version(minor_of(cuda))
        fits = [
            p
            for p in self.packages
            if p.cuda >= want and p.cuda.major == want.major and branch in p.branches
        ]
        return min(fits, key=lambda p: p.cuda) if fits else None


@record(frozen=True)
class MinorCompat:
    """Minor-version compatibility: every CUDA ``cuda_major``.x build runs from this driver."""

    cuda_major: int
    linux: Optional[Version]
    windows: Optional[Version]
    branch: Optional[int]
    provenance: Provenance


@record(frozen=True)
class Caveat:
    id: str
    text: str


@record(frozen=True)
class TableFile:
    name: str
    path: Path
    schema_version: int
    as_of: str
    builtin: bool


@record(frozen=True)
class LinkTable:
    """compat_tables/links.json: GB/s per direction (10^9 bytes/s, as nccl-tests count)."""

    as_of: str
    nvlink: Mapping[int, float]  # NVLink generation -> GB/s per link per direction
    pcie: Tuple[Tuple[float, int, float], ...]  # (GT/s, generation, GB/s per lane per direction)
    # NCCL's SHM transport: bytes of /dev/shm per connection by CPU architecture, and the
    # fewest channels a rank receives over (the /dev/shm floor of SYS001)
    nccl_shm_bytes: Mapping[str, int] = field(default_factory=dict)
    nccl_min_channels: int = 0

    def nccl_shm_connection(self, machine: Optional[str]) -> Optional[int]:
        """Bytes per connection on this architecture; on one the table does not name, the
        smallest it gives (a floor stays a floor); None without the record."""
        if not self.nccl_shm_bytes:
            return None
        return self.nccl_shm_bytes.get(machine or "", min(self.nccl_shm_bytes.values()))

    def pcie_lane(self, gts: float) -> Optional[Tuple[int, float]]:
        for rate, generation, per_lane in self.pcie:
            if abs(rate - gts) < 0.01:
                return generation, per_lane
        return None


@record(frozen=True)
class Tables:
    files: Mapping[str, TableFile]
    releases: Tuple[Release, ...]  # oldest first
    toolkits: Tuple[Toolkit, ...]  # oldest first
    minor_compat: Mapping[int, MinorCompat]
    caveats: Tuple[Caveat, ...]
    driver_branches: Mapping[int, str]  # branch -> CUDA version it reports
    families: Tuple[Family, ...]
    sass_rules: Mapping[str, SassRule]
    gpus: Tuple[GpuModel, ...]
    sources: Mapping[str, str]
    uv_torch_backends: UvBackends = NO_UV_BACKENDS  # what uv's --torch-backend accepts
    messages: Sequence[MessageRule] = ()  # the built-in ones compiled on first use (groups.py)
    first_drivers: Tuple[FirstDriver, ...] = ()  # per compute capability (cuda_driver.json)
    bundled_cuda: Tuple[BundledCuda, ...] = ()  # torch build -> CUDA update it bundles
    forward_compat: Optional[ForwardCompat] = None
    conda: Optional[CondaChannel] = None  # the pytorch channel's view (conda_pytorch.json)
    links: Optional[LinkTable] = None  # link bandwidths (links.json): the smoke's expected busbw
    jetpacks: Tuple[JetPack, ...] = ()  # L4T release -> JetPack and NVIDIA's wheels (jetpack.json)
    package_builds: PackageBuilds = PackageBuilds()  # what builds were compiled against
    origin: TablesOrigin = TablesOrigin()  # built-in, a --tables folder, or updated ones
    refresh_after_days: Optional[int] = None  # older than this: say so (torch_releases.json)

    # ---------------------------------------------------------------- torch

    def release(self, version: Version) -> Optional[Release]:
        minor = minor_of(version)
        return next((r for r in self.releases if r.minor == minor), None)

    @property
    def newest_release(self) -> Release:
        return self.releases[-1]

    def knows_torch(self, version: Version) -> bool:
        """False for a torch newer than the newest release in the tables."""
        newest = self.newest_release
        return Version(minor_of(version)) <= Version(newest.minor)

    # ---------------------------------------------------------------- CUDA and drivers

    def toolkit(self, cuda: Version) -> Optional[Toolkit]:
        return self._toolkit_by_minor.get((cuda.major, cuda.minor))

    @functools.cached_property
    def _toolkit_by_minor(self) -> Dict[Tuple[int, int], Toolkit]:
        # the first toolkit of each CUDA minor: every driver verdict asks, dozens a report
        return {(t.cuda.major, t.cuda.minor): t for t in reversed(self.toolkits)}

    def release_driver(self, cuda: Version, os_name: str) -> Optional[Version]:
        """The driver CUDA ``cuda`` was released with on this OS: full support from here."""
        toolkit = self.toolkit(cuda)
        if toolkit is None:
            return None
        return toolkit.windows if os_name == "Windows" else toolkit.linux

    def bundled_update(
        self, torch: Optional[Version], variant: Variant, platform: str
    ) -> Optional[BundledCuda]:
        """The CUDA update release torch ``torch``'s ``variant`` build bundles on ``platform``
        (linux-x86_64, ...); None when the tables do not know it."""
        if torch is None:
            return None
        minor = minor_of(torch)
        return next(
            (
                b
                for b in self.bundled_cuda
                if b.torch == minor and b.variant == variant and platform in b.platforms
            ),
            None,
        )

    def gpu_segment(self, gpu_name: str) -> Optional[str]:
        """The market segment the GPU table gives a name ("data center", "consumer",
        "workstation", "Jetson"); None for a name it does not know."""
        model = self._gpu_model(gpu_name)
        return model.segment or None if model else None

    def minor_compat_floor(self, cuda: Version, os_name: str) -> Optional[Version]:
        """The oldest driver that runs every CUDA ``cuda.major``.x build on this OS through
        minor-version compatibility. Where NVIDIA gives no exact floor for an OS (Windows,
        CUDA 13) it states the family floor as a driver branch, which holds on every OS."""
        compat = self.minor_compat.get(cuda.major)
        if compat is None:
            return None
        floor = compat.windows if os_name == "Windows" else compat.linux
        if floor is None and compat.branch:
            return DriverVersion(str(compat.branch))
        return floor

    def cuda_for_driver_branch(self, branch: int) -> Optional[str]:
        """CUDA version a driver branch reports; for an unlisted branch, the nearest below."""
        known = [b for b in self.driver_branches if b <= branch]
        return self.driver_branches[max(known)] if known else None

    @property
    def newest_driver_branch(self) -> int:
        return max(self.driver_branches)

    def first_driver(self, capability: ComputeCapability) -> Optional[FirstDriver]:
        """The first driver for GPUs of ``capability``; None when the tables do not say."""
        return next((f for f in self.first_drivers if f.capability == capability), None)

    # ---------------------------------------------------------------- GPUs

    def family(self, capability: ComputeCapability) -> Optional[Family]:
        for fam in self.families:
            if capability in fam.capabilities:
                return fam
        model = next((g for g in self.gpus if g.capability == capability), None)
        if model is not None:
            return next((f for f in self.families if f.name == model.family), None)
        return None

    def knows_capability(self, capability: ComputeCapability) -> bool:
        """Whether the tables know GPUs of this compute capability at all: a family lists it,
        a GPU model has it, or a rule says which devices its ``sm_XY`` runs on (8.7, Jetson
        Orin, is in no family's list but is sm_87 and three named boards)."""
        return (
            self.family(capability) is not None
            or any(g.capability == capability for g in self.gpus)
            or capability.sm in self.sass_rules
        )

    def sass_runs_on(self, arch: str, capability: ComputeCapability) -> bool:
        rule = self.sass_rules.get(arch) or gpu.sass_fallback_rule(arch)
        return rule is not None and rule.runs_on(capability)

    def capability_of(self, gpu_name: str) -> Optional[ComputeCapability]:
        """Compute capability of an NVIDIA GPU as NVML, nvidia-smi, lspci or a user names it.

        Those names add form factor and memory to the marketing name ("NVIDIA
        A100-SXM4-80GB", "Tesla V100-SXM2-16GB"): the longest table name whose
        words begin the reported name wins, word by word, so "A10" never matches
        "A100" and "RTX 3090 Ti" is not taken for an "RTX 3090". None for a name
        the table does not know (never a guess) and for an AMD GPU (see gfx_of).
        """
        model = self._gpu_model(gpu_name)
        return model.capability if model else None

    def gfx_of(self, gpu_name: str) -> Optional[str]:
        """LLVM target of an AMD GPU as rocm-smi, amd-smi, lspci or a user names it.

        A name that carries its target ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)",
        as collect_env prints it) gives that target; otherwise the table's, as in
        capability_of. None for an unknown name and for an NVIDIA GPU.
        """
        stated = re.search(r"\b(gfx[0-9a-f]{3,4})\b", gpu_name.lower())
        if stated:
            return stated.group(1)
        model = self._gpu_model(gpu_name)
        return model.gfx if model else None

    @functools.cached_property
    def _gpus_by_name(self) -> Dict[GpuKey, GpuModel]:
        """The GPU table by the words of each name, made at the first lookup (a lookup
        then asks a few keys instead of comparing every name of the table)."""
        return gpu.gpu_index(self.gpus)

    @functools.cached_property
    def jetson_only(self) -> FrozenSet[ComputeCapability]:
        """Compute capabilities the GPU table gives to Jetson boards and to nothing else (made
        once: every driver verdict asks it, a pasted report's dozens of times)."""
        return gpu.jetson_only_capabilities(self.gpus)

    @functools.cached_property
    def _reported(self) -> Dict[str, Optional[GpuModel]]:
        return {}  # reported name -> record: a pasted report's GPUs are asked dozens of times

    def _gpu_model(self, gpu_name: str) -> Optional[GpuModel]:
        return gpu.lookup_remembered(self._gpus_by_name, self._reported, gpu_name)

    def age_days(self, today: str) -> Dict[str, int]:
        now = date.fromisoformat(today)
        return {n: (now - date.fromisoformat(f.as_of)).days for n, f in self.files.items()}
