"""A GPU's PCIe link, NUMA node, IOMMU domain and the ACS setting of the bridges above it,
from Linux sysfs (no root needed, except for a bridge's extended configuration space).

These decide whether GPUs can talk peer-to-peer and how fast: PCIe ACS "P2P redirect" on a
bridge between two GPUs sends their traffic up to the root complex (and through the IOMMU
when it translates), which is slow or hangs NCCL; a link trained below its width halves the
bandwidth. NVML does not report ACS or the IOMMU, so sysfs is read for every GPU NVML found.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional

from ..facts import NicFacts, PcieFacts

_BDF = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_SPEED = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,2})?)\s*GT/s")
ACS_CAP_ID = 0x000D  # PCIe extended capability: Access Control Services
ACS_REDIRECT = 0x0004 | 0x0008  # ACS control: P2P Request Redirect, P2P Completion Redirect
EXTENDED_CONFIG = 4096  # bytes; sysfs shows only the first 64 or 256 to non-root readers


def sysfs_bdf(bus_id: str) -> Optional[str]:
    """NVML's ``00000000:18:00.0`` -> sysfs's ``0000:18:00.0``; None for anything else."""
    bdf = bus_id.strip().lower()
    if not _BDF.match(bdf):
        return None
    domain, rest = bdf.split(":", 1)
    return f"{int(domain, 16):04x}:{rest}"


def probe_pcie(root: Path, bus_id: Optional[str]) -> Optional[PcieFacts]:
    """The PCIe facts of the device with this bus id, or None where sysfs has no such device
    (not Linux, a container without /sys, a bus id NVML did not give)."""
    bdf = sysfs_bdf(bus_id or "")
    if bdf is None:
        return None
    device = root / "sys" / "bus" / "pci" / "devices" / bdf
    if not device.exists():
        return None
    facts = PcieFacts(
        speed_current=_speed(device / "current_link_speed"),
        speed_max=_speed(device / "max_link_speed"),
        width_current=_int(device / "current_link_width"),
        width_max=_int(device / "max_link_width"),
    )
    numa = _int(device / "numa_node")
    facts.numa_node = numa if numa is not None and numa >= 0 else None
    group_type = _text(device / "iommu_group" / "type")
    facts.iommu_group_type = group_type or None
    for bridge in _bridges(device):
        facts.bridges.append(bridge.name)
        redirect = acs_redirects(bridge / "config")
        if redirect is None:
            facts.acs_unread.append(bridge.name)
        elif redirect:
            facts.acs_redirect.append(bridge.name)
    return facts


def probe_nics(root: Path, limit: int = 64) -> List[NicFacts]:
    """RDMA devices (``/sys/class/infiniband``) and network devices with a PCI function
    (``/sys/class/net/*/device``): where NCCL's inter-node traffic leaves, and on which NUMA
    node. Virtual devices (lo, bridges, veth) have no PCI function and are left out."""
    nics: List[NicFacts] = []
    for kind, folder in (("rdma", "infiniband"), ("net", "net")):
        try:
            names = sorted(p.name for p in (root / "sys" / "class" / folder).iterdir())
        except OSError:
            continue
        for name in names[:limit]:
            base = root / "sys" / "class" / folder / name
            device = base / "device"
            try:
                real = Path(os.path.realpath(device))
            except OSError:
                continue
            # virtio and some drivers put a function of their own between the PCI device and
            # the interface: the nearest PCI device above counts
            pci = next((p for p in (real, *real.parents) if _BDF.match(p.name)), None)
            if not device.exists() or pci is None:
                continue
            bdf = pci.name
            numa = _int(pci / "numa_node")
            speed = _int(base / "speed") if kind == "net" else None
            nics.append(
                NicFacts(
                    name=name,
                    kind=kind,
                    pci_bus_id=bdf,
                    numa_node=numa if numa is not None and numa >= 0 else None,
                    speed_mbps=speed if speed is not None and speed > 0 else None,
                )
            )
    return nics[:limit]


def iommu_cmdline(root: Path) -> List[str]:
    """The kernel's IOMMU options: ``iommu=pt``, ``intel_iommu=on``, ``amd_iommu=off``."""
    words = (_text(root / "proc" / "cmdline") or "").split()
    return [w for w in words if w.split("=", 1)[0] in ("iommu", "intel_iommu", "amd_iommu")][:8]


def acs_redirects(config: Path) -> Optional[bool]:
    """Whether this bridge's ACS control redirects peer-to-peer requests or completions;
    None when its extended configuration space cannot be read (not root)."""
    try:
        with open(config, "rb") as fh:
            data = fh.read(EXTENDED_CONFIG)
    except OSError:
        return None
    if len(data) < EXTENDED_CONFIG:
        return None
    offset, seen = 0x100, set()
    while 0x100 <= offset <= EXTENDED_CONFIG - 8 and offset not in seen:
        seen.add(offset)
        header = int.from_bytes(data[offset : offset + 4], "little")
        if header in (0, 0xFFFFFFFF):
            return False
        if header & 0xFFFF == ACS_CAP_ID:
            control = int.from_bytes(data[offset + 6 : offset + 8], "little")
            return bool(control & ACS_REDIRECT)
        offset = (header >> 20) & 0xFFC
    return False  # no ACS capability: nothing redirects


def _bridges(device: Path) -> List[Path]:
    """The PCI devices above ``device`` in sysfs's hierarchy (its bridges), root first."""
    try:
        real = Path(os.path.realpath(device))
    except OSError:
        return []
    above = [p for p in real.parents if _BDF.match(p.name)]
    return list(reversed(above))[:16]


def _text(path: Path) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def _int(path: Path) -> Optional[int]:
    text = _text(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _speed(path: Path) -> Optional[float]:
    match = _SPEED.match(_text(path) or "")
    return float(match.group(1)) if match else None
