"""Every command prints byte for byte what it printed when the outputs under tests/golden/
were written (see tests/golden/cases.py): a refactor cannot change what a user reads."""

from __future__ import annotations

import difflib

import pytest

from tests.golden.cases import OUTPUTS, Case, cases, run


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.name)
def test_output_is_unchanged(case: Case) -> None:
    want = (OUTPUTS / f"{case.name}.txt").read_text(encoding="utf-8")
    got = run(case)
    assert got == want, "".join(
        difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now")
    )
