"""Driver floors from the CUDA update a build bundles, unknown floors said, forward
compatibility (cuda-compat) only for data-center GPUs on listed branches, DRV003 wording.

Logic runs on the frozen fixture tables; one test drives the CLI with a simulated machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.driver_support import driver_verdict, forward_compat_way_out
from envcheck.facts import Facts, GpuFacts, TorchFacts
from envcheck.install import Wish, resolve
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability
from tests.fixtures import FIXTURE_TABLES_DIR, TABLES, finding, profile, report_of
from tests.runner import envcheck

H100 = GpuFacts(
    index=0, name="NVIDIA H100 80GB HBM3", compute_capability=ComputeCapability.parse("9.0")
)
RTX4090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 4090", compute_capability=ComputeCapability.parse("8.9")
)
GTX1080 = GpuFacts(
    index=0, name="NVIDIA GeForce GTX 1080", compute_capability=ComputeCapability.parse("6.1")
)
MYSTERY = GpuFacts(
    index=0, name="NVIDIA Quux 9000", compute_capability=ComputeCapability.parse("9.0")
)


def _box(gpu: GpuFacts, driver: str, torch: str = "", cuda: str = "", os: str = "Linux") -> Facts:
    facts = profile("h100-server")  # Linux x86_64, Python 3.12
    facts.system.os = os
    facts.nvidia.gpus = [gpu]
    facts.nvidia.driver_version = driver
    facts.nvidia.cuda_driver_version = None
    facts.torch = TorchFacts(
        installed=bool(torch),
        version=torch or None,
        dist_version=torch or None,
        cuda=cuda or None,
        location="/x/site-packages/torch" if torch else None,
        installer="pip" if torch else None,
    )
    return facts


# --------------------------------------------------------------------------- update floors


def test_update_releases_carry_their_own_driver_floor() -> None:
    cu128 = TABLES.toolkit(Version("12.8"))
    assert cu128 is not None and str(cu128.linux) == "570.26"
    update = cu128.update(Version("12.8.1"))
    assert update is not None and (str(update.linux), str(update.windows)) == (
        "570.124.06",
        "572.61",
    )
    assert str(TABLES.toolkit(Version("13.0")).update(Version("13.0.2")).linux) == "580.95.05"


def test_a_build_known_to_bundle_an_update_needs_that_updates_driver() -> None:
    """torch 2.9 cu130 bundles 13.0.2: 580.82.07 is above the 13.0 GA driver (580.65.06)
    but below 13.0.2's (580.95.05), so it runs only through minor-version compatibility."""
    verdict = driver_verdict(
        TABLES,
        Version("13.0"),
        "580.82.07",
        "Linux",
        torch=Version("2.9.1"),
        platform="linux-x86_64",
    )
    assert verdict.level == "minor"
    assert str(verdict.full_from) == "580.95.05"
    assert "13.0.2" in verdict.full_basis and "torch 2.9 cu130" in verdict.full_basis
    full = driver_verdict(
        TABLES,
        Version("13.0"),
        "580.95.05",
        "Linux",
        torch=Version("2.9.1"),
        platform="linux-x86_64",
    )
    assert full.level == "full"


def test_without_a_known_update_the_ga_floor_is_said_to_be_one() -> None:
    verdict = driver_verdict(
        TABLES,
        Version("13.0"),
        "580.82.07",
        "Linux",
        torch=Version("2.12.1"),
        platform="linux-x86_64",
    )
    assert verdict.level == "full" and str(verdict.full_from) == "580.65.06"
    assert verdict.full_basis == (
        "CUDA 13.0 GA; the update this build bundles is not known and may need more"
    )


def test_the_installed_builds_update_floor_reaches_the_finding() -> None:
    facts = _box(H100, "580.82.07", torch="2.9.1+cu130", cuda="13.0")
    drv = finding(report_of(facts), "DRV002")
    assert drv is not None
    assert any("580.95.05" in e and "13.0.2" in e for e in drv.evidence)
    assert "For full support, upgrade the driver to 580.95.05 or newer" in drv.fix


# --------------------------------------------------------------------------- unknown floors


