"""NVIDIA Jetson boards, as the resolver needs to know them: their iGPU runs the CUDA that
JetPack (L4T) ships, and PyTorch's aarch64 CUDA wheels are SBSA builds (Grace: GH200,
GB200), not verified there (bitsandbytes-foundation/bitsandbytes#1941, rapidsai/cucim#527).
NVIDIA publishes its own torch wheels per JetPack release; envcheck has no table of those,
so it says where they are and claims no install command it cannot verify. The JTS check
(checks.jetson) says the same from this one place.

A board is a Jetson when the system says so (its device tree or L4T release, probes.system)
or when one of its GPUs is one: a name the GPU table files under the Jetson segment, or a
compute capability that only Jetson GPUs have in that table (5.3, 6.2, 7.2, 8.7, 11.0). The
second matters where the first is not visible: a container without /etc/nv_tegra_release, a
report pasted into ``diagnose``, a machine simulated with ENVCHECK_GPUS. Without it a Jetson
Orin got a data-centre aarch64 wheel whose architecture list was not even known."""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Set

from ..facts import Facts
from ..tables import Tables
from ..values import ComputeCapability

JETPACK_WHEELS = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def jetson_only(tables: Tables) -> FrozenSet[ComputeCapability]:
    """Compute capabilities that the GPU table gives to Jetson boards and to nothing else."""
    segments: Dict[ComputeCapability, Set[str]] = {}
    for gpu in tables.gpus:
        if gpu.capability is not None:
            segments.setdefault(gpu.capability, set()).add(gpu.segment)
    return frozenset(cc for cc, seen in segments.items() if seen == {"Jetson"})


def board(facts: Facts, tables: Tables) -> Optional[str]:
    """What makes this machine a Jetson, in words ("NVIDIA Jetson AGX Orin Developer Kit",
    "Orin, sm_87: a Jetson GPU"); None when nothing does."""
    if facts.system.jetson:
        return facts.system.jetson
    only = jetson_only(tables)
    for gpu in facts.nvidia.gpus:
        cc = gpu.compute_capability
        if gpu.name and tables.gpu_segment(gpu.name) == "Jetson":
            return f"{gpu.name}: a Jetson GPU"
        if cc is not None and cc in only:
            return f"{gpu.name or 'a GPU'}, {cc.sm}: only Jetson GPUs have it"
    return None


def no_command(board: str) -> str:
    """The resolver's conflict on a Jetson: why it gives no CUDA install command."""
    return (
        f"NVIDIA Jetson ({board}): PyTorch's aarch64 CUDA wheels are SBSA "
        "builds, not verified on Jetson; envcheck knows no install command for this board"
    )
