"""Can the GPUs talk to each other at full speed? PCIe width, ACS, the IOMMU, P2P, NVLink.

The causes behind multi-GPU jobs that hang in their first all_reduce or crawl, which no
error names: a bridge whose ACS redirects peer-to-peer traffic up to the root complex, an
IOMMU that translates every peer access (NVIDIA and AMD both advise iommu=pt for P2P), a
link trained at fewer lanes than it has (a loose card, a riser, a BIOS setting), pairs the
driver will not let talk peer-to-peer, GeForce cards whose P2P is reported but hangs NCCL,
NVLinks that are down, and RDMA NICs on another CPU than the GPUs they serve.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from ..facts import Facts, GpuFacts, GpuPairFacts, PcieFacts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables

TRANSLATED = ("DMA", "DMA-FQ")


def check(facts: Facts, tables: Tables) -> List[Finding]:
    gpus = [(g, g.pcie) for g in facts.nvidia.gpus if g.pcie is not None]
    findings = _degraded(gpus)
    if len(facts.nvidia.gpus) >= 2:  # peer-to-peer needs two
        findings += _acs(gpus) + _iommu(gpus, facts.system.iommu_cmdline)
        consumer = {
            g.index: tables.gpu_segment(g.name or "") == "consumer" for g in facts.nvidia.gpus
        }
        findings += _p2p(facts.nvidia.pairs, consumer) + _geforce(facts, consumer)
    findings += _nvlink_down(facts.nvidia.gpus, facts.nvidia.pairs)
    findings += _nic_numa(facts)
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


# NVML's P2P words, as a person reads them
P2P_WHY = {
    "chipset_not_supported": "the chipset does not route P2P between them",
    "gpu_not_supported": "the GPU does not support P2P",
    "topology_not_supported": "their PCIe topology does not allow P2P (e.g. across CPUs)",
    "disabled_by_regkey": "P2P is disabled by a driver setting (registry key / module option)",
    "not_supported": "P2P is not supported between them",
    "unknown": "the driver could not say",
}


def _pair_name(pair: GpuPairFacts) -> str:
    return f"GPU {pair.a} <-> GPU {pair.b} ({pair.path or 'path unknown'})"


def _p2p(pairs: List[GpuPairFacts], consumer: Dict[int, bool]) -> List[Finding]:
    """Pairs NVML says cannot read or write each other's memory directly. ``consumer``: GPU
    index -> the GPU table calls it a consumer card (GeForce, TITAN), where NVIDIA does not
    support P2P over PCIe; a GPU the table does not know is not taken for one."""
    blocked = [
        p
        for p in pairs
        if any(s not in (None, "ok") for s in (p.p2p_read, p.p2p_write)) and p.path != "NV"
    ]
    if not blocked:
        return []
    words = sorted({s for p in blocked for s in (p.p2p_read, p.p2p_write) if s and s != "ok"})
    all_consumer = all(consumer.get(i, False) for p in blocked for i in (p.a, p.b))
    regkey = "disabled_by_regkey" in words
    fix = (
        "Remove the driver setting that disables P2P (NVreg_RegistryDwords in "
        "/etc/modprobe.d, or the Windows registry key), then reload the driver. "
        if regkey
        else "Expected on GeForce cards: NVIDIA supports P2P over PCIe only on data-center and "
        "workstation GPUs (or over NVLink). "
        if all_consumer
        else "Run the job's GPUs under one PCIe switch or one CPU (pick them with "
        "CUDA_VISIBLE_DEVICES from `nvidia-smi topo -m`), or check the BIOS settings for "
        "PCIe peer-to-peer. "
    )
    return [
        RULES["LNK004"](
            f"{len(blocked)} GPU pair(s) cannot use peer-to-peer transfers",
            [
                f"{_pair_name(p)}: read {p.p2p_read or 'unknown'}, write {p.p2p_write or 'unknown'}"
                f" — {P2P_WHY.get(p.p2p_read or p.p2p_write or 'unknown', 'unknown')}"
                for p in blocked[:12]
            ]
            + ([f"... and {len(blocked) - 12} more pairs"] if len(blocked) > 12 else []),
            fix + "NCCL then copies through host memory (its SHM transport): collectives work "
            "but are slower, and need room in /dev/shm.",
            severity="info" if all_consumer and not regkey else None,
        )
    ]


def _geforce(facts: Facts, consumer: Dict[int, bool]) -> List[Finding]:
    """GeForce pairs whose P2P over PCIe the driver reports as available: known to hang
    NCCL or give wrong results on some cards and drivers (RTX 4090: NVIDIA/nccl-tests#117)."""
    risky = [
        p
        for p in facts.nvidia.pairs
        if p.path != "NV" and p.p2p_read == "ok" and consumer.get(p.a) and consumer.get(p.b)
    ]
    if not risky:
        return []
    gpus = {g.index: g for g in facts.nvidia.gpus}
    names = sorted({gpus[i].name or "unknown" for p in risky for i in (p.a, p.b) if i in gpus})
    return [
        RULES["LNK005"](
            "GeForce GPUs report peer-to-peer over PCIe, which NCCL may hang on",
            [f"{_pair_name(p)}: P2P read ok, write {p.p2p_write or 'unknown'}" for p in risky[:8]]
            + [", ".join(names)],
            "NVIDIA supports P2P over PCIe only on data-center and workstation GPUs; on GeForce "
            "cards the first all_reduce has hung (RTX 4090) or returned wrong results with some "
            "drivers. Run `envcheck check --smoke` to test it: if all_reduce hangs or fails, set "
            "NCCL_P2P_DISABLE=1 for the job, and update the driver.",
        )
    ]


def _nvlink_down(gpus: List[GpuFacts], pairs: List[GpuPairFacts]) -> List[Finding]:
    """NVLinks that exist but are not active: traffic between those GPUs falls back to PCIe
    (the slow path through the host bridge: tatsu-lab/stanford_alpaca#32)."""
    evidence = []
    for g in gpus:
        links = g.nvlinks or []
        down = [link.link for link in links if link.active is False]
        if down and any(link.active for link in links):
            evidence.append(f"GPU {g.index} ({g.name or 'unknown'}): links {down} down")
        elif down and len(gpus) >= 2:
            evidence.append(f"GPU {g.index} ({g.name or 'unknown'}): all {len(down)} links down")
    if not evidence:
        return []
    return [
        RULES["LNK006"](
            "NVLink links are down: GPU traffic takes PCIe instead",
            evidence + [f"{_pair_name(p)}" for p in pairs if p.path != "NV"][:8],
            "The GPUs still work, at PCIe speed. Check `nvidia-smi nvlink --status` and "
            "`nvidia-smi topo -m`; on NVSwitch systems start nvidia-fabricmanager (its "
            "service must run before CUDA apps); otherwise reseat the NVLink bridge, or "
            "reset the GPUs. A link down after a reset needs service.",
        )
    ]


def _nic_numa(facts: Facts) -> List[Finding]:
    """RDMA NICs only on other NUMA nodes than a GPU: GPUDirect RDMA then crosses the CPU
    interconnect, and NCCL turns it off at that distance (inter-node traffic is staged)."""
    rdma = [n for n in facts.system.nics if n.kind == "rdma" and n.numa_node is not None]
    nodes = {n.numa_node for n in rdma}
    if not rdma or len(facts.nvidia.gpus) < 1:
        return []
    far = [
        g
        for g in facts.nvidia.gpus
        if g.pcie is not None and g.pcie.numa_node is not None and g.pcie.numa_node not in nodes
    ]
    if not far:
        return []
    return [
        RULES["LNK007"](
            "GPUs have no RDMA NIC on their NUMA node",
            [f"{_name(g)}: NUMA node {g.pcie.numa_node}" for g in far if g.pcie]
            + [f"{n.name} ({n.pci_bus_id}): NUMA node {n.numa_node}" for n in rdma[:8]],
            "Inter-node traffic of these GPUs crosses the CPU interconnect, where NCCL does not "
            "use GPUDirect RDMA: multi-node all_reduce is slower. Place a NIC on each CPU that "
            "has GPUs (or the GPUs beside the NIC); single-node jobs are not affected.",
        )
    ]
