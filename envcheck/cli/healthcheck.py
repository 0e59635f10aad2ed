"""`envcheck healthcheck` in the group: the one click command of envcheck.healthcheck_command, which
the console script also runs without the group (envcheck._entry's fast path)."""

from __future__ import annotations

from ..healthcheck_command import command as healthcheck

__all__ = ["healthcheck"]
