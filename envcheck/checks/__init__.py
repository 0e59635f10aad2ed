"""The checks: pure functions ``(Facts, Tables) -> [Finding]``, one module per concern.

``run_checks`` runs them all. The checks whose fixes say what to install (or what toolkit
to build with) take the report's one install plan as a third argument: the core resolves
it once, so no fix can name another torch than the command under it. A check that raises
is a bug in envcheck; it is reported as a finding (INT001) and the other checks still run,
so one bad rule never hides the rest of the report. Selection (``--ignore``), the verdict and the
install advice are the core's (``envcheck.core``), decided once for every front end.

The catalogue (``CHECKS``, ``run_checks``) is in run.py and imported when first asked for
(PEP 562): the healthcheck imports one check, ``checks.health``, and must not load every
check, the resolver and the tables' reader with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._util import Planned
    from .run import CHECKS, RULES, run_checks

_FROM_RUN = ("CHECKS", "RULES", "Planned", "run_checks")


def __getattr__(name: str) -> Any:
    if name not in _FROM_RUN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.run"), name)
    globals()[name] = value
    return value


__all__ = ["CHECKS", "RULES", "Planned", "run_checks"]
