"""GPU names as machines and users spell them -> compute capability (NVIDIA) or gfx target (AMD).

tests/gpu_names.tsv holds the names: every product name NVIDIA's driver reports through NVML
(the device-ID table of NVIDIA/open-gpu-kernel-modules, releases 515-595), with the capability of
the device's chip; nvidia-smi, lspci, rocm-smi/amd-smi and user spellings; and names that must
stay unknown (made up, placeholders, too short to tell), for which no guess is allowed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import List, NamedTuple, Optional

import pytest

from envcheck.tables.load import builtin_dir, load_tables

TABLES = load_tables()
SHARE = 0.97


class Row(NamedTuple):
    name: str
    expected: str  # "8.6", "gfx942" or "unknown"
    spelling: str
    source: str


def _rows() -> List[Row]:
    with open(Path(__file__).with_name("gpu_names.tsv"), encoding="utf-8", newline="") as fh:
        return [Row(**r) for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]


ROWS = _rows()
REAL = [r for r in ROWS if r.expected != "unknown"]
MUST_NOT = [r for r in ROWS if r.expected == "unknown"]


def resolve(name: str, expected: str) -> Optional[str]:
    return TABLES.gfx_of(name) if expected.startswith("gfx") else TABLES.capability_of(name)


def test_the_list_is_broad_and_sourced() -> None:
    assert len(REAL) >= 200 and len(MUST_NOT) >= 5
    assert all(r.source.strip() for r in ROWS)
    kinds = {r.spelling for r in REAL}
    assert {"nvml", "nvidia-smi", "lspci", "rocm-smi", "user"} <= kinds
    assert len({r.name for r in ROWS}) == len(ROWS)


def test_share_of_real_names_resolved() -> None:
    wrong = [(r.name, r.expected, resolve(r.name, r.expected)) for r in REAL]
    wrong = [w for w in wrong if w[1] != w[2]]
    share = 1 - len(wrong) / len(REAL)
    print(f"\n{len(REAL) - len(wrong)}/{len(REAL)} real GPU names resolved ({share:.1%})")
    for vendor, rows in (
        ("NVIDIA", [r for r in REAL if not r.expected.startswith("gfx")]),
        ("AMD", [r for r in REAL if r.expected.startswith("gfx")]),
    ):
        right = sum(1 for r in rows if resolve(r.name, r.expected) == r.expected)
        print(f"  {vendor}: {right}/{len(rows)} ({right / len(rows):.1%})")
    assert share >= SHARE, wrong


def test_a_name_is_looked_up_among_its_own_vendors_gpus() -> None:
    """Both vendors' "840M" read "840m" once their words are dropped: the vendor the name
    says picks the table, and a bare "840M" that could be either is not guessed."""
    assert TABLES.gfx_of("AMD Radeon 840M Graphics") == "gfx1152"
    assert TABLES.capability_of("AMD Radeon 840M Graphics") is None
    assert str(TABLES.capability_of("NVIDIA GeForce 840M")) == "5.0"
    assert TABLES.gfx_of("NVIDIA GeForce 840M") is None
    assert TABLES.capability_of("840M") is None and TABLES.gfx_of("840M") is None


@pytest.mark.parametrize("row", REAL, ids=[r.name for r in REAL])
def test_real_name(row: Row) -> None:
    assert resolve(row.name, row.expected) == row.expected


@pytest.mark.parametrize("row", MUST_NOT, ids=[r.name for r in MUST_NOT])
def test_must_not_resolve(row: Row) -> None:
    assert TABLES.capability_of(row.name) is None
    assert TABLES.gfx_of(row.name) is None


def test_vendors_do_not_cross() -> None:
    assert TABLES.capability_of("AMD Instinct MI300X") is None
    assert TABLES.gfx_of("NVIDIA H100 80GB HBM3") is None


def test_word_prefix_guarantees() -> None:
    assert TABLES.capability_of("NVIDIA A10") == "8.6"
    assert TABLES.capability_of("NVIDIA A100-SXM4-80GB") == "8.0"
    assert TABLES._gpu_model("NVIDIA GeForce RTX 3090 Ti").name == "GeForce RTX 3090 Ti"
    assert TABLES._gpu_model("NVIDIA GeForce RTX 3090").name == "GeForce RTX 3090"
    assert TABLES.capability_of("NVIDIA GeForce RTX 3050 A Laptop GPU") == "8.9"  # AD106
    assert TABLES.capability_of("NVIDIA GeForce RTX 3050 Laptop GPU") == "8.6"  # GA107
    assert TABLES.capability_of("NVIDIA H20") == "9.0"
    assert TABLES.capability_of("NVIDIA H200") == "9.0"
    assert TABLES.gfx_of("AMD Radeon RX 7900 XT") == "gfx1100"


def test_lspci_alternatives_must_agree() -> None:
    assert TABLES.gfx_of("Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]") == "gfx1100"
    # one device ID, two products of different targets: no answer rather than a guess
    assert TABLES.gfx_of("Navi 3x [Radeon RX 7900 XT/7800 XT]") is None


def test_shipped_gpu_records_are_sourced() -> None:
    data = json.loads((builtin_dir() / "gpu_arches.json").read_text(encoding="utf-8"))
    for record in data["gpus"]:
        assert record["sources"], record["name"]
        assert all(isinstance(s, str) and s.strip() for s in record["sources"]), record["name"]
        assert (record.get("capability") is None) != (record.get("gfx") is None), record["name"]


def test_a_reported_names_record_is_remembered_within_a_bound() -> None:
    """A pasted report's GPUs are looked up dozens of times (every driver verdict asks whether
    one is a Jetson), so Tables remembers each name's record; names come from pasted text, so
    it remembers at most MAX_REMEMBERED of them, and a name past the bound is still answered."""
    from envcheck._record import replace
    from envcheck.tables.gpu_records import MAX_REMEMBERED

    tables = replace(load_tables())  # its own memory, not the shared tables'
    assert str(tables.capability_of("NVIDIA A100-SXM4-80GB")) == "8.0"
    for i in range(MAX_REMEMBERED + 50):
        tables.capability_of(f"NVIDIA Made Up {i}")
    assert len(tables._reported) == MAX_REMEMBERED
    assert str(tables.capability_of("NVIDIA GeForce RTX 4090")) == "8.9"  # past the bound
    assert "NVIDIA GeForce RTX 4090" not in tables._reported
    assert str(tables.capability_of("NVIDIA A100-SXM4-80GB")) == "8.0"  # remembered
