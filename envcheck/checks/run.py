"""Every check, in the order they run, and ``run_checks``: the catalogue the core runs."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence

from ..facts import Facts
from ..findings import Finding, sort_key
from ..rules import RULES
from ..tables import TableError, Tables
from . import (
    arch,
    build,
    cuda_builds,
    dependents,
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
from ._util import Planned, report_plan

Check = Callable[..., List[Finding]]  # (facts, tables), or (facts, tables, planned): PLANNED

CHECKS: Sequence[Check] = (
    build.check,
    jetson.check,
    driver.check,
    arch.check,
    python.check,
    packages.check,
    dependents.check,
    cuda_builds.check,
    runtime.check,
    toolchain.check,
    health.check,
    links.check,
    system.check,
    tables_age.check,
)
# The checks whose fixes explain the install plan: called with it as a third argument.
PLANNED = frozenset({build.check, driver.check, arch.check, runtime.check})
INTERNAL = RULES["INT001"]


def run_checks(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> List[Finding]:
    """Every check's findings, sorted; nothing is dropped here. ``planned``: the report's
    install plan (the core's); without one, the plan that keeps the installed torch where it
    fits."""
    findings: List[Finding] = []
    the_plan = report_plan(facts, tables, planned)
    for check in CHECKS:
        try:
            if check in PLANNED:
                findings.extend(check(facts, tables, the_plan))
            else:
                findings.extend(check(facts, tables))
        except TableError:  # tables that cannot be used are no rule's bug: the run says so
            raise
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


__all__ = ["CHECKS", "RULES", "Planned", "run_checks"]
