"""The verdict: one rule, for every command, from what was found to ready or not and the exit.

``envcheck check`` and ``diagnose`` (the core's Report), ``envcheck smoke``, ``install`` (a plan
that fits, and what ``--run`` installed), ``healthcheck`` and the distributed smoke all end
here: findings and failures go in, a :class:`Verdict` comes out, and its ``exit_code`` is what
the process exits with. No command decides "ready" its own way.
"""

from __future__ import annotations

import enum

from . import exitcodes

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:  # only named in annotations: the healthcheck need not import findings
    from typing import Iterable

    from .findings import Finding
    from .values import Severity


class Verdict(str, enum.Enum):
    READY = "ready"
    NOT_READY = "not ready"

    def __str__(self) -> str:
        return self.value

    @property
    def exit_code(self) -> int:
        """0 ready, 1 not ready (envcheck.exitcodes): CI scripts branch on it."""
        return exitcodes.OK if self is Verdict.READY else exitcodes.NOT_READY


def failing(severity: Severity, strict: bool = False) -> bool:
    """Whether a finding of ``severity`` makes the verdict NOT_READY: an error always, a
    warning with ``strict``. (Severity is imported here: a healthcheck with no GPU decides
    from failures alone and never loads the value types.)"""
    from .values import Severity

    return severity is Severity.ERROR or (strict and severity is Severity.WARNING)


def decide(
    findings: Iterable[Finding] = (),
    *,
    strict: bool = False,
    failures: Iterable[object] = (),
    doubts: Iterable[object] = (),
) -> Verdict:
    """NOT_READY when a finding fails (:func:`failing`), when anything is in ``failures``
    (a failed or hung smoke test, a rank that failed or never reported, a health problem, an
    install that failed or installed something else, a plan that fits nothing), or, with
    ``strict``, anything in ``doubts`` (a GPU the smoke tests could not use). Else READY."""
    if any(True for _ in failures):
        return Verdict.NOT_READY
    if strict and any(True for _ in doubts):
        return Verdict.NOT_READY
    if any(failing(f.severity, strict) for f in findings):
        return Verdict.NOT_READY
    return Verdict.READY


__all__ = ["Verdict", "decide", "failing"]
