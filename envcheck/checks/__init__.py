"""The checks: pure functions ``(Facts, Tables) -> [Finding]``, one module per concern.

``run_checks`` runs them all. A check that raises is a bug in envcheck; it is
reported as a finding (INT001) and the other checks still run, so one bad rule
never hides the rest of the report. Selection (``--ignore``), the verdict and the
install advice are the core's (``envcheck.core``), decided once for every front end.
"""

from __future__ import annotations

from typing import Callable, List, Sequence

from ..facts import Facts
from ..findings import Finding, sort_key
from ..rules import RULES
from ..tables import Tables
from . import (
    arch,
    build,
    driver,
    health,
    jetson,
    links,
    packages,
    python,
    runtime,
    system,
    tables_age,
    toolchain,
)

Check = Callable[[Facts, Tables], List[Finding]]

CHECKS: Sequence[Check] = (
    build.check,
    jetson.check,
    driver.check,
    arch.check,
    python.check,
    packages.check,
    runtime.check,
    toolchain.check,
    health.check,
    links.check,
    system.check,
    tables_age.check,
)
INTERNAL = RULES["INT001"]


def run_checks(facts: Facts, tables: Tables) -> List[Finding]:
    """Every check's findings, sorted; nothing is dropped here."""
    findings: List[Finding] = []
    for check in CHECKS:
        try:
            findings.extend(check(facts, tables))
        except Exception as exc:  # a bug in one rule must not hide the others
            name = f"{check.__module__}.{check.__name__}"
            findings.append(
                INTERNAL(
                    f"{name} failed: {type(exc).__name__}: {exc}",
                    [name],
                    "Please report this with `envcheck probe --json` attached.",
                )
            )
    return sorted(findings, key=sort_key)


__all__ = ["CHECKS", "RULES", "run_checks"]