def test_a_13x_toolkit_without_a_version_is_judged_by_its_branch() -> None:
    verdict = driver_verdict(TABLES, Version("13.4"), "610.43.02", "Linux")
    assert verdict.level == "minor" and verdict.full_from is None and verdict.full_branch == 615
    assert driver_verdict(TABLES, Version("13.4"), "615.71.09", "Linux").level == "full"
    facts = _box(H100, "610.43.02", torch="2.15.0+cu134", cuda="13.4")
    drv = finding(report_of(facts), "DRV002")
    assert drv is not None and "R615 driver or newer" in drv.fix
    assert any("NVIDIA publishes no minimum version" in e for e in drv.evidence)


def test_an_unknown_floor_is_said_not_known(tmp_path: Path) -> None:
    data = json.loads((FIXTURE_TABLES_DIR / "cuda_driver.json").read_text())
    for toolkit in data["toolkits"]:
        if toolkit["cuda"] == "13.5":
            toolkit.pop("branch")
            toolkit["inferred"] = []
    (tmp_path / "cuda_driver.json").write_text(json.dumps(data))
    tables = load_tables(tmp_path)
    verdict = driver_verdict(tables, Version("13.5"), "615.71.09", "Linux")
    assert verdict.level == "minor"  # the 13.x floor holds; full support is not known
    assert verdict.full_from is None and verdict.full_branch is None
    facts = _box(H100, "615.71.09", torch="2.15.0+cu135", cuda="13.5")
    drv = finding(report_of(facts, tables=tables), "DRV002")
    assert drv is not None
    assert "The driver that gives full support is not known" in drv.fix
    assert any(e.startswith("full support: not known") for e in drv.evidence)


# --------------------------------------------------------------------------- forward compatibility


def test_cuda_compat_is_a_way_out_on_a_data_center_gpu() -> None:
    facts = _box(H100, "535.104.05", torch="2.13.0+cu130", cuda="13.0")
    package, _why = forward_compat_way_out(facts, TABLES, Version("13.0"))
    assert package == "cuda-compat-13-0"
    drv = finding(report_of(facts), "DRV001")
    assert drv is not None and "keep the driver and install cuda-compat-13-0" in drv.fix
    assert "June 2026" in drv.fix  # R535's end of life is said


@pytest.mark.parametrize(
    ("gpu", "driver", "os", "reason"),
    [
        (RTX4090, "535.104.05", "Linux", "data-center GPUs only"),
        (H100, "550.54.15", "Linux", "no cuda-compat package for CUDA 13.0 on the R550 branch"),
        (H100, "535.104.05", "Windows", "Linux only"),
        (MYSTERY, "535.104.05", "Linux", "is not known"),
    ],
)
def test_cuda_compat_is_never_offered_where_it_does_not_work(gpu, driver, os, reason) -> None:
    facts = _box(gpu, driver, torch="2.13.0+cu130", cuda="13.0", os=os)
    package, why = forward_compat_way_out(facts, TABLES, Version("13.0"))
    assert package is None and reason in why
    drv = finding(report_of(facts), "DRV001")
    assert drv is not None and "cuda-compat" not in drv.fix
    assert reason in " ".join(drv.evidence)


def test_the_resolver_offers_cuda_compat_only_on_a_data_center_gpu() -> None:
    wish = Wish(torch="2.13", variant="cu132")
    plan = resolve(_box(H100, "535.104.05"), TABLES, wish, "linux-x86_64")
    assert not plan.ok
    assert any("install cuda-compat-13-2" in w for w in plan.ways_out)
    plan = resolve(_box(RTX4090, "535.104.05"), TABLES, wish, "linux-x86_64")
    assert not plan.ok and not any("cuda-compat" in w for w in plan.ways_out)


# --------------------------------------------------------------------------- DRV003


def test_drv003_names_the_cuda_12_build_for_the_r580_driver() -> None:
    facts = _box(GTX1080, "590.44.01", torch="2.13.0+cu126", cuda="12.6")
    drv = finding(report_of(facts), "DRV003")
    assert drv is not None
    assert drv.fix.startswith("Use an R580 driver, the last branch that supports Pascal GPUs")
    assert "(it reports CUDA 13.0)" in drv.fix
    assert "torch build for CUDA 12.x or older" in drv.fix
    assert "CUDA 13 toolkits no longer target Pascal GPUs" in drv.fix
    assert "at most" not in drv.fix
    assert drv.title.startswith("Driver 590.44.01 no longer supports"), drv.title


