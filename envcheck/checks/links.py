"""Can the GPUs talk to each other at full speed? PCIe width, ACS and the IOMMU.

The causes behind multi-GPU jobs that hang in their first all_reduce or crawl, which no
error names: a bridge whose ACS redirects peer-to-peer traffic up to the root complex, an
IOMMU that translates every peer access (NVIDIA and AMD both advise iommu=pt for P2P), and a
link trained at fewer lanes than it has (a loose card, a riser, a BIOS setting).
"""

from __future__ import annotations

from typing import List, Tuple

from ..facts import Facts, GpuFacts, PcieFacts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables

TRANSLATED = ("DMA", "DMA-FQ")


def check(facts: Facts, tables: Tables) -> List[Finding]:
    gpus = [(g, g.pcie) for g in facts.nvidia.gpus if g.pcie is not None]
    findings = _degraded(gpus)
    if len(facts.nvidia.gpus) >= 2:  # peer-to-peer needs two
        findings += _acs(gpus) + _iommu(gpus, facts.system.iommu_cmdline)
    return findings


def _name(gpu: GpuFacts) -> str:
    return f"GPU {gpu.index} ({gpu.name or 'unknown'}, {gpu.pci_bus_id or 'no bus id'})"


Linked = List[Tuple[GpuFacts, PcieFacts]]


def _degraded(gpus: Linked) -> List[Finding]:
    narrow = [
        (g, p) for g, p in gpus if p.width_current and p.width_max and p.width_current < p.width_max
    ]
    if not narrow:
        return []
    return [
        RULES["LNK001"](
            "A GPU's PCIe link runs at fewer lanes than it has",
            [f"{_name(g)}: x{p.width_current} of x{p.width_max}" for g, p in narrow],
            "Its bandwidth to the CPU and to other GPUs is cut by as much. Reseat the card (or "
            "its riser), check the slot's lanes and power, and the BIOS PCIe settings. (A lower "
            "link speed alone is normal at idle: GPUs slow their link to save power.)",
        )
    ]


def _acs(gpus: Linked) -> List[Finding]:
    redirect = [(g, p) for g, p in gpus if p.acs_redirect]
    if not redirect:
        return []
    bridges = sorted({b for _, p in redirect for b in p.acs_redirect})
    return [
        RULES["LNK002"](
            "PCIe ACS redirects peer-to-peer traffic between the GPUs",
            [f"{_name(g)}: ACS redirect on {', '.join(p.acs_redirect)}" for g, p in redirect],
            "P2P requests go up to the root complex (and through the IOMMU) instead of across "
            "the switch: NCCL is slow or hangs in its first collective. Disable ACS in the BIOS, "
            "or at boot: `setpci -s <bridge> ECAP_ACS+0x6.w=0000` for "
            + ", ".join(bridges)
            + "; or run with NCCL_P2P_DISABLE=1 (slower, through host memory).",
        )
    ]


def _iommu(gpus: Linked, cmdline: List[str]) -> List[Finding]:
    translated = [(g, p) for g, p in gpus if (p.iommu_group_type or "") in TRANSLATED]
    if not translated:
        return []
    return [
        RULES["LNK003"](
            "The IOMMU translates the GPUs' peer-to-peer traffic",
            [
                *(f"{_name(g)}: IOMMU domain {p.iommu_group_type}" for g, p in translated),
                "kernel command line: " + (" ".join(cmdline) or "no iommu option"),
            ],
            "Every peer access goes through address translation: GPU-to-GPU transfers are slow "
            "or NCCL hangs. Boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=on "
            "iommu=pt) for passthrough; or run with NCCL_P2P_DISABLE=1.",
        )
    ]
