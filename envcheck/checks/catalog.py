"""Every finding code envcheck can report; docs/checks.md explains each one."""

from __future__ import annotations

from typing import Dict

from ..findings import Rule

_RULES = [
    # torch build versus the machine
    Rule(
        "TRC001", "cpu-build-with-gpu", "error", "a CPU-only torch on a machine with an NVIDIA GPU"
    ),
    Rule(
        "TRC002",
        "cuda-build-without-gpu",
        "info",
        "a CUDA torch on a machine without an NVIDIA GPU",
    ),
    Rule("TRC003", "torch-not-installed", "info", "torch is not installed in this environment"),
    # driver
    Rule("DRV001", "driver-too-old", "error", "the driver cannot run torch's CUDA build"),
    Rule(
        "DRV002",
        "minor-version-compatibility",
        "warning",
        "the driver runs torch's CUDA only through minor-version compatibility",
    ),
    Rule("DRV003", "driver-dropped-gpu", "error", "the driver branch no longer supports a GPU"),
    Rule("DRV004", "nvml-failed", "error", "NVML, the driver's management library, failed"),
    # GPU architectures
    Rule(
        "ARC001", "no-kernels-for-gpu", "error", "torch carries no kernels for a GPU's architecture"
    ),
    Rule("ARC002", "ptx-only", "warning", "a GPU is served only by PTX compiled at first start"),
    Rule(
        "ARC003",
        "gpu-too-old-for-current-torch",
        "warning",
        "the newest torch has no build for a GPU",
    ),
    Rule("ARC004", "arch-list-unknown", "info", "the architectures of this build are not known"),
    # Python and platform
    Rule(
        "PY001", "python-unsupported", "error", "the installed torch has no wheels for this Python"
    ),
    Rule(
        "PY002",
        "python-too-new-or-old-for-current-torch",
        "warning",
        "the newest torch has no wheels for this Python",
    ),
    Rule("PY003", "platform-without-wheels", "error", "no torch wheels for this platform"),
    # companions and runtime wheels
    Rule(
        "PKG001",
        "companion-version-mismatch",
        "error",
        "torchvision or torchaudio does not match torch",
    ),
    Rule(
        "PKG002",
        "companion-build-mismatch",
        "error",
        "a companion was built for another CUDA variant",
    ),
    Rule(
        "PKG003",
        "nvidia-wheel-cuda-mismatch",
        "error",
        "nvidia-* runtime wheels of another CUDA major than torch",
    ),
    Rule(
        "PKG004",
        "nvidia-wheels-two-majors",
        "warning",
        "nvidia-* wheels of two CUDA majors side by side",
    ),
    Rule(
        "PKG005",
        "triton-mismatch",
        "warning",
        "triton is not the version this torch was released with",
    ),
    # installs
    Rule("INS001", "duplicate-torch", "error", "more than one torch installed"),
    Rule("INS002", "mixed-torch-files", "error", "torch's files and metadata disagree"),
    Rule(
        "INS003",
        "pip-and-conda-torch",
        "warning",
        "torch from both pip and conda in one environment",
    ),
    Rule("INS004", "no-virtual-environment", "info", "no virtual environment"),
    # the deep probe
    Rule("RUN001", "import-failed", "error", "import torch failed"),
    Rule("RUN002", "import-crashed", "error", "import torch crashed or hung"),
    Rule(
        "RUN003",
        "cuda-unavailable",
        "error",
        "torch.cuda.is_available() is False on a machine with a GPU",
    ),
    Rule(
        "RUN004",
        "library-shadowed",
        "warning",
        "a CUDA library was loaded from outside torch's own",
    ),
    Rule(
        "RUN005",
        "other-torch-imported",
        "warning",
        "the torch that imports is not the one installed",
    ),
    # CUDA toolkit
    Rule(
        "TK001",
        "nvcc-mismatch",
        "warning",
        "nvcc's CUDA differs from torch's (extensions will not build)",
    ),
    # GPU health
    Rule("GPU001", "gpu-lost", "error", "a GPU has fallen off the bus"),
    Rule("GPU002", "ecc-uncorrectable", "error", "uncorrectable ECC errors"),
    Rule("GPU003", "memory-repair-pending", "warning", "GPU memory repair waits for a reset"),
    Rule("GPU004", "row-remap-failed", "error", "GPU row remapping failed"),
    Rule("GPU005", "mig-without-instances", "error", "MIG mode on, no MIG instances"),
    Rule("GPU006", "persistence-off", "info", "persistence mode off on a server GPU"),
    Rule("GPU007", "gpu-query-failed", "warning", "NVML could not read a GPU"),
    # system
    Rule("SYS001", "small-shm", "warning", "/dev/shm too small for DataLoader workers and NCCL"),
    Rule("SYS002", "memory-limit", "info", "a cgroup memory limit below the machine's RAM"),
    Rule("SYS003", "cpu-quota", "info", "a CPU quota below the machine's CPU count"),
    Rule("SYS004", "disk-nearly-full", "warning", "little free disk space"),
    Rule("SYS005", "wsl1", "error", "WSL 1 has no GPU support"),
    Rule("MAC001", "mps-unavailable", "warning", "Apple GPU (MPS) not available to torch"),
    # the smoke test (envcheck check --smoke)
    Rule("SMK001", "smoke-failed", "error", "a smoke test failed"),
    Rule("SMK002", "smoke-timed-out", "error", "a smoke test hung and was killed"),
    # the tables themselves
    Rule(
        "TBL001",
        "newer-than-tables",
        "warning",
        "something on this machine is newer than the tables know",
    ),
]

RULES: Dict[str, Rule] = {r.code: r for r in _RULES}
assert len(RULES) == len(_RULES), "duplicate finding code"
