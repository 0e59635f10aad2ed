"""Limits of the system and container: /dev/shm, memory, CPUs, disk, WSL, a GPU container
started without its GPUs; macOS MPS."""

from __future__ import annotations

from typing import List

from .._text import size
from ..containers import FIX as CONTAINER_FIX
from ..containers import started_without_gpus
from ..facts import Facts, RuntimeStatus
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..values import OsFamily

GiB = 1024**3
SHM_WARN = 1 * GiB
DISK_WARN = 5 * GiB


def nccl_shm_floor(facts: Facts, tables: Tables) -> int:
    """The least /dev/shm NCCL needs on this machine: 0 where it will not use its SHM transport
    (one GPU, or every pair talks P2P), else GPUs x channels x one connection (links.json,
    nccl_shm: the size NCCL's own "failed to extend ... to 9637892 bytes" names). Pairs NVML
    did not describe count as SHM: unknown is not read as P2P."""
    gpus = facts.nvidia.gpus
    link = tables.links
    connection = link.nccl_shm_connection(facts.system.machine) if link else None
    if len(gpus) < 2 or connection is None or link is None:
        return 0
    pairs = facts.nvidia.pairs
    if pairs and all(p.path == "NV" or p.p2p_read == "ok" for p in pairs):
        return 0
    return len(gpus) * link.nccl_min_channels * connection


def check(facts: Facts, tables: Tables) -> List[Finding]:
    findings = _shm(facts, tables)
    findings += _limits(facts)
    findings += _disks(facts)
    findings += _wsl1(facts)
    findings += _container_without_gpus(facts)
    findings += _mps(facts)
    return findings


def _shm(facts: Facts, tables: Tables) -> List[Finding]:
    """SYS001: a /dev/shm too small for DataLoader workers and NCCL."""
    s = facts.system
    nccl_need = nccl_shm_floor(facts, tables)
    if s.shm_total is None or s.shm_total >= max(SHM_WARN, nccl_need):
        return []
    docker = s.container in ("docker", "podman", "containerd")
    fix = (
        "Start the container with `--shm-size=8g` (or `--ipc=host`)"
        if docker
        else "Give /dev/shm more space"
        if s.container != "kubernetes"
        else "Mount an emptyDir with `medium: Memory` at /dev/shm"
    )
    # Docker's 64 MB: certain to fail, not a risk
    tiny = s.shm_total < 256 * 1024**2 or s.shm_total < nccl_need
    outcome = "will fail" if tiny else "may run out of it"
    need = (
        [
            f"NCCL through host memory needs at least {size(nccl_need)} for "
            f"{len(facts.nvidia.gpus)} GPUs ({size(nccl_need // len(facts.nvidia.gpus))} "
            "of buffers per rank)"
        ]
        if nccl_need
        else []
    )
    return [
        RULES["SYS001"](
            f"/dev/shm is {size(s.shm_total)}: DataLoader workers and NCCL {outcome}",
            [
                f"/dev/shm {size(s.shm_total)}, {size(s.shm_free)} free",
                f"container: {s.container or 'none detected'}",
                *need,
            ],
            fix + '. With a small /dev/shm, DataLoader workers die with "Bus error" and NCCL '
            "falls back or fails; 64 MB is Docker's default.",
            severity="error" if tiny else None,
        )
    ]


def _limits(facts: Facts) -> List[Finding]:
    """SYS002 and SYS003: the cgroup's memory limit and CPU quota."""
    s = facts.system
    findings = []
    if s.cgroup.memory_limit and s.memory_total and s.cgroup.memory_limit < s.memory_total:
        findings.append(
            RULES["SYS002"](
                f"This process may use {size(s.cgroup.memory_limit)} of the machine's {size(s.memory_total)}",
                [f"cgroup v{s.cgroup.version} memory limit {size(s.cgroup.memory_limit)}"],
                "Size batches and DataLoader workers for the limit: going over it gets the job "
                "OOM-killed without a Python error.",
            )
        )
    cpus = s.cpus_affinity or s.cpus_logical
    if s.cgroup.cpu_quota and cpus and s.cgroup.cpu_quota < cpus:
        workers = max(1, int(s.cgroup.cpu_quota))
        findings.append(
            RULES["SYS003"](
                f"This process may use {s.cgroup.cpu_quota:g} CPUs of the {cpus} it sees",
                [f"cgroup CPU quota {s.cgroup.cpu_quota:g}", f"os.cpu_count() {s.cpus_logical}"],
                f"Use at most {workers} DataLoader workers and set OMP_NUM_THREADS={workers}: "
                "tools that read os.cpu_count() oversubscribe the quota.",
            )
        )
    return findings


def _disks(facts: Facts) -> List[Finding]:
    """SYS004: a disk torch or checkpoints will be written to is nearly full."""
    return [
        RULES["SYS004"](
            f"Only {size(disk.free)} free on {disk.path}",
            [f"{disk.path}: {size(disk.free)} free of {size(disk.total)}"],
            "A torch CUDA install takes several GB, checkpoints more: free space first.",
        )
        for disk in facts.system.disks
        if disk.free is not None and disk.free < DISK_WARN
    ]


def _wsl1(facts: Facts) -> List[Finding]:
    """SYS005: WSL 1 has no GPU."""
    if facts.system.wsl != 1:
        return []
    return [
        RULES["SYS005"](
            "This is WSL 1, which cannot use the GPU",
            [f"kernel {facts.system.kernel}"],
            "Convert the distribution to WSL 2 (`wsl --set-version <distro> 2`).",
            severity="error" if facts.torch.cuda else "warning",
        )
    ]


def _container_without_gpus(facts: Facts) -> List[Finding]:
    """SYS006: the container was built or started to have NVIDIA GPUs, but has none: no GPU
    device, and NVML (probed, not simulated) failed."""
    s, nv = facts.system, facts.nvidia
    why = started_without_gpus(facts)
    if why is None:
        return []
    return [
        RULES["SYS006"](
            "This container expects NVIDIA GPUs but was started without them",
            [
                why,
                f"container: {s.container or 'not detected (a CUDA image)'}",
                "no /dev/nvidia0 device",
                f"NVML: {nv.nvml.error}",
            ],
            CONTAINER_FIX,
        )
    ]


def _mps(facts: Facts) -> List[Finding]:
    rt, s = facts.torch_runtime, facts.system
    macos = s.family is OsFamily.MACOS
    if not macos or rt.status != RuntimeStatus.OK or rt.mps_available is not False:
        return []
    if rt.mps_built is False:
        why = "this torch was built without MPS"
        fix = "Install the standard macOS arm64 wheel (`pip install torch`)."
    elif s.machine == "x86_64":
        why = "Python runs as x86_64 (Rosetta or an Intel Mac)"
        fix = "Use an arm64 Python on Apple silicon."
    else:
        why = "macOS is older than 12.3 or the GPU is not supported"
        fix = "MPS needs macOS 12.3+ on Apple silicon."
    return [
        RULES["MAC001"](
            f"torch cannot use the Apple GPU: {why}",
            [f"macOS {s.os_version}, {s.machine}", f"torch {rt.version}"],
            fix,
        )
    ]
