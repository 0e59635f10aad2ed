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


# --------------------------------------------------------------------------- NVML topology


def pairs_of(facts: Facts) -> Dict[tuple, tuple]:
    return {
        (p.a, p.b): (p.path, p.nvlinks, p.p2p_read, p.p2p_write, p.p2p_nvlink)
        for p in facts.nvidia.pairs
    }


def test_nvswitch_pairs_links_and_affinity_are_read_from_nvml(tmp_path: Path) -> None:
    facts = probe(tmp_path, "8xH100-NVSwitch")
    pairs = pairs_of(facts)
    assert len(pairs) == 28  # every pair of eight, once
    assert pairs[(0, 7)] == ("NV", 18, "ok", "ok", "ok")  # through the NVSwitches: NV18
    gpu = facts.nvidia.gpus[5]
    assert len(gpu.nvlinks) == 18 and all(link.active for link in gpu.nvlinks)
    assert {link.version for link in gpu.nvlinks} == {4}  # NVML's 6 is NVLink 4.0
    assert facts.nvidia.gpus[0].cpu_affinity == "0-31"
    assert facts.nvidia.gpus[5].cpu_affinity == "64-95"
    assert links.check(facts, TABLES) == []


def test_direct_nvlinks_are_counted_per_pair_and_a_down_link_is_a_finding(tmp_path) -> None:
    facts = probe(tmp_path, "4xA100-link-down")
    pairs = pairs_of(facts)
    assert pairs[(0, 1)] == ("NV", 4, "ok", "ok", "ok")
    assert pairs[(1, 2)][:2] == ("PHB", 0)  # its links are down: NVML's PCIe path remains
    assert pairs[(1, 2)][4] == "not_supported"
    found = {f.code: f for f in links.check(facts, TABLES)}
    assert set(found) == {"LNK006"}
    assert "GPU 1 (NVIDIA A100-SXM4-80GB): links [4, 5, 6, 7] down" in found["LNK006"].evidence
    assert "GPU 1 <-> GPU 2 (PHB)" in found["LNK006"].evidence
    assert "fabricmanager" in found["LNK006"].fix


def test_pairs_without_p2p_name_the_reason_and_the_fix(tmp_path: Path) -> None:
    regkey = {f.code: f for f in links.check(probe(tmp_path, "2xL40S-regkey"), TABLES)}
    assert set(regkey) == {"LNK004"} and str(regkey["LNK004"].severity) == "warning"
    assert "disabled_by_regkey" in regkey["LNK004"].evidence[0]
    assert "NVreg_RegistryDwords" in regkey["LNK004"].fix
    geforce = {f.code: f for f in links.check(probe(tmp_path, "2xRTX3090-no-p2p"), TABLES)}
    assert set(geforce) == {"LNK004"}
    assert str(geforce["LNK004"].severity) == "info"  # expected on GeForce: not a problem
    assert "GPU 0 <-> GPU 1 (SYS): read chipset_not_supported" in geforce["LNK004"].evidence[0]
    assert "SHM" in geforce["LNK004"].fix


def test_geforce_cards_reporting_p2p_are_warned_about(tmp_path: Path) -> None:
    found = {f.code: f for f in links.check(probe(tmp_path, "4xRTX4090"), TABLES)}
    assert set(found) == {"LNK005"}
    assert len(found["LNK005"].evidence) == 7  # six pairs and the card names
    assert "NCCL_P2P_DISABLE=1" in found["LNK005"].fix and "--smoke" in found["LNK005"].fix


def test_an_unanswered_topology_is_not_judged(tmp_path: Path) -> None:
    from envcheck.core import check

    facts = probe(tmp_path, "8xH100-SXM")  # NVML without topology or P2P answers
    assert facts.nvidia.pairs and not any(p.path or p.p2p_read for p in facts.nvidia.pairs)
    report = check(facts=facts, tables=TABLES, deep=False)
    not_run = {n.code: n.why for n in report.not_run}
    assert {"LNK004", "LNK005", "LNK006"} <= set(not_run)
    assert "topology" in not_run["LNK004"]
    topo = check(facts=probe(tmp_path, "4xRTX4090"), tables=TABLES, deep=False)
    assert "LNK005" in {f.code for f in topo.findings}
    assert "LNK004" not in {n.code for n in topo.not_run}


def nic(root: Path, kind: str, name: str, bdf: str, numa: int) -> None:
    dev = root / "sys/devices/pci0000:80" / bdf
    dev.mkdir(parents=True, exist_ok=True)
    (dev / "numa_node").write_text(f"{numa}\n")
    folder = root / "sys/class" / ("infiniband" if kind == "rdma" else "net") / name
    folder.mkdir(parents=True)
    os.symlink(dev, folder / "device")
    if kind == "net":
        (folder / "speed").write_text("100000\n")


