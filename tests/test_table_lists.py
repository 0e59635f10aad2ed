"""Every released build has its architecture (or gfx) list in the tables, or the row says why
not: a new release added without lists fails here, and the resolver answers "unknown" for
what stays open (never a fit: tests/test_jetson.py, tests/test_amd.py). Also the rows'
confidence: a row read from less than its release's own matrix is said so in a plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import List, Tuple

import pytest

from envcheck.facts import AmdFacts, AmdGpuFacts, Facts, GpuFacts
from envcheck.install import Wish, resolve
from envcheck.tables import TableError, load_tables
from envcheck.tables.load import builtin_dir
from envcheck.tables.model import RowConfidence
from envcheck.values import ComputeCapability

TABLES = load_tables()


def _gaps() -> List[Tuple[str, str]]:
    """(release, the row's field path) of every released build without its list, and of
    every platform whose builds are not known at all."""
    out = []
    for r in TABLES.releases:
        for v in r.cuda_variants or ():
            if r.arch_list(v) is None:
                out.append((r.minor, f"arch_lists.{v}"))
        for v in r.windows_cuda or ():
            if r.arch_list(v, "AMD64", windows=True) is None:
                out.append((r.minor, f"arch_lists_windows.{v}"))
        for v in r.cuda_aarch64_variants or ():
            if r.arch_list(v, "aarch64") is None:
                out.append((r.minor, f"arch_lists_aarch64.{v}"))
        for v in r.rocm_variants or ():
            if r.gfx_list(v) is None:
                out.append((r.minor, f"gfx_lists.{v}"))
        if r.windows_cuda is None and "windows-x86_64" in r.platforms:
            out.append((r.minor, "variants_windows"))
        if r.rocm_variants is None:
            out.append((r.minor, "variants.rocm"))
    return out


def test_every_released_build_has_its_list_or_the_row_says_why_not() -> None:
    by_minor = {r.minor: r for r in TABLES.releases}
    unexplained = [
        (minor, path) for minor, path in _gaps() if path not in by_minor[minor].provenance.notes
    ]
    assert not unexplained, unexplained
    print(f"\nbuilds or platforms without a list, each explained: {len(_gaps())}")
    assert len(_gaps()) <= 8  # 1.10 rocm4.x, 2.9 Windows cu128, 2.14 rocm7.14, 2.15's two


def test_a_build_without_a_list_or_a_reason_fails_the_check(tmp_path: Path) -> None:
    for path in builtin_dir().glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    data = json.loads((tmp_path / "torch_releases.json").read_text())
    row = next(r for r in data["releases"] if r["minor"] == "2.12")
    del row["gfx_lists"]["rocm7.2"]
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    release = next(r for r in load_tables(tmp_path).releases if r.minor == "2.12")
    variant = next(v for v in release.rocm_variants or () if str(v) == "rocm7.2")
    assert release.gfx_list(variant) is None
    assert "gfx_lists.rocm7.2" not in release.provenance.notes  # what the test above catches


def test_mi300x_gets_the_newest_torch_whose_rocm_build_carries_gfx942() -> None:
    facts = Facts()
    facts.system.os, facts.system.machine, facts.python.version = "Linux", "x86_64", "3.12.3"
    facts.amd = AmdFacts(gpus=[AmdGpuFacts(index=0, gfx="gfx942")])
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    newest = [
        r for r in TABLES.releases if any("gfx942" in (r.gfx_list(v) or ()) for v in r.gfx_lists)
    ][-1]
    assert plan.ok and plan.torch is not None and plan.variant is not None, plan
    assert plan.torch.startswith(newest.minor + "."), (plan.torch, newest.minor)
    assert "gfx942" in (newest.gfx_list(plan.variant) or ())


def test_every_row_says_what_it_was_read_from_and_when() -> None:
    for release in TABLES.releases:
        assert release.confidence in RowConfidence and release.source_date, release.minor
    assert TABLES.newest_release.confidence is RowConfidence.WHEEL  # 2.15: no release matrix read


def _rtx4090(driver: str, cuda: str) -> Facts:
    facts = Facts()
    facts.system.os, facts.system.machine, facts.python.version = "Linux", "x86_64", "3.12.3"
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = driver, cuda
    facts.nvidia.gpus = [
        GpuFacts(
            index=0, name="NVIDIA GeForce RTX 4090", compute_capability=ComputeCapability(8, 9)
        )
    ]
    return facts


def test_a_build_a_wheel_row_only_infers_is_not_taken_as_released() -> None:
    """2.15's row comes from its released wheels (+cu132 on PyPI); cu130 is inferred from the
    nightlies before it. A driver that runs 13.0 fully gets 2.14's cu130 (known), with 2.15
    passed over and why; one that runs 13.2 gets 2.15's cu132, the build seen."""
    plan = resolve(_rtx4090("590.44.01", "13.1"), TABLES, Wish(), "linux-x86_64")
    assert plan.ok and plan.torch == "2.14.1" and str(plan.variant) == "cu130", plan
    note = next(n for n in plan.notes if n.startswith("passed over torch 2.15.0"))
    assert "infer cu130 from the nightlies" in note and "as read on 2026-12-02" in note
    asked = resolve(_rtx4090("590.44.01", "13.1"), TABLES, Wish(torch="2.15"), "linux-x86_64")
    assert asked.ok and asked.torch == "2.15.0", asked
    assert any("not from its build matrix" in u for u in asked.unverified), asked.unverified


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("confidence", "rumour", "'rumour' is not one of release, wheel, nightly"),
        ("source_date", "last week", "'last week' is not YYYY-MM-DD"),
    ],
)
def test_a_rows_confidence_is_validated(
    tmp_path: Path, field: str, value: str, message: str
) -> None:
    for path in builtin_dir().glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    data = json.loads((tmp_path / "torch_releases.json").read_text())
    data["releases"][-1][field] = value
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    with pytest.raises(TableError, match=message):
        load_tables(tmp_path)


def test_a_nightly_row_is_never_a_fit_on_its_own(tmp_path: Path) -> None:
    for path in builtin_dir().glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    data = json.loads((tmp_path / "torch_releases.json").read_text())
    data["releases"][-1]["confidence"] = "nightly"
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    tables = load_tables(tmp_path)
    plan = resolve(_rtx4090("595.45.04", "13.2"), tables, Wish(), "linux-x86_64")
    assert plan.ok and plan.torch is not None and not plan.torch.startswith("2.15"), plan
    assert any("from nightly builds only" in n for n in plan.notes), plan.notes
