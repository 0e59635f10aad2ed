"""links.json: link bandwidths (NVLink per generation, PCIe per lane by rate) and NCCL's
shared-memory needs, which the smoke test's expected bus bandwidth is worked out from."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .model import LinkTable
from .reader import Reader


def read_links(data: Dict[str, Any], path: str) -> LinkTable:
    """links.json: NVLink GB/s per link per direction by generation, PCIe per lane by rate."""
    read = Reader(path, Reader(path, {}).strings(data.get("sources"), "sources"))
    nvlink: Dict[int, float] = {}
    for i, raw in enumerate(read.get(data, "nvlink", "nvlink", list)):
        where = f"nvlink[{i}]"
        version = read.get(raw, "version", where, int)
        rate = read.get(raw, "gb_per_s_per_link_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        nvlink[version] = rate
    pcie: List[Tuple[float, int, float]] = []
    for i, raw in enumerate(read.get(data, "pcie", "pcie", list)):
        where = f"pcie[{i}]"
        gts = read.get(raw, "gt_per_s", where, float)
        generation = read.get(raw, "generation", where, int)
        per_lane = read.get(raw, "gb_per_s_per_lane_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        pcie.append((gts, generation, per_lane))
    shm = read.get(data, "nccl_shm", "nccl_shm", dict)
    read.provenance(shm, "nccl_shm", list(shm))
    per_arch = read.get(shm, "bytes_per_connection", "nccl_shm", dict)
    sizes = {
        str(arch): read.get(per_arch, arch, "nccl_shm.bytes_per_connection", int)
        for arch in per_arch
    }
    channels = read.get(shm, "min_channels", "nccl_shm", int)
    return LinkTable(data["as_of"], nvlink, tuple(pcie), sizes, channels)
