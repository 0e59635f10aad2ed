"""A driver older than the GPU: no torch build helps (DRV005), said once, with the driver
that first supports the GPU. On the frozen fixture tables."""

from __future__ import annotations

import pytest

from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, resolve
from envcheck.values import ComputeCapability, Severity
from tests.fixtures import TABLES, finding, profile, report_of

RTX5090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 5090", compute_capability=ComputeCapability.parse("12.0")
)
GB10 = GpuFacts(index=0, name="NVIDIA GB10", compute_capability=ComputeCapability.parse("12.1"))


def _box(gpu: GpuFacts, driver: str, os_name: str = "Linux") -> Facts:
    facts = profile("docker-small-shm")
    facts.python.version = "3.11.7"
    facts.system.os = os_name
    facts.nvidia.gpus = [gpu]
    facts.nvidia.driver_version = driver
    facts.nvidia.cuda_driver_version = "12.2"
    facts.nvidia.device_nodes = ["/dev/nvidia0"]
    return facts


def test_the_readme_machine_rtx_5090_on_driver_535() -> None:
    """The README's headline: 535 does not support an RTX 5090 at all, so recommending a
    torch "that fits this driver" was wrong; the driver comes first."""
    report = report_of(_box(RTX5090, "535.104.05"))
    drv = finding(report, "DRV005")
    assert drv.severity is Severity.ERROR and drv.caused_by is None
    assert "Upgrade the NVIDIA driver to 570.86.16 or newer" in drv.fix
    assert finding(report, "TRC001").caused_by == "DRV005"
    assert report.install is not None and report.install.command is None


def test_the_plan_says_it_once_whatever_the_release() -> None:
    plan = resolve(_box(RTX5090, "535.104.05"), TABLES, Wish(), "linux-x86_64")
    assert not plan.ok
    assert list(plan.conflicts) == [
        "driver 535.104.05 is older than NVIDIA GeForce RTX 5090 (sm_120), "
        "which needs 570.86.16 or newer"
    ]
    assert plan.ways_out[0] == "upgrade the NVIDIA driver to 570.86.16 or newer, then ask again"
    assert plan.ways_out[-1] == "use the CPU build (--variant cpu)"


@pytest.mark.parametrize("variant", ["cu126", "auto"])
def test_an_explicit_cuda_variant_is_refused_too(variant: str) -> None:
    plan = resolve(_box(RTX5090, "560.35.03"), TABLES, Wish(variant=variant), "linux-x86_64")
    assert not plan.ok and "needs 570.86.16" in plan.conflicts[0]


def test_the_cpu_build_is_still_a_plan() -> None:
    plan = resolve(_box(RTX5090, "535.104.05"), TABLES, Wish(variant="cpu"), "linux-x86_64")
    assert plan.ok and plan.variant == "cpu"


def test_the_first_driver_itself_is_enough() -> None:
    report = report_of(_box(RTX5090, "570.86.16"))
    assert not [f for f in report.findings if f.code == "DRV005"]
    assert finding(report_of(_box(RTX5090, "565.77")), "DRV005") is not None


def test_windows_reads_the_windows_version() -> None:
    report = report_of(_box(RTX5090, "566.36", os_name="Windows"))
    assert "572.16" in finding(report, "DRV005").fix


def test_a_branch_only_record_judges_the_branch() -> None:
    """GB10: only R580 is known (its first named version is later than what shipped)."""
    assert not [f for f in report_of(_box(GB10, "580.65.06")).findings if f.code == "DRV005"]
    assert finding(report_of(_box(GB10, "575.64.05")), "DRV005").fix.startswith(
        "Upgrade the NVIDIA driver to an R580 driver or newer"
    )


def test_an_earlier_release_of_the_first_branch_is_not_judged() -> None:
    """570.86.15 ran an RTX 5090 (tests/diagnose_corpus) that 570.86.16 is the first to
    name: within the first branch the recorded version is an upper bound, not a floor."""
    facts = _box(RTX5090, "570.86.15")
    facts.nvidia.cuda_driver_version = "12.8"
    assert not [f for f in report_of(facts).findings if f.code == "DRV005"]
    assert resolve(facts, TABLES, Wish(), "linux-x86_64").ok
