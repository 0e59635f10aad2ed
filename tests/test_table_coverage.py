"""tools/table_coverage.py counts a missing fact as missing (the figures of closing notes)."""

from __future__ import annotations

import json
import shutil

from envcheck.tables import load_tables
from tests.fixtures import FIXTURE_TABLES_DIR
from tools.table_coverage import arch_coverage, report


def test_a_build_without_an_arch_list_is_counted_as_missing(tmp_path) -> None:
    for path in FIXTURE_TABLES_DIR.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    before = arch_coverage(load_tables(tmp_path).releases)["linux-x86_64"]
    data = json.loads((tmp_path / "torch_releases.json").read_text())
    release = next(r for r in data["releases"] if r.get("arch_lists"))
    dropped = len(release["arch_lists"])
    release["arch_lists"] = {}
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    tables = load_tables(tmp_path)
    after = arch_coverage(tables.releases)["linux-x86_64"]
    assert after == (before[0] - dropped, before[1])
    lines = report(tables, tmp_path)
    assert any(f"{after[0]}/{after[1]}" in line and "linux-x86_64" in line for line in lines)
