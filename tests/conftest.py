"""pytest configuration shared by every test module (helpers live in tests/fixtures.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from typing import Any, Dict, Tuple

import pytest

from tests.fixtures import TABLES, profile
from tests.runner import NO_CACHE, TODAY_EPOCH, envcheck


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch):
    """The width of the terminal the tests run in is no input (pytest-xdist's workers, for
    one, are given COLUMNS=80): a test that needs a width sets COLUMNS itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def no_updated_tables(monkeypatch):
    """In-process runs read no updated tables of the user's cache folder, and date the
    tables' age on the suite's day, as the CLI runs of tests.runner do."""
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", NO_CACHE)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", TODAY_EPOCH)


@pytest.fixture
def tables():
    """The frozen fixture tables."""
    return TABLES


@pytest.fixture
def load_profile():
    return profile


@pytest.fixture(scope="session")
def cpu_smoke() -> Tuple[subprocess.CompletedProcess, Dict[str, Any]]:
    """One real `envcheck smoke --json` on this machine's CPU (about 12 s), shared by the
    tests that only read what it printed: its exit, its JSON, its figures."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed in this environment")
    run = envcheck("smoke", "--json", "--timeout", "120")
    return run, json.loads(run.stdout)


# Fixtures that run real torch children for many seconds: a test that takes one is slow, and
# `python -m pytest` (addopts: -m "not slow") leaves it to `python -m pytest -m slow`.
SLOW_FIXTURES = frozenset({"cpu_smoke"})


def pytest_collection_modifyitems(items: list) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
