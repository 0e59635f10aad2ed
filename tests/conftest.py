"""pytest configuration shared by every test module (helpers live in tests/fixtures.py)."""

from __future__ import annotations

import pytest

from tests.fixtures import TABLES, profile


@pytest.fixture
def tables():
    """The frozen fixture tables."""
    return TABLES


@pytest.fixture
def load_profile():
    return profile
