"""What `envcheck compare` compares across machines, and what a difference does to a job.

One table: each fact a multi-node job depends on, read from a machine's Facts as a value two
machines that agree hold equally, with the rule a difference raises (rules.py, family CMP)
and why it matters. Facts that always differ between machines (host name, GPU UUIDs, when
the report was taken, free memory and disk) are not in it, so they are never reported.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence

from .._record import record
from ..facts import Facts, RuntimeStatus
from ..probes.environ import PREFIXES

Read = Callable[[Facts], Optional[str]]  # None: the report does not say


@record(frozen=True)
class Aspect:
    label: str  # "torch build"
    code: str  # the rule a difference raises
    read: Read
    why: str  # what the difference does to a job across these machines


def _torch(f: Facts) -> Optional[str]:
    return f.torch.version if f.torch.installed else "not installed"


def _build(f: Facts) -> Optional[str]:
    if not f.torch.installed:
        return None
    if f.torch.cuda:
        return "CUDA " + ".".join(f.torch.cuda.split(".")[:2])
    return f"ROCm (HIP {f.torch.hip})" if f.torch.hip else "CPU build"


def _deep(value: Callable[[Facts], Optional[str]]) -> Read:
    """A fact only the deep probe (a child that imported torch) knows."""
    return lambda f: value(f) if f.torch_runtime.status is not RuntimeStatus.SKIPPED else None


def _python(f: Facts) -> Optional[str]:
    return ".".join(f.python.version.split(".")[:2]) or None


def _gpus(f: Facts) -> Optional[str]:
    names = [g.name or "unnamed GPU" for g in f.nvidia.gpus]
    if not names:
        return "no NVIDIA GPU" if f.nvidia.driver_version or f.system.os else None
    return ", ".join(f"{names.count(n)}x {n}" for n in dict.fromkeys(names))


def _driver_branch(f: Facts) -> Optional[str]:
    version = f.nvidia.driver_version
    return f"{version.split('.')[0]} (branch)" if version else None


def _size(value: Optional[int]) -> Optional[str]:
    if value is None:
        return None
    return f"{value / (1 << 30):.1f} GiB" if value >= 1 << 30 else f"{value >> 20} MiB"


def _memlock(limit: Optional[int]) -> Optional[str]:
    if limit is None:
        return None
    return "unlimited" if limit < 0 else f"{limit >> 10} KiB"


def _rdma(f: Facts) -> Optional[str]:
    if f.system.os != "Linux":
        return None
    rdma = sorted(n.name for n in f.system.nics if n.kind == "rdma")
    return f"RDMA: {', '.join(rdma)}" if rdma else "no RDMA device"


def _companion(name: str) -> Read:
    def read(f: Facts) -> Optional[str]:
        if not f.torch.installed:
            return None
        found = [p.version for p in f.torch.companions if p.name == name]
        return found[0] if found else "not installed"

    return read


def _variable(name: str) -> Read:
    return lambda f: f.environment.get(name, "unset")


_BREAKS = "the ranks fail to start together, hang, or exchange wrong data"
_SLOWS = "the job runs at the slowest machine's pace, or fails on some machines only"

STATIC: Sequence[Aspect] = (
    Aspect("torch", "CMP001", _torch, _BREAKS),
    Aspect("torch's CUDA or ROCm build", "CMP003", _build, _BREAKS),
    Aspect("NCCL", "CMP002", _deep(lambda f: f.torch_runtime.nccl_version), _BREAKS),
    Aspect("Python", "CMP004", _python, "pickled objects sent between ranks may not load"),
    Aspect(
        "distributed backends",
        "CMP005",
        _deep(lambda f: ", ".join(sorted(f.torch_runtime.distributed_backends)) or "none"),
        "a process group on a backend some machines lack cannot start",
    ),
    Aspect("GPUs", "CMP006", _gpus, _SLOWS),
    Aspect("NVIDIA driver", "CMP007", _driver_branch, _SLOWS),
    Aspect(
        "cuDNN",
        "CMP008",
        _deep(
            lambda f: str(f.torch_runtime.cudnn_version) if f.torch_runtime.cudnn_version else None
        ),
        "convolutions pick other kernels: other speed, other numerics",
    ),
    Aspect("/dev/shm", "CMP011", lambda f: _size(f.system.shm_total), _SLOWS),
    Aspect(
        "memlock limit",
        "CMP016",
        lambda f: _memlock(f.system.memlock_limit),
        "RDMA pins memory under it: NCCL over InfiniBand fails where it is small",
    ),
    Aspect("RDMA network devices", "CMP012", _rdma, "NCCL falls back to TCP sockets on some"),
    Aspect("container", "CMP013", lambda f: f.system.container or "none", _SLOWS),
    Aspect("OS", "CMP014", lambda f: f.system.distro_name or f.system.os, "worth knowing"),
    Aspect("kernel", "CMP014", lambda f: f.system.kernel, "worth knowing"),
    Aspect("glibc", "CMP014", lambda f: f.system.glibc, "worth knowing"),
    Aspect("CPU", "CMP014", lambda f: f.system.cpu_model, "worth knowing"),
    Aspect("nvcc", "CMP014", lambda f: f.toolkit.nvcc_version, "extensions built here differ"),
)
COMPANIONS = ("torchvision", "torchaudio", "triton")
# the environment variables whose difference changes how a job runs: the probe's recorded
# prefixes (index URLs and envcheck's own are not about the job), and the recorded CUDA_ and
# GLOO_ names (CUDA_VISIBLE_DEVICES, GLOO_SOCKET_IFNAME)
_VARIABLE_PREFIXES = (*(p for p in PREFIXES if p != "ENVCHECK_"), "CUDA_", "GLOO_")


def aspects(facts: Sequence[Facts]) -> List[Aspect]:
    """The table, with a row for each companion and each job variable any machine has."""
    rows = list(STATIC)
    rows += [
        Aspect(name, "CMP009", _companion(name), "extensions built for one torch fail on others")
        for name in COMPANIONS
    ]
    names = sorted({n for f in facts for n in f.environment if n.startswith(_VARIABLE_PREFIXES)})
    rows += [
        Aspect(
            f"${name}", "CMP010", _variable(name), "NCCL and torch behave differently per machine"
        )
        for name in names
    ]
    return rows


__all__ = ["COMPANIONS", "STATIC", "Aspect", "aspects"]
