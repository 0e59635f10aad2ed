"""Expected all_reduce busbw from topology, SMK004 from a fabricated all_reduce, the smoke text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import pytest

from envcheck.core import smoke_findings, with_expected
from envcheck.facts import Facts, GpuFacts, GpuPairFacts, NvLinkFacts, PcieFacts
from envcheck.report.smoke_text import result_lines, summary_line
from envcheck.smoke.expected import expected_busbw, load_link_table
from envcheck.smoke.runner import SmokeResult
from envcheck.tables import TableError
from tests.fixtures import FIXTURE_TABLES_DIR

TABLE = load_link_table(str(FIXTURE_TABLES_DIR))  # the frozen links.json


def bus(i: int) -> str:
    return f"00000000:{0x10 + i:02x}:00.0"


def nvlink_gpus(n: int, links: int, version: Optional[int], switch: bool) -> List[GpuFacts]:
    """n GPUs whose ``links`` active NVLinks go to NVSwitches, or spread over the other GPUs."""
    gpus = []
    for i in range(n):
        peers = [j for j in range(n) if j != i]
        remotes = [
            f"00000000:{0xA0 + k % 4:02x}:00.0" if switch else bus(peers[k % len(peers)])
            for k in range(links)
        ]
        nvl = [NvLinkFacts(k, True, version, r) for k, r in enumerate(remotes)]
        nvl.append(NvLinkFacts(links, False, version, None))  # an inactive link: not counted
        gpus.append(GpuFacts(index=i, pci_bus_id=bus(i), nvlinks=nvl))
    return gpus


def machine(gpus: List[GpuFacts], path: Optional[str], **pair) -> Facts:
    facts = Facts()
    facts.nvidia.gpus = gpus
    facts.nvidia.pairs = [
        GpuPairFacts(a.index, b.index, path, **pair)
        for i, a in enumerate(gpus)
        for b in gpus[i + 1 :]
    ]
    return facts


def pcie_gpus(n: int, speed: float, width: int, slow: Optional[int] = None) -> List[GpuFacts]:
    return [
        GpuFacts(
            index=i,
            pci_bus_id=bus(i),
            pcie=PcieFacts(speed_max=speed, width_max=width // 2 if i == slow else width),
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "facts, world, gbps, basis",
    [
        # HGX H100: 18 NVLink 4 links per GPU into NVSwitch, 25 GB/s each per direction
        (machine(nvlink_gpus(8, 18, 4, True), "NV18"), 8, 450.0, "NVLink 4 through NVSwitch"),
        (machine(nvlink_gpus(8, 18, 5, True), "NV18"), 8, 900.0, "18 links x 50 GB/s"),
        # two A100 PCIe with NVLink bridges: 12 NVLink 3 links between them
        (machine(nvlink_gpus(2, 12, 3, False), "NV12"), 2, 300.0, "direct between GPUs"),
        (machine(pcie_gpus(2, 16.0, 16), "PHB"), 2, 31.504, "PCIe Gen4 x16 through the host"),
        (machine(pcie_gpus(4, 32.0, 16), "PIX"), 4, 63.008, "PCIe Gen5 x16 through one PCIe"),
        # the ring is as fast as its slowest link: one GPU with half its lanes
        (machine(pcie_gpus(4, 8.0, 16, slow=2), "PXB"), 4, 7.88, "PCIe Gen3 x8"),
    ],
)
def test_expected_figure_per_topology(facts: Facts, world: int, gbps: float, basis: str) -> None:
    got = expected_busbw(facts, "nccl", world, TABLE)
    assert got.busbw_gbps == pytest.approx(gbps, rel=1e-3)
    assert basis in got.basis


def nvlink_without_version() -> Facts:
    return machine(nvlink_gpus(2, 4, None, False), "NV4")


@pytest.mark.parametrize(
    "facts, backend, world, reason",
    [
        (Facts(), "gloo", 2, "gloo on the CPU"),
        (machine(pcie_gpus(2, 16.0, 16), "PHB"), "nccl", 1, "one rank"),
        (machine(pcie_gpus(4, 16.0, 16), "PHB"), "nccl", 2, "which GPUs the ranks ran on"),
        (machine(pcie_gpus(2, 16.0, 16), "SYS"), "nccl", 2, "across CPUs (SYS)"),
        (machine(pcie_gpus(2, 16.0, 16), None), "nccl", 2, "path between GPU 0 and 1"),
        (machine(pcie_gpus(2, 64.0, 16), "PIX"), "nccl", 2, "64 GT/s is not in the link table"),
        (machine([GpuFacts(index=0), GpuFacts(index=1)], "PIX"), "nccl", 2, "PCIe link"),
        (machine(nvlink_gpus(2, 4, 9, False), "NV4"), "nccl", 2, "NVLink 9 is not in the link"),
        (nvlink_without_version(), "nccl", 2, "not one generation"),
        (machine(nvlink_gpus(2, 0, 4, False), "NV4"), "nccl", 2, "active NVLinks are not known"),
    ],
)
def test_unknown_is_none_with_its_reason(facts: Facts, backend: str, world: int, reason: str):
    got = expected_busbw(facts, backend, world, TABLE)
    assert got.busbw_gbps is None and not got.known
    assert reason in got.basis


def test_a_mix_of_nvlink_and_pcie_has_no_single_figure() -> None:
    facts = machine(nvlink_gpus(3, 2, 4, False), "NV2")
    facts.nvidia.pairs[-1].path = "PHB"
    got = expected_busbw(facts, "nccl", 3, TABLE)
    assert got.busbw_gbps is None and "mix of NVLink and PCIe" in got.basis


def test_a_link_table_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    data = json.loads((FIXTURE_TABLES_DIR / "links.json").read_text())
    data["nvlink"][0]["gb_per_s_per_link_per_direction"] = "fast"
    (tmp_path / "links.json").write_text(json.dumps(data))
    with pytest.raises(TableError, match=r"links.json: nvlink\[0\].gb_per_s_per_link"):
        load_link_table(str(tmp_path))
    del data["nvlink"][0]["sources"]
    data["nvlink"][0]["gb_per_s_per_link_per_direction"] = 20.0
    (tmp_path / "links.json").write_text(json.dumps(data))
    with pytest.raises(TableError, match="sources"):
        load_link_table(str(tmp_path))


def all_reduce_result(busbw_at_largest: float, largest: int = 1 << 30) -> SmokeResult:
    sizes = []
    size = 4096
    while size <= largest:
        bw = busbw_at_largest * (size / largest) ** 0.25  # rising to its figure at the largest
        sizes.append(
            {"bytes": size, "time_us": 1.0, "algbw_gbps": bw * 2, "busbw_gbps": round(bw, 3)}
        )
        size *= 4
    figures = {"world_size": 4, "backend": "nccl", "sizes": sizes}
    return SmokeResult("all_reduce", "nccl x4", "passed", 3.0, figures=figures)


PCIE4 = machine(pcie_gpus(4, 16.0, 16), "PHB")  # expected 31.5 GB/s


@pytest.mark.parametrize(
    "measured, warned", [(12.0, True), (15.7, True), (16.0, False), (25, False)]
)
def test_smk004_when_busbw_is_below_half_the_expected(measured: float, warned: bool) -> None:
    result = with_expected(all_reduce_result(measured), PCIE4)
    assert result.figures["expected_busbw_gbps"] == pytest.approx(31.504)
    assert "PCIe Gen4 x16" in result.figures["expected_basis"]
    found = [f for f in smoke_findings([result]) if f.code == "SMK004"]
    assert bool(found) is warned
    if warned:
        (f,) = found
        text = " ".join([f.title, *f.evidence, f.fix])
        assert f"{measured:g} GB/s" in text and "31.504 GB/s" in text
        assert "PCIe Gen4 x16 through the host bridge" in text
        assert "ACS" in f.fix and "IOMMU" in f.fix and f.severity == "warning"


def test_no_smk004_without_an_expected_figure_or_a_large_enough_size() -> None:
    small = with_expected(all_reduce_result(1.0, largest=4 << 20), PCIE4)
    assert small.figures["expected_busbw_gbps"] and not smoke_findings([small])
    unknown = with_expected(all_reduce_result(1.0), machine(pcie_gpus(4, 16.0, 16), "SYS"))
    assert "expected_busbw_gbps" not in unknown.figures
    assert "across CPUs" in unknown.figures["expected_unknown"]
    assert not smoke_findings([unknown])


def test_smk004_is_reported_by_check_with_the_expected_figures() -> None:
    from envcheck.core import check
    from envcheck.rules import RULES

    report = check(facts=PCIE4, smoke=[all_reduce_result(3.0)])
    (found,) = [f for f in report.findings if f.code == "SMK004"]
    assert "3 GB/s" in found.title
    assert report.smoke[0].figures["expected_busbw_gbps"] == pytest.approx(31.504)
    assert RULES["SMK004"].name == "busbw-below-expected"


def test_text_shows_the_expected_figure_or_why_not() -> None:
    known = with_expected(all_reduce_result(25.0), PCIE4)
    line = summary_line(known)
    assert "peak busbw 25.000 GB/s at 1 GiB" in line
    assert "expected 31.504 GB/s (PCIe Gen4 x16 through the host bridge)" in line
    plain = {k: v for k, v in known.figures.items() if not k.startswith("expected")}
    gloo = with_expected(
        SmokeResult("all_reduce", "gloo x2", "passed", 1.0, figures={**plain, "backend": "gloo"}),
        Facts(),
    )
    assert "expected: not known (gloo on the CPU" in summary_line(gloo)
    for width in (60, 100):
        assert all(len(x) <= width for x in result_lines(known, width=width))


def test_matmul_text_shows_median_and_spread() -> None:
    figures = {
        "size": 512,
        "threads": 2,
        "float32_rel_error": 1e-7,
        "float32_tflops": 0.17,
        "float32_tflops_min": 0.15,
        "float32_tflops_max": 0.19,
        "float32_spread": 0.235,
        "float32_repeats": 11,
    }
    line = summary_line(SmokeResult("matmul", "cpu", "passed", 2.0, figures=figures))
    assert "float32 0.170 TFLOP/s (median of 11, 0.150-0.190)" in line and "2 threads" in line
    assert "busy CPU" not in line
    busy = {**figures, "float32_cpu_share": 0.55, "load_avg_1m": 3.5}
    line = summary_line(SmokeResult("matmul", "cpu", "passed", 2.0, figures=busy))
    assert "on 55% of 2 threads (a busy CPU)" in line and "load 3.5" in line


def test_one_rank_shows_no_busbw_in_text_or_page() -> None:
    """The figures of `envcheck smoke` on a real one-GPU H200: busbw = algbw x 2(n-1)/n is 0 for
    one rank, and "peak busbw 0.000 GB/s at 4 KiB" read like a dead link."""
    from envcheck.report.html import _smoke as render_smoke_section

    data = json.loads(
        (Path(__file__).parent / "data" / "h200_all_reduce_one_rank.json").read_text()
    )
    result = SmokeResult(
        data["name"], data["device"], data["status"], data["duration_s"], figures=data["figures"]
    )
    text = " ".join(result_lines(result, width=200))
    assert "1 rank over nccl, verified at 10 sizes (4 KiB-1 GiB)" in text
    assert "no busbw (one rank: nothing crosses a link)" in text
    assert "peak busbw" not in text and "1 ranks" not in text
    page = render_smoke_section([result])
    assert "no busbw chart (one rank: nothing crosses a link)" in page
    assert "all_reduce busbw by message size" not in page
    assert summary_line(result).startswith("1 rank over nccl")
