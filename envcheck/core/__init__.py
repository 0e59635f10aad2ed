"""The core: ``envcheck.check(...) -> Report``, the one place every front end goes through.

- :mod:`.pipeline`: :func:`check` runs the checks, the project's requirements, the smoke
  results and the pasted messages into one list of findings, applies the selection, groups
  follow-ons, decides the install advice and the verdict (envcheck.verdict) once;
- :mod:`.report`: the frozen :class:`Report` (and its :class:`Advice`) formats render;
- :mod:`.smoke`: where the smoke tests run, the busbw their links allow, their findings;
- :mod:`.script`: ``envcheck.require()``, the same run for a training script.
"""

from __future__ import annotations

from ..verdict import Verdict
from .pipeline import LIVE_SECTIONS, check, selection
from .report import Advice, NotRun, Report
from .script import require
from .smoke import (
    BUSBW_JUDGED_BYTES,
    BUSBW_WARN_FRACTION,
    SmokeTargets,
    smoke_devices,
    smoke_findings,
    smoke_targets,
    with_expected,
)

__all__ = [
    "BUSBW_JUDGED_BYTES",
    "BUSBW_WARN_FRACTION",
    "LIVE_SECTIONS",
    "Advice",
    "NotRun",
    "Report",
    "SmokeTargets",
    "Verdict",
    "check",
    "require",
    "selection",
    "smoke_devices",
    "smoke_findings",
    "smoke_targets",
    "with_expected",
]
