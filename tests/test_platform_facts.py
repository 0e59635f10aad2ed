"""Per-platform facts: each platform's Python range, Windows builds, Windows on ARM64, and
unknown said as "not verified" (never read as a pass). On the frozen fixture tables."""

from __future__ import annotations

import copy
import json

import pytest
from packaging.version import Version

from envcheck.facts import Facts, PythonFacts
from envcheck.install import Wish, resolve
from envcheck.tables import load_tables
from envcheck.tables.load import TableError
from envcheck.values import Variant
from tests.fixtures import FIXTURE_TABLES_DIR, TABLES


def plan(torch: str, platform: str, python: str, variant: str = "cpu", tables=TABLES):
    wish = Wish(torch=torch, variant=variant, companions=(), python=python, platform=platform)
    return resolve(Facts(python=PythonFacts(version=python)), tables, wish, platform)


def test_a_python_the_platform_has_no_wheel_for_is_refused_with_those_that_have_one() -> None:
    """torch 2.5 has cp313 wheels for Linux x86_64 but not for Windows (PyPI's file list)."""
    assert plan("2.5", "linux-x86_64", "3.13").ok
    refused = plan("2.5", "windows-x86_64", "3.13")
    assert not refused.ok
    assert (
        "no wheels for Python 3.13 on windows-x86_64 (it supports 3.9-3.12)" in refused.conflicts[0]
    )
    assert any("3.9-3.12" in w for w in refused.ways_out)
    assert any("the newest for Python 3.13 on windows-x86_64" in w for w in refused.ways_out)


def test_a_known_platform_range_is_verified() -> None:
    done = plan("2.14", "windows-arm64", "3.12")
    assert done.ok and done.torch == "2.14.1"
    assert list(done.unverified) == []
    assert not plan("2.14", "windows-arm64", "3.14").ok  # 3.11-3.13 only


def test_an_unknown_platform_range_is_said_not_verified() -> None:
    done = plan("2.15", "windows-arm64", "3.12")
    assert done.ok
    assert any("Python 3.12 wheels of torch 2.15 for windows-arm64" in u for u in done.unverified)


def test_a_release_known_to_fit_the_platform_comes_before_one_not_known() -> None:
    """No version asked: 2.15's windows-arm64 range is not in the tables, 2.14's is."""
    done = plan("latest", "windows-arm64", "3.12")
    assert done.ok and done.torch == "2.14.1", (done.torch, done.unverified)
    assert list(done.unverified) == []
    assert any("passed over torch 2.15.0, not known to fit" in n for n in done.notes)


def test_unknown_windows_cuda_builds_are_said() -> None:
    done = plan("2.15", "windows-x86_64", "3.12", variant="cu130")
    assert done.ok
    assert any("Windows CUDA builds" in u for u in done.unverified)
    known = plan("2.14", "windows-x86_64", "3.12", variant="cu130")
    assert known.ok and not any("Windows" in u for u in known.unverified)


def test_windows_has_no_rocm_and_its_own_cuda_list() -> None:
    assert not plan("2.3", "windows-x86_64", "3.10", variant="rocm6.0").ok
    refused = plan("1.12", "windows-x86_64", "3.10", variant="cu102")
    assert not refused.ok and "no cu102 build for windows-x86_64" in refused.conflicts[0]
    assert plan("1.12", "linux-x86_64", "3.10", variant="cu102").ok


def test_windows_on_arm64_is_cpu_only_from_2_8() -> None:
    assert not plan("2.7", "windows-arm64", "3.12").ok
    assert not plan("2.14", "windows-arm64", "3.12", variant="cu130").ok


def test_windows_arch_lists_are_windows_own() -> None:
    release = TABLES.release(Version("2.14.1"))
    assert release is not None
    assert "sm_61" in (release.arch_list(Variant.parse("cu126"), windows=True) or ())
    assert "sm_61" not in (release.arch_list(Variant.parse("cu126")) or ())
    newest = TABLES.release(Version("2.15.0"))
    assert newest is not None and newest.arch_list(Variant.parse("cu132")) is not None
    assert newest.arch_list(Variant.parse("cu132"), windows=True) is None  # never the Linux list


def _tables_with(tmp_path, change):
    data = json.loads((FIXTURE_TABLES_DIR / "torch_releases.json").read_text())
    change(copy.deepcopy(data)["releases"][0], data)
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    return load_tables(tmp_path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("python_by_platform", {"linux-x86_64": {"min": "3.9", "max": "3.8"}}, "above max"),
        ("python_by_platform", {"windows-arm64": {"min": "3.9", "max": "3.9"}}, "no wheels"),
        ("versions_by_platform", {"linux-x86_64": ["9.9.9"]}, "not one of"),
        ("variants_windows", {"cuda": ["rocm5.0"], "xpu": False}, "not a CUDA variant"),
        ("pip_index", {"1.8.2": "http://example/"}, "https URL"),
        ("companions_by_variant", {"cu999": {"torchvision": {}}}, "not a variant"),
        ("companions_by_variant", {"cu111": {"torchtext": {}}}, "torchvision or torchaudio"),
        ("companions_by_variant", {"cu111": {"torchvision": {"1.8.1": "x.y"}}}, "not a version"),
        ("companions_by_variant", {"cu111": {"torchvision": {"9.9": "0.9.0"}}}, "bad pair"),
    ],
)
def test_the_loader_refuses_bad_platform_facts(tmp_path, field, value, message) -> None:
    def change(_, data):
        data["releases"][0][field] = value

    with pytest.raises(TableError, match=message):
        _tables_with(tmp_path, change)