def test_a_driver_that_dropped_the_gpu_is_the_root_and_no_build_is_offered() -> None:
    """A Pascal GPU on R590: no CUDA build runs until the driver changes, so the plan names the
    driver, and TRC001 (CPU torch on a GPU box) follows from DRV003 instead of a command."""
    facts = _box(GTX1080, "590.44.01", torch="2.13.0+cpu")
    report = report_of(facts)
    assert finding(report, "DRV003") is not None
    trc = finding(report, "TRC001")
    assert trc is not None and trc.caused_by == "DRV003"
    assert report.install is not None and report.install.command is None
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    assert not plan.ok
    assert "no longer supports NVIDIA GeForce GTX 1080 (Pascal)" in plan.conflicts[0]
    assert plan.ways_out[0] == "install an R580 driver, then ask again"
    on_580 = _box(GTX1080, "580.95.05", torch="2.13.0+cpu")
    assert resolve(on_580, TABLES, Wish(), "linux-x86_64").ok


# --------------------------------------------------------------------------- a simulated machine


@pytest.mark.parametrize(
    ("gpu", "offered"),
    [("NVIDIA H100 80GB HBM3:9.0:80GiB", True), ("NVIDIA GeForce RTX 4090:8.9:24GiB", False)],
)
def test_cli_on_a_simulated_old_driver(gpu: str, offered: bool) -> None:
    env = {
        "ENVCHECK_GPUS": gpu,
        "ENVCHECK_DRIVER_VERSION": "535.104.05",
        "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",  # also where no torch is installed (CI)
        "ENVCHECK_FACT_TORCH_VERSION": "2.9.1+cu130",
        "ENVCHECK_FACT_TORCH_DIST_VERSION": "2.9.1+cu130",
        "ENVCHECK_FACT_TORCH_CUDA": "13.0",
        "ENVCHECK_FACT_TORCH_RUNTIME_STATUS": "skipped",
    }
    out = envcheck("check", "--no-deep", env=env)
    flat = " ".join(out.stdout.split())
    assert out.returncode == 1, out.stdout + out.stderr
    assert "DRV001" in flat
    assert "full support: driver 580.95.05 or newer (CUDA 13.0.2" in flat
    assert ("install cuda- compat-13-0" in flat or "install cuda-compat-13-0" in flat) is offered


def test_end_of_life_is_said_in_the_right_tense() -> None:
    from datetime import date

    from envcheck.driver_support import _end_of_life_caveat

    before = _end_of_life_caveat(535, "June 2026", today=date(2026, 6, 30))
    after = _end_of_life_caveat(535, "June 2026", today=date(2026, 7, 1))
    assert before == "; NVIDIA gives R535's end of life as June 2026"
    assert "reached its end of life in June 2026" in after and "no more fixes" in after
    assert _end_of_life_caveat(535, None) == ""
    assert "mid-2026" in _end_of_life_caveat(535, "mid-2026")


GH200 = {
    "ENVCHECK_FACT_SYSTEM_MACHINE": "aarch64",
    "ENVCHECK_GPUS": "NVIDIA GH200 480GB:9.0:96GiB",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_CUDA": "13.0",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
}


@pytest.mark.parametrize(
    "driver, said",
    [("580.82.07", True), ("580.95.05", False)],
)
def test_an_unknown_bundled_update_is_said_not_read_as_full_support(
    driver: str, said: bool
) -> None:
    """2.13 cu130 on aarch64: which 13.0 update it bundles is not known (its wheel was not
    read); a driver between the GA's floor and a later update's is not verified, never READY."""
    from tests.runner import envcheck

    env = {**GH200, "ENVCHECK_DRIVER_VERSION": driver, "ENVCHECK_CUDA_DRIVER_VERSION": "13.0"}
    run = envcheck("check", "--no-deep", "--json", env=env)
    report = __import__("json").loads(run.stdout)
    codes = [f["code"] for f in report["findings"]]
    assert ("DRV006" in codes) is said, codes
    assert ("DRV006" in report["unverified"]) is said
    if said:
        (drv,) = [f for f in report["findings"] if f["code"] == "DRV006"]
        assert "580.95.05" in drv["fix"] and "DRV002" not in codes


def test_windows_cuda_12_minor_compat_floor_is_nvidias_later_one() -> None:
    """NVIDIA's release notes first gave 527.41 (the 12.0 GA driver), later 528.33 (12.0
    Update 1); uv and light-the-torch use 528.33, and so does envcheck (issue 26.6)."""
    shipped = load_tables()
    assert str(shipped.minor_compat_floor(Version("12.4"), "Windows")) == "528.33"
    assert str(shipped.minor_compat_floor(Version("12.4"), "Linux")) == "525.60.13"
