"""pytest configuration shared by every test module (helpers live in tests/fixtures.py)."""

from __future__ import annotations

import pytest

from tests.fixtures import TABLES, profile


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch):
    """The width of the terminal the tests run in is no input (pytest-xdist's workers, for
    one, are given COLUMNS=80): a test that needs a width sets COLUMNS itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def tables():
    """The frozen fixture tables."""
    return TABLES


@pytest.fixture
def load_profile():
    return profile
