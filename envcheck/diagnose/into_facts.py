"""A stated value into the reading's Facts: where no reader put one, and never over a value
a reader did put there (a different one is said as a conflict, and the reader's is kept)."""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional, Tuple

from ..facts import GpuFacts, PackageFacts
from .reading import Reading, cuda_of_local

NAMES = {
    "python.version": "the Python version",
    "torch.version": "the torch version",
    "torch.cuda": "torch's CUDA",
    "nvidia.driver_version": "the NVIDIA driver",
    "nvidia.cuda_driver_version": "the driver's CUDA",
    "toolkit.nvcc_version": "nvcc",
    "system.os": "the OS",
    "system.machine": "the architecture",
    "gpu": "the GPU",
}


def compatible(a: str, b: str) -> bool:
    if a.lower() == b.lower():
        return True
    va, _, la = a.lower().partition("+")
    vb, _, lb = b.lower().partition("+")
    if la and lb and la != lb:
        return False
    pa, pb = va.split("."), vb.split(".")
    n = min(len(pa), len(pb))
    return n > 1 and pa[:n] == pb[:n]


_OS_FAMILY = (
    ("windows", "Windows"),
    ("win", "Windows"),
    ("macos", "Darwin"),
    ("mac os", "Darwin"),
    ("osx", "Darwin"),
    ("darwin", "Darwin"),
)


def os_family(low: str) -> str:
    return next((f for word, f in _OS_FAMILY if low.startswith(word)), "Linux")


PUT: Dict[str, Callable[[Reading, str], bool]] = {}


def put(key: str, value: str, reading: Reading) -> bool:
    """The value into the reading, where no reader put one (a different one there is said).
    True when it was taken."""
    if key.startswith("companion."):
        return _put_companion(key.split(".", 1)[1], value, reading)
    if key in _FIELDS:
        return _put_field(key, reading, value)
    return PUT[key](reading, value)


def _conflict(reading: Reading, key: str, had: str, seen: str) -> bool:
    if not compatible(str(had), seen):
        reading.notes.append(
            f"the text gives two values for {NAMES.get(key, key)}: {had} and {seen}; kept {had}"
        )
    return False


def _put_python(reading: Reading, value: str) -> bool:
    p = reading.facts.python
    if p.version:
        return _conflict(reading, "python.version", p.version, value)
    p.version, p.implementation = value, p.implementation or "CPython"
    reading.observed.add("python")
    return True


def _put_torch(reading: Reading, value: str) -> bool:
    t = reading.facts.torch
    if t.version is not None:
        return _conflict(reading, "torch.version", t.version, value)
    t.installed, t.version, t.dist_version = True, value, value
    t.cuda = t.cuda or cuda_of_local(value)
    reading.observed.add("torch")
    return True


def _put_cpu_torch(reading: Reading, value: str) -> bool:
    """A torch the text calls a CPU-only build ("Torch without CUDA version 2.1.2")."""
    return _put_torch(reading, value if "+" in value else f"{value}+cpu")


def _put_driver(reading: Reading, value: str) -> bool:
    n = reading.facts.nvidia
    if n.driver_version:
        return _conflict(reading, "nvidia.driver_version", n.driver_version, value)
    n.driver_version, n.driver_version_source = value, "text"
    reading.observed.add("nvidia")
    return True


# facts that are one field of one section: (section, field, the section the text then shows)
_FIELDS: Dict[str, Tuple[str, str, Optional[str]]] = {
    "torch.cuda": ("torch", "cuda", None),
    "nvidia.cuda_driver_version": ("nvidia", "cuda_driver_version", "nvidia"),
    "toolkit.nvcc_version": ("toolkit", "nvcc_version", "toolkit"),
    "nccl": ("torch_runtime", "nccl_version", None),
}


def _put_field(key: str, reading: Reading, value: str) -> bool:
    section, name, shows = _FIELDS[key]
    holder = getattr(reading.facts, section)
    had = getattr(holder, name)
    if had:
        return _conflict(reading, key, had, value)
    setattr(holder, name, value)
    if shows:
        reading.observed.add(shows)
    return True


def _put_cudnn(reading: Reading, value: str) -> bool:
    reading.extra.setdefault("stated", {}).setdefault("cudnn", value)
    return True


def _put_gpu(reading: Reading, value: str) -> bool:
    n = reading.facts.nvidia
    if n.gpus or value.lower().startswith(("amd", "radeon", "rx", "mi", "instinct")):
        return False
    n.gpus = [GpuFacts(index=0, name=value)]
    reading.observed.add("nvidia")
    return True


def _put_os(reading: Reading, value: str) -> bool:
    s = reading.facts.system
    arch = re.search(r"(?:\(|\s)(x86_64|aarch64|arm64|AMD64)\)?\s*$", value)
    if arch and not s.machine:  # collect_env's "Ubuntu 18.04.5 LTS (x86_64)", uname -srm's
        s.machine = arch.group(1)  # "Darwin 24.4.0 arm64"
    value = re.sub(r"\s*(?:\([^)]{0,30}\)|\s(?:x86_64|aarch64|arm64|AMD64))\s*$", "", value)
    low = value.lower()
    family = os_family(low)
    if s.os and s.os != family:
        return _conflict(reading, "system.os", s.os, family)
    new = not s.os
    s.os = family
    release = re.search(r"\d{1,2}(?:\.\d{1,2}){0,2}", value)
    # a distribution's name, not the kernel's ("Linux-5.4.0-generic"); "Linux 18.04" is a
    # release as people write Ubuntu's (year.month), which no kernel is
    distro = not low.startswith("linux") or re.match(r"linux \d{2}\.\d{2}\b", low) is not None
    if family == "Linux" and distro and not s.distro_name:
        s.distro_name, new = value, True
    elif release and family != "Linux" and not s.os_version:
        s.os_version, new = release.group(0), True
    if low.startswith("wsl") and not s.wsl:
        s.wsl, new = 2, True
    reading.observed.add("system")
    return new


def _put_machine(reading: Reading, value: str) -> bool:
    s = reading.facts.system
    if s.machine:
        return False
    s.machine = value
    return True


def _put_manager(reading: Reading, value: str) -> bool:
    reading.extra.setdefault("stated", {}).setdefault("package_manager", value.lower())
    return True


def _put_companion(name: str, value: str, reading: Reading) -> bool:
    t = reading.facts.torch
    if any(re.sub(r"[-_]+", "-", p.name.lower()) == name for p in t.companions):
        return False
    t.companions.append(
        PackageFacts(name.replace("-", "_") if name == "flash-attn" else name, value)
    )
    return True


PUT.update(
    {
        "python.version": _put_python,
        "torch.version": _put_torch,
        "torch.cpu": _put_cpu_torch,
        "nvidia.driver_version": _put_driver,
        "cudnn": _put_cudnn,
        "gpu": _put_gpu,
        "system.os": _put_os,
        "system.machine": _put_machine,
        "package_manager": _put_manager,
    }
)
