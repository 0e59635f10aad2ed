"""Is the kind of torch build right for this machine (CPU-only vs CUDA, installed at all)?"""

from __future__ import annotations

from typing import List

from packaging.version import Version

from ..compat import best_cuda_variant, install_command, nearest_working_release, platform_key
from ..facts import Facts
from ..findings import Finding
from ..tables import Tables
from ._util import (
    driver_text,
    gpu_list,
    has_amd_gpu,
    has_nvidia_gpu,
    torch_variant,
    torch_version,
    ways_out,
)
from .catalog import RULES


def check(facts: Facts, tables: Tables) -> List[Finding]:
    version = torch_version(facts)
    platform = platform_key(facts.system)
    if not facts.torch.installed:
        return [_not_installed(facts, tables, platform)]
    variant = torch_variant(facts)
    gpu = has_nvidia_gpu(facts)
    if variant == "cpu" and gpu and facts.system.os != "Darwin":
        return [_cpu_on_gpu(facts, tables, version, platform)]
    if variant == "cpu" and has_amd_gpu(facts):
        return [_cpu_on_amd(facts, tables, version, platform)]
    if variant and variant.startswith("cu") and not gpu and facts.system.os != "Darwin":
        command = install_command(version, "cpu", platform, tables) if version else None
        return [
            RULES["TRC002"](
                f"torch {facts.torch.version} is a CUDA build, but no NVIDIA GPU is here",
                [f"torch {facts.torch.version}", "no NVIDIA driver or GPU found"],
                "It runs on the CPU, carrying gigabytes of CUDA libraries it cannot use. "
                "If this machine is meant to have a GPU, see the NVIDIA section of the probe; "
                "if not, the CPU build is much smaller.",
                command,
            )
        ]
    return []


def _cpu_on_gpu(facts: Facts, tables: Tables, version, platform) -> Finding:
    evidence = [
        f"torch {facts.torch.version} (CPU-only build)",
        gpu_list(facts),
        driver_text(facts),
    ]
    windows = (
        " On Windows the default index (plain `pip install torch`) only has CPU-only wheels."
        if facts.system.os == "Windows"
        else ""
    )
    fix = "Install a CUDA build of torch from PyTorch's index." + windows
    command = None
    if version is not None and tables.release(version) is not None:
        variant, reasons = best_cuda_variant(facts, tables, Version(version.base_version))
        if variant:
            command = install_command(Version(version.base_version), variant, platform, tables)
            fix += (
                f" {variant} is the newest CUDA variant of {version.base_version} this driver runs."
            )
        else:
            fix += f" No CUDA variant of {version.base_version} fits this machine ({'; '.join(reasons)})."
            fix += ways_out(facts, tables, Version(version.base_version))
            fallback = nearest_working_release(facts, tables, below=version)
            if fallback:
                command = install_command(fallback[0], fallback[1], platform, tables)
    return RULES["TRC001"](
        f"torch {facts.torch.version} is CPU-only, but this machine has an NVIDIA GPU",
        evidence,
        fix,
        command,
    )


def _cpu_on_amd(facts: Facts, tables: Tables, version, platform) -> Finding:
    from ..install import Wish, render, resolve

    gfx = ", ".join(g.gfx or "?" for g in facts.amd.gpus)
    wish = Wish(torch=f"=={version.base_version}" if version else "latest")
    plan = resolve(facts, tables, wish, platform)
    if not plan.ok:
        plan = resolve(facts, tables, Wish(), platform)
    command = render(plan, "pip") if plan.ok else None
    fix = "Install a ROCm build of torch from PyTorch's index."
    if plan.ok:
        fix += f" {plan.reasons[0]}."
    return RULES["TRC001"](
        f"torch {facts.torch.version} is CPU-only, but this machine has an AMD GPU ({gfx})",
        [f"torch {facts.torch.version} (CPU-only build)", f"AMD GPUs: {gfx}"],
        fix,
        command,
    )


def _not_installed(facts: Facts, tables: Tables, platform) -> Finding:
    """The same plan `envcheck install` makes, so both say the same thing."""
    from ..install import Wish, render, resolve

    plan = resolve(facts, tables, Wish(), platform)
    fix = "Install torch into this environment."
    command = None
    if plan.ok:
        command = render(plan, "pip")
        fix += f" torch {plan.torch} ({plan.variant}) fits: {plan.reasons[0]}."
    elif plan.conflicts:
        fix += " Nothing fits: " + "; ".join(plan.conflicts + plan.ways_out) + "."
    return RULES["TRC003"](
        "torch is not installed in this environment",
        [f"Python {facts.python.version} at {facts.python.executable}"],
        fix,
        command,
    )
