"""GPU health as NVML reports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from ..facts import Facts, GpuFacts, GpuStatus
from ..findings import Finding
from ..rules import RULES
from ..values import OsFamily

if TYPE_CHECKING:  # the healthcheck imports this module and must not load the tables' reader
    from ..tables import Tables


def check(facts: Facts, tables: Optional[Tables] = None) -> List[Finding]:
    """Each GPU's health as NVML reports it; reads no table (the healthcheck calls it
    without any)."""
    findings: List[Finding] = []
    for gpu in facts.nvidia.gpus:
        findings += _gpu(facts, gpu)
    return findings


def _gpu(facts: Facts, gpu: GpuFacts) -> List[Finding]:
    """One GPU's findings: a lost GPU says nothing more; otherwise its NVML errors, then
    its memory, MIG and persistence state."""
    label = f"GPU {gpu.index} ({gpu.name or 'unknown'})"
    where = [label] + ([f"PCI {gpu.pci_bus_id}"] if gpu.pci_bus_id else [])
    if gpu.status == GpuStatus.LOST:
        return [
            RULES["GPU001"](
                f"{label} has fallen off the bus",
                where + list(gpu.errors.values()),
                "Check `dmesg` for Xid 79; the GPU needs a reset or the machine a reboot, and "
                "repeated losses point at power, cooling or hardware.",
            )
        ]
    findings = []
    if gpu.status == GpuStatus.ERROR:
        findings.append(
            RULES["GPU007"](
                f"NVML could not read {label}",
                where + [f"{q}: {e}" for q, e in gpu.errors.items()],
                "See the NVML errors; `nvidia-smi -q -i {index}` shows the same queries.".replace(
                    "{index}", str(gpu.index)
                ),
            )
        )
    findings += _memory(gpu, label, where)
    if gpu.mig_mode and gpu.mig_devices == 0:
        findings.append(
            RULES["GPU005"](
                f"{label} is in MIG mode with no MIG instances",
                where,
                "CUDA sees no usable device: create instances (`nvidia-smi mig -cgi ... -C`) or "
                "disable MIG (`nvidia-smi -i INDEX -mig 0`, then reset).",
            )
        )
    if (
        facts.system.family is OsFamily.LINUX
        and gpu.ecc_mode is not None
        and gpu.persistence_mode is False
    ):
        findings.append(
            RULES["GPU006"](
                f"Persistence mode is off on {label}",
                where,
                "Each job start re-initialises the driver (seconds of latency): enable the "
                "nvidia-persistenced service, or `nvidia-smi -pm 1`.",
            )
        )
    return findings


def _memory(gpu: GpuFacts, label: str, where: List[str]) -> List[Finding]:
    """GPU002-GPU004: uncorrectable ECC errors, failed or pending memory repairs."""
    findings = []
    if gpu.ecc_uncorrected_volatile:
        findings.append(
            RULES["GPU002"](
                f"{label} has {gpu.ecc_uncorrected_volatile} uncorrectable ECC errors",
                where,
                "Results on this GPU cannot be trusted: drain it and reset it; if the errors "
                "come back, the GPU needs service.",
            )
        )
    if gpu.row_remap_failure:
        findings.append(
            RULES["GPU004"](
                f"Row remapping failed on {label}",
                where,
                "The GPU has run out of spare memory rows: it needs service.",
            )
        )
    elif gpu.row_remap_pending or gpu.retired_pages_pending:
        findings.append(
            RULES["GPU003"](
                f"{label} has a memory repair waiting for a GPU reset",
                where,
                "Reset the GPU (`nvidia-smi -r -i INDEX` when idle) or reboot to apply it.",
            )
        )
    return findings
