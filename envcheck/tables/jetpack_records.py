"""What the tables know of NVIDIA Jetson's JetPack releases (jetpack.json): the L4T releases
each covers, the CUDA and Python it ships, and where NVIDIA's torch wheels for it are. Read
by tables.read_jetpack; asked by envcheck.tegra and install.jetson."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from packaging.version import Version

from .._record import record
from ..values import ComputeCapability, Variant
from .versions import Provenance


@record(frozen=True)
class JetPackTorch:
    """A torch NVIDIA's index for a JetPack holds, and the torchvision built with it."""

    torch: str
    torchvision: Optional[str]
    seen: str  # when it was seen there ("2025-09"), by the record's sources
    sources: Tuple[str, ...]


@record(frozen=True)
class JetPackWheel:
    """The newest wheel NVIDIA built for a JetPack without an index: where it is."""

    torch: Optional[str]  # None where only its folder is known
    python: str
    where: str  # the wheel's URL, or the page or folder that lists it


@record(frozen=True)
class JetPack:
    jetpack: str  # "6.1-6.2.1"
    gpus: Tuple[ComputeCapability, ...]  # the Jetson GPUs it runs on
    l4t_min: Version
    l4t_below: Version
    cuda: str
    python: str  # the only Python NVIDIA's wheels for it are built for
    sbsa: bool  # runs the unified CUDA 13 Arm toolkit: PyTorch's own aarch64 wheels apply
    index: Optional[str]  # NVIDIA's pip index for it (the whole URL pip takes)
    variant: Optional[Variant]  # the CUDA build that index serves
    torch: Tuple[JetPackTorch, ...]  # newest first
    wheel: Optional[JetPackWheel]
    provenance: Provenance

    def covers(self, l4t: Version) -> bool:
        return self.l4t_min <= l4t < self.l4t_below


def jetpack_for(jetpacks: Sequence[JetPack], l4t: Optional[str]) -> Optional[JetPack]:
    """The JetPack an L4T release ("36.4.3") belongs to; None for none or a mangled one."""
    try:
        version = Version(l4t or "")
    except ValueError:
        return None
    return next((j for j in jetpacks if j.covers(version)), None)
