"""How the GPUs reach each other, from NVML: NVLinks, the PCIe path of every pair, P2P status.

This is what ``nvidia-smi topo -m`` and ``nvidia-smi topo -p2p rw`` print, as data: for every
pair the nearest common ancestor (NV, PIX, PXB, PHB, NODE, SYS) and whether the driver allows
peer-to-peer reads, writes and NVLink between them; for every GPU its NVLinks and the CPUs
nearest it. NCCL decides its transport from the same facts, so a pair NVML calls
``chipset_not_supported`` or ``disabled_by_regkey`` is one NCCL cannot use P2P across.

Every call runs while NVML is initialised, inside the probe's NVML thread (a hung driver is
bounded there). A query a driver or GPU does not support leaves its field None; nothing here
raises.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._text import int_ranges
from ..facts import GpuFacts, GpuPairFacts, NvLinkFacts

# nvmlGpuTopologyLevel_t -> the word nvidia-smi topo -m prints for it
PATHS = {0: "SELF", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}

# nvmlGpuP2PStatus_t (nvml.h; pynvml NVML_P2P_STATUS_*) -> a word for Facts
P2P_STATUS = {
    0: "ok",
    1: "chipset_not_supported",
    2: "gpu_not_supported",
    3: "topology_not_supported",
    4: "disabled_by_regkey",
    5: "not_supported",
    6: "unknown",
}
P2P_INDEX = {"read": 0, "write": 1, "nvlink": 2}  # nvmlGpuP2PCapsIndex_t

# nvmlNvlinkVersion_t (nvml.h; pynvml NVML_NVLINK_VERSION_*): 1 -> 1.0, 2 -> 2.0, 3 -> 2.2,
# 4 -> 3.0, 5 -> 3.1, 6 -> 4.0, 7 -> 5.0, 8 -> 6.0. Stored as the NVLink generation.
NVLINK_GENERATION = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 6}
MAX_LINKS = 36  # NVML_NVLINK_MAX_LINKS in current nvml.h (18 on H100/B200 GPUs)


def query_links(nvml: ModuleType, handle: Any, gpu: GpuFacts) -> None:
    """Fill ``gpu.nvlinks`` and ``gpu.cpu_affinity`` from NVML (None where not supported)."""
    gpu.cpu_affinity = _cpu_affinity(nvml, handle)
    links: List[NvLinkFacts] = []
    for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", MAX_LINKS))):
        state = _call(getattr(nvml, "nvmlDeviceGetNvLinkState", None), handle, link)
        if state is None:  # not supported: no NVLink, or past the GPU's last link
            break
        version = _call(getattr(nvml, "nvmlDeviceGetNvLinkVersion", None), handle, link)
        remote = _call(_remote_fn(nvml), handle, link)
        links.append(
            NvLinkFacts(
                link=link,
                active=bool(state),
                version=NVLINK_GENERATION.get(version) if isinstance(version, int) else None,
                remote_bus_id=_bus_id(remote),
            )
        )
    gpu.nvlinks = links or None


def query_pairs(nvml: ModuleType, handles: Sequence[Tuple[GpuFacts, Any]]) -> List[GpuPairFacts]:
    """Every pair of the GPUs NVML gave a handle for: path, direct NVLinks, P2P status."""
    pairs = []
    by_bus = {_norm(g.pci_bus_id): g.index for g, _ in handles if g.pci_bus_id}
    for i, (ga, ha) in enumerate(handles):
        for gb, hb in handles[i + 1 :]:
            pair = GpuPairFacts(a=ga.index, b=gb.index)
            level = _call(getattr(nvml, "nvmlDeviceGetTopologyCommonAncestor", None), ha, hb)
            pair.path = PATHS.get(level) if isinstance(level, int) else None
            status = {
                kind: _call(getattr(nvml, "nvmlDeviceGetP2PStatus", None), ha, hb, index)
                for kind, index in P2P_INDEX.items()
            }
            pair.p2p_read, pair.p2p_write, pair.p2p_nvlink = (
                P2P_STATUS.get(status[k], "unknown") if isinstance(status[k], int) else None
                for k in ("read", "write", "nvlink")
            )
            pair.nvlinks = _nvlinks_between(ga, gb, by_bus)
            if pair.nvlinks or pair.p2p_nvlink == "ok":
                pair.path = "NV"
            pairs.append(pair)
    return pairs


def _nvlinks_between(a: GpuFacts, b: GpuFacts, by_bus: Dict[str, int]) -> Optional[int]:
    """Active links from ``a`` that end at ``b``; through NVSwitches (the far end is not a GPU)
    every active link of ``a`` counts, as nvidia-smi's NV18 does. None without NVLink facts."""
    if a.nvlinks is None:
        return None
    active = [link for link in a.nvlinks if link.active]
    direct = [link for link in active if by_bus.get(_norm(link.remote_bus_id)) == b.index]
    if direct:
        return len(direct)
    switched = [link for link in active if _norm(link.remote_bus_id) not in by_bus]
    return len(switched) if switched and b.nvlinks else 0


def _cpu_affinity(nvml: ModuleType, handle: Any) -> Optional[str]:
    import os

    cpus = max(os.cpu_count() or 0, 1024)  # a container may see fewer CPUs than NVML names
    words = _call(getattr(nvml, "nvmlDeviceGetCpuAffinity", None), handle, (cpus + 63) // 64)
    if words is None:
        return None
    try:
        bits = [w * 64 + b for w, word in enumerate(words) for b in range(64) if int(word) >> b & 1]
    except (TypeError, ValueError):
        return None
    return int_ranges(bits) or None


def _remote_fn(nvml: ModuleType) -> Any:
    fn = getattr(nvml, "nvmlDeviceGetNvLinkRemotePciInfo_v2", None)
    return fn or getattr(nvml, "nvmlDeviceGetNvLinkRemotePciInfo", None)


def _bus_id(pci: Any) -> Optional[str]:
    value = getattr(pci, "busId", None)
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value.strip() or None if isinstance(value, str) else None


def _norm(bus_id: Optional[str]) -> str:
    """NVML writes bus ids with 8 or 4 domain digits and either case: compare them alike."""
    if not bus_id or ":" not in bus_id:
        return ""
    domain, rest = bus_id.strip().lower().split(":", 1)
    try:
        return f"{int(domain, 16):04x}:{rest}"
    except ValueError:
        return ""


def _call(fn: Any, *args: Any) -> Any:
    """NVML's answer, or None for any failure (not supported, no permission, a lost GPU)."""
    if fn is None:
        return None
    try:
        return fn(*args)
    except Exception:
        return None
