"""Shared test helpers: frozen fixture tables, machine profiles, and the core on them.

Logic tests run on ``tests/fixture_tables/`` (a frozen copy of the tables), so a
refresh of ``compat_tables/`` never hides a logic regression; the shipped tables
have their own suite (test_tables.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envcheck.core import Report, check
from envcheck.facts import Facts
from envcheck.tables import load_tables

HERE = Path(__file__).parent
PROFILES = HERE / "profiles"
FIXTURE_TABLES_DIR = HERE / "fixture_tables"
TABLES = load_tables(FIXTURE_TABLES_DIR)


def profile(name: str) -> Facts:
    return Facts.from_json((PROFILES / f"{name}.json").read_text())


def profile_names() -> list:
    return sorted(p.stem for p in PROFILES.glob("*.json"))


def report_of(facts: Facts, **kwargs: Any) -> Report:
    """The core on given Facts (nothing probed), without project requirements."""
    kwargs.setdefault("requirements", False)
    kwargs.setdefault("tables", TABLES)
    return check(facts=facts, **kwargs)


def finding(report: Report, code: str):
    (found,) = [f for f in report.findings if f.code == code]
    return found
