"""AMD GPUs, for choosing a ROCm build: read from the amdgpu driver's KFD topology.

Each GPU is a node under /sys/class/kfd/kfd/topology/nodes/ whose ``properties``
file has a non-zero ``gfx_target_version`` (90402 is gfx942: major 9, minor 4,
stepping 2, the last two in hex as LLVM spells them). CPU nodes have 0. No
library and no subprocess: a few small sysfs reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..facts import AmdFacts, AmdGpuFacts
from ._files import read_first_line, read_text

TOPOLOGY = "sys/class/kfd/kfd/topology/nodes"


def gfx_name(target_version: int) -> Optional[str]:
    """90402 -> gfx942, 90010 -> gfx90a, 110000 -> gfx1100; None for 0 (a CPU node)."""
    if target_version <= 0:
        return None
    major, rest = divmod(target_version, 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def probe_amd(root: Path = Path("/")) -> AmdFacts:
    facts = AmdFacts(driver_version=read_first_line(root, "/sys/module/amdgpu/version") or None)
    nodes = root / TOPOLOGY
    try:
        entries = sorted(nodes.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 0)
    except OSError:
        return facts
    for node in entries:
        props = {}
        for line in (read_text(node, "properties") or "").splitlines():
            key, _, value = line.strip().partition(" ")
            props[key] = value.strip()
        try:
            target = int(props.get("gfx_target_version", "0"))
            vendor = int(props.get("vendor_id", "0"))
        except ValueError:
            continue
        gfx = gfx_name(target)
        if gfx is None or vendor not in (0, 0x1002):
            continue
        device = props.get("device_id")
        facts.gpus.append(
            AmdGpuFacts(
                index=len(facts.gpus),
                gfx=gfx,
                device_id=hex(int(device)) if device and device.isdigit() else None,
            )
        )
    return facts
