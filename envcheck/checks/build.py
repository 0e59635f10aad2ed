"""Is the kind of torch build right for this machine (CPU-only vs CUDA, installed at all)?"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..values import OsFamily
from ._util import (
    driver_text,
    gpu_list,
    has_amd_gpu,
    has_nvidia_gpu,
    torch_variant,
    what_fits,
)

if TYPE_CHECKING:
    from ._util import Planned


def check(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> List[Finding]:
    """``planned``: the report's install plan, which each fix here explains (what_fits)."""
    if not facts.torch.installed:
        return [_not_installed(facts, tables, planned)]
    variant = torch_variant(facts)
    gpu = has_nvidia_gpu(facts)
    darwin = facts.system.family is OsFamily.MACOS
    if variant is not None and variant.is_cpu and gpu and not darwin:
        return [_cpu_on_gpu(facts, tables, planned)]
    if variant is not None and variant.is_cpu and has_amd_gpu(facts):
        return [_cpu_on_amd(facts, tables, planned)]
    amd = has_amd_gpu(facts)
    if variant is not None and variant.is_rocm and gpu and not amd:
        return [
            _other_vendor(
                facts, tables, planned, "a ROCm (AMD) build", f"NVIDIA GPUs: {gpu_list(facts)}"
            )
        ]
    if variant is not None and variant.is_cuda and amd and not gpu:
        gfx = ", ".join(g.gfx or "?" for g in facts.amd.gpus)
        return [_other_vendor(facts, tables, planned, "a CUDA (NVIDIA) build", f"AMD GPUs: {gfx}")]
    if variant is not None and variant.is_rocm and not amd and not gpu and not darwin:
        return [
            RULES["TRC002"](
                f"torch {facts.torch.version} is a ROCm build, but no AMD GPU is here",
                [f"torch {facts.torch.version}", "no AMD GPU (no KFD topology) found"],
                "It runs on the CPU, carrying the ROCm libraries it cannot use. "
                + what_fits(facts, tables, planned),
            )
        ]
    if variant is not None and variant.is_cuda and not gpu and not darwin:
        return [
            RULES["TRC002"](
                f"torch {facts.torch.version} is a CUDA build, but no NVIDIA GPU is here",
                [f"torch {facts.torch.version}", "no NVIDIA driver or GPU found"],
                "It runs on the CPU, carrying gigabytes of CUDA libraries it cannot use. "
                "If this machine is meant to have a GPU, see the NVIDIA section of the probe; "
                "if not, the CPU build is much smaller. " + what_fits(facts, tables, planned),
            )
        ]
    return []


def _other_vendor(
    facts: Facts, tables: Tables, planned: Optional[Planned], build: str, gpus: str
) -> Finding:
    """torch built for the other GPU vendor: it imports, then sees no device at all
    (torch.cuda.is_available() is False), so the job runs on the CPU or fails."""
    return RULES["TRC004"](
        f"torch {facts.torch.version} is {build}, but this machine's GPUs are from the other vendor",
        [f"torch {facts.torch.version}", gpus],
        "torch sees no GPU with this build. Install the build for this machine's GPUs. "
        + what_fits(facts, tables, planned),
    )


def _cpu_on_gpu(facts: Facts, tables: Tables, planned: Optional[Planned]) -> Finding:
    evidence = [
        f"torch {facts.torch.version} (CPU-only build)",
        gpu_list(facts),
        driver_text(facts),
    ]
    windows = (
        " On Windows the default index (plain `pip install torch`) only has CPU-only wheels."
        if facts.system.family is OsFamily.WINDOWS
        else ""
    )
    return RULES["TRC001"](
        f"torch {facts.torch.version} is CPU-only, but this machine has an NVIDIA GPU",
        evidence,
        "Install a CUDA build of torch from PyTorch's index."
        + windows
        + " "
        + what_fits(facts, tables, planned),
    )


def _cpu_on_amd(facts: Facts, tables: Tables, planned: Optional[Planned]) -> Finding:
    gfx = ", ".join(g.gfx or "?" for g in facts.amd.gpus)
    return RULES["TRC001"](
        f"torch {facts.torch.version} is CPU-only, but this machine has an AMD GPU ({gfx})",
        [f"torch {facts.torch.version} (CPU-only build)", f"AMD GPUs: {gfx}"],
        "Install a ROCm build of torch from PyTorch's index. " + what_fits(facts, tables, planned),
    )


def _not_installed(facts: Facts, tables: Tables, planned: Optional[Planned]) -> Finding:
    return RULES["TRC003"](
        "torch is not installed in this environment",
        [f"Python {facts.python.version} at {facts.python.executable}"],
        "Install torch into this environment. " + what_fits(facts, tables, planned),
    )