def test_gpus_far_from_every_rdma_nic_are_a_finding(tmp_path: Path) -> None:
    from envcheck.probes.pcie import probe_nics

    sysfs_machine(tmp_path, bdfs(), {}, acs=0x0011, iommu="identity")  # GPUs on NUMA node 1
    nic(tmp_path, "rdma", "mlx5_0", "0000:81:00.0", 0)
    nic(tmp_path, "net", "ens1f0", "0000:81:00.1", 0)
    virtual = tmp_path / "sys/class/net/lo"
    virtual.mkdir(parents=True)  # no PCI function: left out
    facts = probe(tmp_path)
    facts.system.nics = probe_nics(tmp_path)
    assert [
        (n.name, n.kind, n.pci_bus_id, n.numa_node, n.speed_mbps) for n in facts.system.nics
    ] == [
        ("mlx5_0", "rdma", "0000:81:00.0", 0, None),
        ("ens1f0", "net", "0000:81:00.1", 0, 100000),
    ]
    found = {f.code: f for f in links.check(facts, TABLES)}
    assert set(found) == {"LNK007"}
    assert len([e for e in found["LNK007"].evidence if "NUMA node 1" in e]) == 8
    near = tmp_path / "near"
    sysfs_machine(near, bdfs(), {}, acs=0x0011, iommu="identity")
    nic(near, "rdma", "mlx5_1", "0000:82:00.0", 1)
    facts = probe(near)
    facts.system.nics = probe_nics(near)
    assert links.check(facts, TABLES) == []


def test_shm_floor_for_nccl_follows_the_gpu_count_and_p2p(tmp_path: Path) -> None:
    from envcheck.checks import system

    facts = probe(tmp_path, "4xRTX4090")
    assert system.nccl_shm_floor(facts, TABLES) == 0  # every pair talks P2P
    facts = probe(tmp_path, "2xRTX3090-no-p2p")
    facts.system.machine = "x86_64"
    assert system.nccl_shm_floor(facts, TABLES) == 2 * 2 * 9_637_892
    facts.system.shm_total = facts.system.shm_free = 64 * 1024**2  # Docker's default
    (sys001,) = [f for f in system.check(facts, TABLES) if f.code == "SYS001"]
    assert str(sys001.severity) == "error"
    assert any("needs at least 36.8 MiB for 2 GPUs" in e for e in sys001.evidence), sys001.evidence
    big = probe(tmp_path, "8xH100-SXM")  # P2P unknown: not read as fine
    big.system.machine = "x86_64"
    assert system.nccl_shm_floor(big, TABLES) == 8 * 2 * 9_637_892
    big.system.machine = "aarch64"  # NCCL's SIMPLE buffer is 1 MiB there (links.json)
    assert system.nccl_shm_floor(big, TABLES) == 8 * 2 * 6_492_164


def test_probe_text_shows_links_and_the_topology_matrix(tmp_path: Path) -> None:
    from envcheck.report.facts_text import pcie_link, render_facts

    sysfs_machine(tmp_path, bdfs("4xA100-link-down"), {}, acs=0x0011, iommu="identity")
    facts = probe(tmp_path, "4xA100-link-down")
    text = render_facts(facts, width=100, link_table=TABLES.links)
    assert "PCIe Gen4 x16 (max Gen5 x16), NUMA node 1, 8 of 12 NVLink 3 links up" in text
    # The generations are links.json's: without the table, or for a rate it lacks, the rate.
    bare = render_facts(facts, width=100)
    assert "PCIe 16 GT/s x16 (max 32 GT/s x16), NUMA node 1" in bare
    assert pcie_link(64.0, 16, TABLES.links) == "64 GT/s x16"
    assert pcie_link(8.0, 4, TABLES.links) == "Gen3 x4" and pcie_link(None, None) is None
    rows = {line.split()[-5]: line.split()[-4:] for line in text.splitlines() if " GPU1 " in line}
    assert rows["GPU1"] == ["NV4", "X", "PHB", "NV4"], text
    no_p2p = render_facts(probe(tmp_path, "2xRTX3090-no-p2p"), width=100)
    assert "SYS!" in no_p2p and "no peer-to-peer between the two (LNK004)" in no_p2p


def test_the_cli_and_the_html_page_name_generations_from_the_link_table(
    tmp_path: Path, monkeypatch
) -> None:
    """`envcheck probe` and the HTML page label PCIe rates by links.json's generations; a
    probe whose tables cannot be read still prints every fact, with the rates."""
    from click.testing import CliRunner

    from envcheck import cli
    from envcheck.commands import probe as plain_probe
    from envcheck.report.formats import render
    from tests.fixtures import profile, report_of

    sysfs_machine(tmp_path, bdfs("4xA100-link-down"), {}, acs=0x0011, iommu="identity")
    facts = probe(tmp_path, "4xA100-link-down")
    monkeypatch.setattr(plain_probe, "probe_facts", lambda *a, **kw: facts)  # sysfs, NVML: fakes
    shown = CliRunner().invoke(cli.cli, ["probe", "--no-deep"])
    assert shown.exit_code == 0 and "PCIe Gen4 x16 (max Gen5 x16)" in shown.output, shown.output
    broken = tmp_path / "tables"
    broken.mkdir()
    (broken / "links.json").write_text("{not json")
    shown = CliRunner().invoke(cli.cli, ["--tables", str(broken), "probe", "--no-deep"])
    assert shown.exit_code == 0 and "PCIe 16 GT/s x16 (max 32 GT/s x16)" in shown.output

    server = profile("h100-server")
    server.nvidia = facts.nvidia
    page = render(report_of(server), "html")
    topology = page.split('id="topology"')[1].split("</section>")[0]
    assert "<td>Gen4 x16</td>" in topology, topology
