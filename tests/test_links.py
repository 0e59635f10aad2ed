"""GPU links from sysfs (issue "interconnect preflight", first part): PCIe width, NUMA node,
the IOMMU domain and the ACS of the bridges above each GPU, read from fake sysfs trees beside a
fake NVML, and the findings they give."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional

from envcheck.checks import links
from envcheck.facts import Facts
from envcheck.probes.nvidia import probe_nvidia
from envcheck.probes.pcie import ACS_CAP_ID, acs_redirects, iommu_cmdline, sysfs_bdf
from tests.fake_nvml import MACHINES, make_nvml
from tests.fixtures import TABLES


def config_space(acs_control: Optional[int], full: bool = True) -> bytes:
    """A bridge's PCIe configuration space: an AER capability at 0x100 chained to ACS at
    0x140 (control register at +6), or no ACS; 64 bytes when not read as root."""
    data = bytearray(4096 if full else 64)
    if not full:
        return bytes(data)
    next_cap = 0x140 if acs_control is not None else 0
    data[0x100:0x104] = (0x0001 | (1 << 16) | (next_cap << 20)).to_bytes(4, "little")  # AER
    if acs_control is not None:
        data[0x140:0x144] = (ACS_CAP_ID | (1 << 16)).to_bytes(4, "little")
        data[0x146:0x148] = acs_control.to_bytes(2, "little")
    return bytes(data)


def sysfs_machine(
    root: Path,
    gpus: List[str],
    width: Dict[str, int],
    acs: Optional[int],
    iommu: Optional[str],
    root_readable: bool = True,
) -> None:
    """GPUs behind one switch (two bridges), as /sys/devices and /sys/bus/pci/devices."""
    top = root / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
    for bridge in (top.parent, top):
        bridge.mkdir(parents=True, exist_ok=True)
        (bridge / "config").write_bytes(config_space(acs, root_readable))
    links_dir = root / "sys/bus/pci/devices"
    links_dir.mkdir(parents=True, exist_ok=True)
    for bdf in gpus:
        dev = top / bdf
        dev.mkdir(parents=True, exist_ok=True)
        (dev / "current_link_speed").write_text("16.0 GT/s PCIe\n")
        (dev / "max_link_speed").write_text("32.0 GT/s PCIe\n")
        (dev / "current_link_width").write_text(f"{width.get(bdf, 16)}\n")
        (dev / "max_link_width").write_text("16\n")
        (dev / "numa_node").write_text("1\n")
        if iommu:
            (dev / "iommu_group").mkdir()
            (dev / "iommu_group/type").write_text(iommu + "\n")
        os.symlink(dev, links_dir / bdf)
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz ro quiet intel_iommu=on\n")


def probe(root: Path, machine: str = "8xH100-SXM"):
    facts = Facts()
    facts.nvidia = probe_nvidia(root, make_nvml(MACHINES[machine]))
    facts.system.iommu_cmdline = iommu_cmdline(root)
    return facts


def bdfs(machine: str = "8xH100-SXM") -> List[str]:
    return [sysfs_bdf(g["pci"]) for g in MACHINES[machine]["gpus"]]


def test_bus_ids_and_acs_parsing(tmp_path: Path) -> None:
    assert sysfs_bdf("00000000:18:00.0") == "0000:18:00.0"
    assert sysfs_bdf("not a bus id") is None
    config = tmp_path / "config"
    config.write_bytes(config_space(0x001D))  # SV, RR, CR, UF: the BIOS default on many boards
    assert acs_redirects(config) is True
    config.write_bytes(config_space(0x0011))  # SV, UF only
    assert acs_redirects(config) is False
    config.write_bytes(config_space(None))  # no ACS capability
    assert acs_redirects(config) is False
    config.write_bytes(config_space(0x001D, full=False))  # not root: 64 bytes
    assert acs_redirects(config) is None
    loop = bytearray(config_space(None))
    loop[0x100:0x104] = (0x0001 | (0x100 << 20)).to_bytes(4, "little")  # points at itself
    config.write_bytes(bytes(loop))
    assert acs_redirects(config) is False


def test_a_healthy_server_gives_no_link_finding(tmp_path: Path) -> None:
    sysfs_machine(tmp_path, bdfs(), {}, acs=0x0011, iommu="identity")
    facts = probe(tmp_path)
    pcie = facts.nvidia.gpus[0].pcie
    assert (pcie.width_current, pcie.width_max, pcie.speed_current, pcie.speed_max) == (
        16,
        16,
        16.0,
        32.0,
    )
    assert pcie.numa_node == 1 and pcie.iommu_group_type == "identity"
    assert pcie.bridges == ["0000:00:01.0", "0000:01:00.0"] and pcie.acs_redirect == []
    assert facts.system.iommu_cmdline == ["intel_iommu=on"]
    assert links.check(facts, TABLES) == []  # a lower speed alone is idle power saving


def test_acs_iommu_and_a_narrow_link_are_findings(tmp_path: Path) -> None:
    gpus = bdfs()
    sysfs_machine(tmp_path, gpus, {gpus[3]: 8}, acs=0x001D, iommu="DMA-FQ")
    found = {f.code: f for f in links.check(probe(tmp_path), TABLES)}
    assert set(found) == {"LNK001", "LNK002", "LNK003"}
    assert "x8 of x16" in found["LNK001"].evidence[0] and "GPU 3" in found["LNK001"].evidence[0]
    assert "0000:00:01.0" in found["LNK002"].fix and "NCCL_P2P_DISABLE=1" in found["LNK002"].fix
    assert "iommu=pt" in found["LNK003"].fix
    assert found["LNK003"].evidence[-1] == "kernel command line: intel_iommu=on"


def test_acs_unreadable_without_root_is_not_a_finding(tmp_path: Path) -> None:
    sysfs_machine(tmp_path, bdfs(), {}, acs=0x001D, iommu=None, root_readable=False)
    facts = probe(tmp_path)
    assert facts.nvidia.gpus[0].pcie.acs_unread == ["0000:00:01.0", "0000:01:00.0"]
    assert links.check(facts, TABLES) == []


def test_one_gpu_has_no_peer_findings_and_no_sysfs_is_unknown(tmp_path: Path) -> None:
    laptop = bdfs("laptop-RTX3060")
    sysfs_machine(tmp_path, laptop, {}, acs=0x001D, iommu="DMA")
    assert links.check(probe(tmp_path, "laptop-RTX3060"), TABLES) == []
    bare = tmp_path / "bare"
    bare.mkdir()
    facts = probe(bare)
    assert all(g.pcie is None for g in facts.nvidia.gpus)
    assert links.check(facts, TABLES) == []
