"""The shipped tables' torch_bundled_cuda against the pins it was built from.

A torch CUDA build bundles a CUDA *update* release (its default PyPI wheel pins the runtime,
nvidia-cuda-runtime-cu12==12.4.127 = CUDA 12.4.1, or NVIDIA's cuda-toolkit metapackage), and
an update can need a newer driver than the GA. Each record must agree with the wheel pin it
cites and with NVIDIA's manifest of the release it names; builds nobody read stay unknown,
and that is said; a driver between the GA floor and the update's floor is told so.

These run on the shipped tables (the facts under test), not on the frozen fixture tables.
Two of them read the steering reference the records come from, where it is present.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest
from packaging.version import Version

from envcheck.driver_support import full_support_floor
from envcheck.tables import load_tables
from envcheck.values import Variant
from tests.runner import envcheck
from tools.add_driver_facts import CUDART, REF_RELEASES, wheel_pins

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = load_tables()
HAVE_REFERENCE = REF_RELEASES.is_file()

# Read by hand from shared/reference/torch_releases.json (PYPI_WHEEL_META: the default PyPI
# wheel's METADATA) and NVIDIA's manifests: (torch, variant, platform, the wheel's pin, the
# cudart it means, the update release, that release's Linux driver in NVIDIA's Table 3).
PINS = [
    (
        "1.13",
        "cu117",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu11==11.7.99",
        "11.7.99",
        "11.7.1",
        "515.48.07",
    ),
    (
        "2.0",
        "cu117",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu11==11.7.99",
        "11.7.99",
        "11.7.1",
        "515.48.07",
    ),
    (
        "2.1",
        "cu121",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.1.105",
        "12.1.105",
        "12.1.1",
        "530.30.02",
    ),
    (
        "2.2",
        "cu121",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.1.105",
        "12.1.105",
        "12.1.1",
        "530.30.02",
    ),
    (
        "2.3",
        "cu121",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.1.105",
        "12.1.105",
        "12.1.1",
        "530.30.02",
    ),
    (
        "2.4",
        "cu121",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.1.105",
        "12.1.105",
        "12.1.1",
        "530.30.02",
    ),
    (
        "2.5",
        "cu124",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.4.127",
        "12.4.127",
        "12.4.1",
        "550.54.15",
    ),
    (
        "2.6",
        "cu124",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.4.127",
        "12.4.127",
        "12.4.1",
        "550.54.15",
    ),
    (
        "2.7",
        "cu126",
        "linux-x86_64",
        "nvidia-cuda-runtime-cu12==12.6.77",
        "12.6.77",
        "12.6.3",
        "560.35.05",
    ),
    ("2.11", "cu130", "linux-x86_64", "cuda-toolkit==13.0.2", "13.0.96", "13.0.2", "580.95.05"),
    ("2.12", "cu130", "linux-x86_64", "cuda-toolkit==13.0.2", "13.0.96", "13.0.2", "580.95.05"),
    ("2.13", "cu130", "linux-x86_64", "cuda-toolkit==13.0.3", "13.0.96", "13.0.2", "580.95.05"),
    ("2.14", "cu130", "linux-x86_64", "cuda-toolkit==13.0.3", "13.0.96", "13.0.2", "580.95.05"),
    ("2.15", "cu132", "linux-x86_64", "cuda-toolkit==13.2.2", "13.2.86", "13.2.2", "595.71.05"),
    ("2.15", "cu132", "linux-aarch64", "cuda-toolkit==13.2.2", "13.2.86", "13.2.2", "595.71.05"),
]


def _cuda(variant: str) -> Version:
    cuda = Variant.parse(variant).cuda
    assert cuda is not None
    return cuda


@pytest.mark.parametrize(("torch", "variant", "platform", "pin", "cudart", "update", "floor"), PINS)
def test_the_record_agrees_with_the_wheel_pin_it_cites(
    torch, variant, platform, pin, cudart, update, floor
) -> None:
    record = SHIPPED.bundled_update(Version(torch), Variant.parse(variant), platform)
    assert record is not None, f"torch {torch} {variant} on {platform} has no record"
    assert (record.cuda_runtime, str(record.update)) == (cudart, update)
    assert f"pins {pin}" in record.provenance.sources[0]
    need = full_support_floor(SHIPPED, _cuda(variant), "Linux", Version(torch), platform)
    assert str(need.driver) == floor
    assert f"the update torch {torch} {variant} bundles" in need.basis


def test_every_record_names_a_release_whose_manifest_ships_its_runtime() -> None:
    """The 2.9 and 2.10 records come from third-party install records, not the reference:
    they too must name a release that ships the runtime they cite."""
    for record in SHIPPED.bundled_cuda:
        shipped = CUDART.get(str(record.update))
        assert shipped is not None, f"{record.torch} {record.variant}: no manifest read"
        assert shipped[0] == record.cuda_runtime, f"{record.torch} {record.variant}"
        toolkit = SHIPPED.toolkit(record.update)
        assert toolkit is not None and toolkit.update(record.update) is not None


@pytest.mark.parametrize(
    ("torch", "variant", "platform"),
    [
        ("2.13", "cu130", "linux-aarch64"),  # that wheel's pins were not read
        (
            "2.6",
            "cu126",
            "linux-x86_64",
        ),  # not the PyPI default (cu124): its pins say nothing of it
        ("2.8", "cu128", "linux-x86_64"),  # the reference holds no runtime pin for 2.8
        ("2.7", "cu126", "windows-x86_64"),  # Windows wheels carry their own CUDA DLLs
    ],
)
def test_a_build_nobody_read_stays_unknown_and_says_so(torch, variant, platform) -> None:
    assert SHIPPED.bundled_update(Version(torch), Variant.parse(variant), platform) is None
    os_name = "Windows" if platform.startswith("windows") else "Linux"
    need = full_support_floor(SHIPPED, _cuda(variant), os_name, Version(torch), platform)
    assert need.basis.endswith("the update this build bundles is not known and may need more")


# --------------------------------------------------------------------------- the reference


@pytest.mark.skipif(not HAVE_REFERENCE, reason="the steering reference is not on this machine")
def test_the_pins_above_are_those_of_the_reference() -> None:
    """Every PYPI_WHEEL_META CUDA pin of the reference is in PINS, as the reference says it
    (so a corrected reference fails here until the table is regenerated)."""
    reference = json.loads(REF_RELEASES.read_text())
    read = {
        (p["torch"], p["variant"], platform, p["pin"])
        for p in wheel_pins(reference)
        for platform in p["platforms"]
    }
    assert read == {(t, v, platform, pin) for t, v, platform, pin, *_ in PINS}
    notes = {
        r["torch_minor"]: r["pypi_default_linux_x86_64"].get("note", "")
        for r in reference["releases"]
    }
    for torch, _variant, _platform, pin, *_ in PINS:
        assert pin.split("==")[1] in notes[torch]  # the version, read without the parser


@pytest.mark.skipif(not HAVE_REFERENCE, reason="the steering reference is not on this machine")
def test_the_table_is_what_the_tool_makes_of_the_reference(tmp_path: Path) -> None:
    """A record edited by hand, or a reference that moved on, shows up as a difference."""
    copy = tmp_path / "cuda_driver.json"
    shutil.copy(ROOT / "compat_tables" / "cuda_driver.json", copy)
    done = subprocess.run(
        [sys.executable, "tools/add_driver_facts.py", "--bundled-only", str(copy)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert copy.read_text() == (ROOT / "compat_tables" / "cuda_driver.json").read_text()


# --------------------------------------------------------------------------- behaviour


def _drv002(torch: str, cuda: str, driver: str) -> Optional[Dict[str, object]]:
    """envcheck check on a simulated Linux x86_64 H100 box with ``torch`` installed."""
    env = {
        "ENVCHECK_GPUS": "NVIDIA H100 80GB HBM3:9.0:80GiB",
        "ENVCHECK_DRIVER_VERSION": driver,
        "ENVCHECK_FACT_SYSTEM_OS": "Linux",
        "ENVCHECK_FACT_SYSTEM_MACHINE": "x86_64",
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",
        "ENVCHECK_FACT_TORCH_VERSION": torch,
        "ENVCHECK_FACT_TORCH_DIST_VERSION": torch,
        "ENVCHECK_FACT_TORCH_CUDA": cuda,
    }
    done = envcheck("check", "--no-deep", "--format", "json", env=env)
    assert done.stdout, done.stderr
    findings = json.loads(done.stdout)["findings"]
    return next((f for f in findings if f["code"] == "DRV002"), None)


@pytest.mark.parametrize(
    ("torch", "cuda", "ga", "floor", "said"),
    [
        (
            "2.11.0+cu130",
            "13.0",
            "580.82.07",
            "580.95.05",
            "CUDA 13.0.2 (13.0 Update 2), the update torch 2.11 cu130 bundles",
        ),
        (
            "2.7.1+cu126",
            "12.6",
            "560.35.03",
            "560.35.05",
            "CUDA 12.6.3 (12.6 Update 3), the update torch 2.7 cu126 bundles",
        ),
        (
            "2.5.1+cu124",
            "12.4",
            "550.54.14",
            "550.54.15",
            "CUDA 12.4.1 (12.4 Update 1), the update torch 2.5 cu124 bundles",
        ),
    ],
)
def test_a_driver_below_the_bundled_updates_floor_is_told(torch, cuda, ga, floor, said) -> None:
    """A driver at or above the GA floor but below the bundled update's runs the build only
    through minor-version compatibility; the update's driver is the one to upgrade to."""
    drv = _drv002(torch, cuda, ga)
    assert drv is not None, f"{torch} on {ga}: no DRV002"
    assert drv["severity"] == "warning"
    assert f"full support: driver {floor} or newer ({said})" in drv["evidence"]
    assert f"upgrade the driver to {floor} or newer" in str(drv["fix"])
    assert _drv002(torch, cuda, floor) is None  # the update's own driver is full support
