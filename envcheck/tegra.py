"""Is this an NVIDIA Jetson (Tegra) board, which JetPack does it run, and what does its
driver support: the board questions the checks, the driver verdict and the resolver ask.

A board is a Jetson when the system says so (its device tree or L4T release, probes.system)
or when one of its GPUs is one: a name the GPU table files under the Jetson segment, or a
compute capability that only Jetson GPUs have in that table (5.3, 6.2, 7.2, 8.7, 11.0). The
second matters where the first is not visible: a container without /etc/nv_tegra_release, a
report pasted into ``diagnose``, a machine simulated with ENVCHECK_GPUS.

A Jetson's driver is part of its L4T release and numbered on its own: Thor on JetPack 7
reports driver 580.00 with CUDA 13.0 and runs torch 2.10.0+cu130 (vllm-project/vllm#34470),
while the desktop and server table says CUDA 13.0 needs 580.65.06. So a Jetson's driver is
judged by the CUDA version it reports (or, unreported, the CUDA its JetPack ships), never by
its number (:func:`tegra_cuda`)."""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Tuple

from .facts import Facts, GpuFacts
from .tables import Tables
from .tables.jetpack_records import JetPack, jetpack_for
from .values import ComputeCapability

# Where NVIDIA publishes its torch wheels for each JetPack release (the fix on a Jetson whose
# JetPack needs them: the checks and the resolver say the same).
JETPACK_WHEELS = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def jetson_only(tables: Tables) -> FrozenSet[ComputeCapability]:
    """Compute capabilities that the GPU table gives to Jetson boards and to nothing else."""
    return tables.jetson_only


def jetson_gpus(facts: Facts, tables: Tables) -> List[GpuFacts]:
    """This machine's GPUs that are Jetson GPUs: named so by the GPU table, or of a
    capability only Jetsons have."""
    only = jetson_only(tables) if facts.nvidia.gpus else frozenset()
    return [
        g
        for g in facts.nvidia.gpus
        if (g.name and tables.gpu_segment(g.name) == "Jetson") or g.compute_capability in only
    ]


def board(facts: Facts, tables: Tables) -> Optional[str]:
    """What makes this machine a Jetson, in words ("NVIDIA Jetson AGX Orin Developer Kit",
    "Orin, sm_87: a Jetson GPU"); None when nothing does."""
    if facts.system.jetson:
        return facts.system.jetson
    gpus = jetson_gpus(facts, tables)
    if not gpus:
        return None
    cc = gpus[0].compute_capability
    return f"{gpus[0].name or 'a GPU'}{f', {cc.sm}' if cc else ''}: a Jetson GPU"


def jetpack(facts: Facts, tables: Tables) -> Optional[JetPack]:
    """The JetPack release this board runs, from its L4T release; None when not known."""
    return jetpack_for(tables.jetpacks, facts.system.l4t)


def needs_nvidia_wheels(facts: Facts, tables: Tables) -> Optional[str]:
    """The board, when this is a Jetson whose GPU runs JetPack's own CUDA (PyTorch's wheels
    are not for it); None on any other machine and on a Jetson of the unified CUDA 13 Arm
    toolkit (JetPack 7: Thor). With the L4T release unknown, a GPU that only SBSA JetPacks
    run (Thor's) says SBSA; any other Jetson GPU is taken to run JetPack's CUDA."""
    found = board(facts, tables)
    if not found:
        return None
    release = jetpack(facts, tables)
    if release is not None:
        return None if release.sbsa else found
    gpus = [g.compute_capability for g in jetson_gpus(facts, tables)]
    runs_on = [j for j in tables.jetpacks if any(g in j.gpus for g in gpus)]
    if gpus and runs_on and all(j.sbsa for j in runs_on):
        return None
    return found


def tegra_cuda(facts: Facts, tables: Tables) -> Tuple[Optional[str], str]:
    """On a Jetson: the CUDA version its driver supports and where that comes from (the
    driver's own report, else the CUDA of its JetPack release); (None, why) when neither is
    known. Only meaningful where :func:`board` says this is a Jetson."""
    if facts.nvidia.cuda_driver_version:
        return facts.nvidia.cuda_driver_version, "as its driver reports"
    release = jetpack(facts, tables)
    if release is not None:
        return release.cuda, f"the CUDA of JetPack {release.jetpack}"
    return None, "neither its driver's CUDA version nor its JetPack release is known"
