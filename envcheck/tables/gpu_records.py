"""What the tables know of GPUs: families, the first driver of each compute capability,
which devices SASS of each sm_XY runs on, and GPU models by the names users give them."""

from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, Mapping, Optional, Set, Tuple

from packaging.version import Version

from .._record import field, record
from ..values import Arch, ComputeCapability
from .versions import DriverVersion, Provenance


@record(frozen=True)
class FirstDriver:
    """The first driver that supports GPUs of a compute capability at all: an older one
    does not see the GPU, whatever CUDA a build uses."""

    capability: ComputeCapability
    branch: int  # R570 -> 570
    linux: Optional[DriverVersion]  # the first version of the branch; None: only the branch
    windows: Optional[DriverVersion]
    example: str
    provenance: Provenance

    def needed(self, os_name: str) -> str:
        exact = self.windows if os_name == "Windows" else self.linux
        return str(exact) if exact is not None else f"an R{self.branch} driver"

    def supports(self, driver: DriverVersion) -> bool:
        """False for a driver of an older branch: it cannot run the GPU. Within the first
        branch the recorded version is only the first known to *name* the GPU (an upper
        bound: 570.86.15 ran an RTX 5090 that 570.86.16 first names), so it is not judged."""
        return driver.major >= self.branch


@record(frozen=True)
class Family:
    name: str
    capabilities: Tuple[ComputeCapability, ...]
    first_cuda: Optional[Version]
    last_cuda_major: Optional[int]  # None: still supported
    last_driver_branch: Optional[int]  # None: still supported
    provenance: Provenance
    # A capability that came after its family's first toolkit (sm_86: CUDA 11.1, a year
    # after Ampere's sm_80 in 11.0): its own first CUDA.
    first_cuda_by_capability: Mapping[ComputeCapability, Version] = field(default_factory=dict)

    def first_cuda_of(self, capability: ComputeCapability) -> Optional[Version]:
        """The first CUDA toolkit that compiles for ``capability`` (None: not known)."""
        return self.first_cuda_by_capability.get(capability, self.first_cuda)


@record(frozen=True)
class SassRule:
    """Which devices SASS compiled for one ``sm_XY`` runs on."""

    only: Tuple[ComputeCapability, ...] = ()
    min: Optional[ComputeCapability] = None
    below: Optional[ComputeCapability] = None
    exclude: Tuple[ComputeCapability, ...] = ()

    def runs_on(self, cc: ComputeCapability) -> bool:
        if self.only:
            return cc in self.only
        if self.min is None or self.below is None or cc in self.exclude:
            return False
        return self.min <= cc < self.below


@record(frozen=True)
class GpuModel:
    name: str
    capability: Optional[ComputeCapability]  # NVIDIA GPUs; None for an AMD GPU
    family: str
    segment: str
    gfx: Optional[str] = None  # AMD LLVM target ("gfx942"); None for an NVIDIA GPU


def sass_fallback_rule(arch: str) -> Optional[SassRule]:
    """SASS of sm_XY runs on X.Y up to the next major (NVIDIA's general rule)."""
    parsed = Arch.maybe(arch)
    if parsed is None or parsed.suffix:
        return None
    cc = parsed.capability
    return SassRule(min=cc, below=ComputeCapability(cc.major + 1, 0))


# Words that vendors and users add or leave out: "NVIDIA GeForce RTX 3070" is "RTX 3070"
# (and "rtx3070"), "AMD Instinct MI300X" is "MI300X", "AMD Radeon RX 7900 XTX" is "RX 7900 XTX".
# "GRID" is the prefix a vGPU guest's driver gives its vGPU type ("GRID A100-40C"), and the
# brand of the GRID K1/K2/K520 boards, whose table names lose it the same way.
_GPU_NOISE = frozenset(
    {"nvidia", "tesla", "geforce", "corporation", "amd", "ati", "instinct", "radeon", "grid"}
)
# `nvidia-smi -L` lines: "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-...)"; MIG devices under
# them ("  MIG 3g.20gb Device 0: (UUID: MIG-...)") name no GPU.
_SMI_L = re.compile(r"^\s*GPU \d+:\s*|\s*\(UUID:[^)]*\)?\s*$")
# A vGPU type as NVIDIA's vGPU software names it: the board, letters it adds for a variant of
# the board (A100X, H100XM for SXM, H100L for NVL), and the profile (-40C, -16Q, -2B, -8A).
_VGPU = re.compile(r"^([a-z]*\d+)[a-z]{1,3} (\d+[abcq])$")


@functools.lru_cache(maxsize=1024)  # a report names its GPUs again and again
def normalise_gpu(name: str) -> str:
    text = re.sub(r"[^a-z0-9]+", " ", _SMI_L.sub("", name).lower())
    text = re.sub(r"\b(rtx|gtx|gt|mx|rx)(?=\d)", r"\1 ", text)  # rtx4090 -> rtx 4090
    text = re.sub(r"(?<=\d)(ti|super|xtx|xt)\b", r" \1", text)  # 3050ti -> 3050 ti
    return " ".join(w for w in text.split() if w not in _GPU_NOISE)


