"""The checks: pure functions ``(Facts, Tables) -> [Finding]``, one module per concern.

``run_checks`` runs them all. A check that raises is a bug in envcheck; it is
reported as a finding (INT001) and the other checks still run, so one bad rule
never hides the rest of the report.
"""

from __future__ import annotations

from typing import Callable, Iterable, List, Sequence

from ..facts import Facts
from ..findings import Finding, Rule, sort_key
from ..tables import Tables
from . import arch, build, driver, health, packages, python, runtime, system, tables_age
from .catalog import RULES

Check = Callable[[Facts, Tables], List[Finding]]

CHECKS: Sequence[Check] = (
    build.check,
    driver.check,
    arch.check,
    python.check,
    packages.check,
    runtime.check,
    health.check,
    system.check,
    tables_age.check,
)
INTERNAL = Rule("INT001", "check-crashed", "warning", "an envcheck check failed (a bug)")


def run_checks(facts: Facts, tables: Tables, ignore: Iterable[str] = ()) -> List[Finding]:
    ignored = {item.strip().lower() for item in ignore}  # codes or names, any case
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
    kept = [f for f in findings if f.code.lower() not in ignored and f.name not in ignored]
    return sorted(kept, key=sort_key)


__all__ = ["CHECKS", "RULES", "run_checks"]
