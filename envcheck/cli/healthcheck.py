"""`envcheck healthcheck` in the group: the one click command of envcheck.healthcheck, which
the console script also runs without the group (envcheck._entry's fast path)."""

from __future__ import annotations

from ..healthcheck import command as healthcheck

__all__ = ["healthcheck"]
