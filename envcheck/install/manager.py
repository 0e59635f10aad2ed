"""The package managers envcheck renders a plan for (the value lives in envcheck.values, so that
the CLI's --manager names it without importing the resolver)."""

from __future__ import annotations

from ..values import Manager

__all__ = ["Manager"]