# Words that say which vendor a name is of: the table's AMD and NVIDIA names are indexed
# apart, so "AMD Radeon 840M Graphics" never reads as the GeForce 840M (both are "840m"
# once the vendors' words are dropped).
_AMD_WORDS = frozenset({"amd", "ati", "radeon", "instinct", "firepro"})
_NVIDIA_WORDS = frozenset({"nvidia", "geforce", "tesla", "quadro", "titan", "grid"})
_VENDORS = ("nvidia", "amd")
GpuKey = Tuple[str, Tuple[str, ...]]  # (vendor, the name's normalised words)


def vendor_of(name: str) -> Optional[str]:
    """ "amd" or "nvidia" when the name's words say so (one of them only), else None."""
    words = set(re.sub(r"[^a-z0-9]+", " ", name.lower()).split())
    amd, nvidia = bool(words & _AMD_WORDS), bool(words & _NVIDIA_WORDS)
    return None if amd == nvidia else "amd" if amd else "nvidia"


def gpu_index(gpus: Tuple[GpuModel, ...]) -> Dict[GpuKey, GpuModel]:
    """Each table name's vendor and words (normalised) -> the first GPU of the table with
    that name: what :func:`lookup_gpu` looks names up in, made once for the table."""
    index: Dict[GpuKey, GpuModel] = {}
    for gpu in gpus:
        words = tuple(normalise_gpu(gpu.name).split())
        if words:
            index.setdefault(("amd" if gpu.gfx else "nvidia", words), gpu)
    return index


def lookup_gpu(index: Mapping[GpuKey, GpuModel], name: str) -> Optional[GpuModel]:
    """The longest table name whose words begin ``name``'s (normalised), among the GPUs of
    the vendor the name says, or of either vendor when it says none; None when no name
    matches, or when both vendors' names match equally (never a guess)."""
    vendor = vendor_of(name)
    vendors = (vendor,) if vendor else _VENDORS
    wanted_text = normalise_gpu(name)
    wanted = tuple(wanted_text.split())
    for length in range(len(wanted), 0, -1):
        found = [m for m in (index.get((v, wanted[:length])) for v in vendors) if m is not None]
        if found:
            return found[0] if len(found) == 1 else None
    board = _VGPU.match(wanted_text)  # "h100xm 80c": the board is an H100
    return index.get(("nvidia", (board.group(1),))) if board and vendor != "amd" else None


def jetson_only_capabilities(gpus: Tuple[GpuModel, ...]) -> FrozenSet[ComputeCapability]:
    """Compute capabilities that the GPU table gives to Jetson boards and to nothing else."""
    segments: Dict[ComputeCapability, Set[str]] = {}
    for gpu in gpus:
        if gpu.capability is not None:
            segments.setdefault(gpu.capability, set()).add(gpu.segment)
    return frozenset(cc for cc, seen in segments.items() if seen == {"Jetson"})


def lookup_reported(index: Mapping[GpuKey, GpuModel], gpu_name: str) -> Optional[GpuModel]:
    """The table record for a reported name; lspci's "AD102 [GeForce RTX 4090] (rev a1)"
    is read by its bracket, and "[Radeon RX 7900 XT/7900 XTX]" only if every
    alternative names GPUs of one kind."""
    brackets = re.findall(r"\[([^\[\]]+)\]", gpu_name)
    if not brackets:
        return lookup_gpu(index, gpu_name)
    inside = brackets[-1]
    first, *rest = (alt.strip() for alt in inside.split("/"))
    stem = re.match(r"^\D*?(?=\s*\w*\d)", first)  # "Radeon RX " before "7900 XT"
    names = [first] + [
        (stem.group(0) + " " + alt) if stem and alt[:1].isdigit() else alt for alt in rest
    ]
    found = [m for m in (lookup_gpu(index, n) for n in names) if m]
    kinds = {(m.capability, m.gfx) for m in found}  # pci.ids names one device's products
    return found[0] if len(kinds) == 1 else None


MAX_REMEMBERED = 4096  # reported names a Tables keeps the record of (they come from pasted text)


def lookup_remembered(
    index: Mapping[GpuKey, GpuModel], known: Dict[str, Optional[GpuModel]], gpu_name: str
) -> Optional[GpuModel]:
    """:func:`lookup_reported`, remembered in ``known`` up to MAX_REMEMBERED names."""
    if gpu_name in known:
        return known[gpu_name]
    model = lookup_reported(index, gpu_name)
    if len(known) < MAX_REMEMBERED:
        known[gpu_name] = model
    return model
