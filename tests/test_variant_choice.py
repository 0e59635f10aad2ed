"""Which CUDA build is planned when several fit the driver and every GPU: the installed one
(with --keep); else the newest of the driver's own CUDA major that it runs fully; else the
newest, even through minor-version compatibility (an older major is never chosen just to
avoid it). The plan says which others would fit and why this one."""

from __future__ import annotations

from typing import Optional

import pytest

from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, resolve
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability

TABLES = load_tables()  # the shipped tables: their architecture lists decide what fits


def box(
    driver: str, cuda: Optional[str], gpu: str = "NVIDIA GeForce RTX 4090", cc: str = "8.9"
) -> Facts:
    facts = Facts()
    facts.system.os, facts.system.machine = "Linux", "x86_64"
    facts.python.version = "3.11.9"
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = driver, cuda
    facts.nvidia.gpus = [
        GpuFacts(index=0, name=gpu, compute_capability=ComputeCapability.parse(cc))
    ]
    return facts


@pytest.mark.parametrize(
    "driver, cuda, torch, chosen, also",
    [
        # 535 runs CUDA 12.2: cu121 fully, cu124 only through minor-version compatibility
        ("535.104.05", "12.2", "2.4.1", "cu121", "cu124, cu118"),
        ("535.104.05", None, "2.4.1", "cu121", "cu124, cu118"),  # the branch says 12.2
        # 550 runs 12.4: no 12.x build of 2.7 runs fully, and cu118 is another major
        ("550.54.15", "12.4", "2.7.1", "cu128", "cu126, cu118"),
        # 580 runs 13.0: cu130 fully, cu132 through minor-version compatibility
        ("580.95.05", "13.0", "2.14.1", "cu130", "cu132, cu126"),
    ],
)
def test_the_build_chosen_among_those_that_fit(
    driver: str, cuda: Optional[str], torch: str, chosen: str, also: str
) -> None:
    plan = resolve(box(driver, cuda), TABLES, Wish(torch=torch), "linux-x86_64")
    assert plan.ok and str(plan.variant) == chosen, plan
    said = [r for r in plan.reasons if "would fit too" in r]
    assert said and said[0].startswith(f"{also} would fit too"), plan.reasons


def test_the_installed_build_is_kept_with_keep() -> None:
    facts = box("535.104.05", "12.2")
    facts.torch.installed, facts.torch.version, facts.torch.cuda = True, "2.4.1+cu124", "12.4"
    plan = resolve(facts, TABLES, Wish(torch="2.4.1", near="2.4.1+cu124"), "linux-x86_64")
    assert plan.ok and str(plan.variant) == "cu124", plan
    assert any("the installed build is kept" in r for r in plan.reasons), plan.reasons


def test_one_build_that_fits_says_nothing_of_others() -> None:
    plan = resolve(
        box("570.86.10", "12.8", "NVIDIA GeForce RTX 5090", "12.0"),
        TABLES,
        Wish(torch="2.7.1"),
        "linux-x86_64",
    )
    assert plan.ok and str(plan.variant) == "cu128"
    assert not [r for r in plan.reasons if "would fit too" in r], plan.reasons


def windows_box(driver: str, gpu: str, cc: str) -> Facts:
    facts = box(driver, None, gpu, cc)
    facts.system.os, facts.system.machine = "Windows", "AMD64"
    return facts


@pytest.mark.parametrize("torch", ["2.9.1", "2.10.0", "2.11.0"])
def test_an_rtx_5090_on_windows_gets_the_cu130_build_of_an_older_release(torch: str) -> None:
    """Windows cu130 lists for 2.9-2.11 (inferred from every stored Windows build script):
    the cu130 command with the GPU covered, and the answer says its list is inferred."""
    facts = windows_box("581.57", "NVIDIA GeForce RTX 5090", "12.0")
    plan = resolve(facts, TABLES, Wish(torch=torch), "windows-x86_64")
    assert plan.ok and str(plan.variant) == "cu130" and plan.torch == torch, plan
    assert not plan.unverified, plan.unverified
    assert "covered by cu130 (its architecture list inferred" in plan.reasons[0], plan.reasons


def test_a_list_read_from_the_release_is_not_called_inferred() -> None:
    plan = resolve(box("535.104.05", "12.2"), TABLES, Wish(torch="2.4.1"), "linux-x86_64")
    assert plan.ok and "covered by" in plan.reasons[0] and "inferred" not in plan.reasons[0]


def test_a_volta_gpu_on_windows_211_is_not_given_cu128() -> None:
    """2.11 dropped Volta from the 12.8 builds: cu126 (which carries sm_70) is the one."""
    facts = windows_box("573.24", "Tesla V100-PCIE-16GB", "7.0")  # R580 dropped Volta
    plan = resolve(facts, TABLES, Wish(torch="2.11.0"), "windows-x86_64")
    assert plan.ok and str(plan.variant) == "cu126", plan


def test_a_driver_version_of_thousands_of_digits_is_not_a_crash() -> None:
    """Found by the diagnose fuzz test: int() refuses 4300+ digits; such a driver is unknown."""
    facts = box("0" * 5000 + "460.73.01", None)
    plan = resolve(facts, TABLES, Wish(torch="2.4.1"), "linux-x86_64")
    assert plan is not None
