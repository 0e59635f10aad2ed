"""Finding: one thing a check has to say about a machine, with its evidence and fix.

Codes are stable, like a linter's rule codes: CI configurations ignore them by
code or name, and docs/checks.md has a section for each. Severity decides the
exit code: an ``error`` means "this will not work", a ``warning`` "this works
badly or may break", ``info`` is worth knowing. Every rule lives in one registry,
``envcheck.rules``.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Optional, Sequence, Tuple, Union

from ._record import record, replace
from .values import Severity

SEVERITIES = tuple(s.value for s in Severity)


@record(frozen=True)
class Rule:
    code: str  # "DRV001"
    name: str  # "driver-too-old"
    # the usual severity (given as "error" or Severity.ERROR); a check may change it per finding
    severity: Union[Severity, str]
    summary: str  # what the rule is about, one line
    # The Facts sections (and stages: "torch_runtime" needs the deep probe, "smoke" the
    # smoke tests, "requirements" a project config, "text" a pasted report) the rule needs;
    # without them it is not judged, and reports say so.
    needs: FrozenSet[str] = frozenset()
    install_fix: bool = False  # fixed by installing other torch packages: the resolver's plan
    # Codes of findings this one follows from when they are present (one root cause, one
    # error: a CPU torch's failed GPU requirement is grouped under the CPU torch).
    follows: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity.parse(self.severity))

    @property
    def family(self) -> str:
        return self.code.rstrip("0123456789")

    def __call__(
        self,
        title: str,
        evidence: Sequence[str],
        fix: Optional[str] = None,
        command: Optional[str] = None,
        severity: Optional[str] = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=Severity.parse(severity or self.severity),
            title=title,
            evidence=tuple(evidence),
            fix=fix,
            command=command,
        )


@record(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity  # given as a string, stored as a Severity
    title: str
    evidence: Tuple[str, ...] = ()
    fix: Optional[str] = None
    command: Optional[str] = None  # set by the core from the one install plan
    caused_by: Optional[str] = None  # the code of the finding this one follows from

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity.parse(self.severity))
        object.__setattr__(self, "evidence", tuple(self.evidence))

    def but(self, **changes: Any) -> Finding:
        """A copy with some fields changed (findings are values)."""
        return replace(self, **changes)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "title": self.title,
            "evidence": list(self.evidence),
            "fix": self.fix,
            "command": self.command,
            "caused_by": self.caused_by,
        }


def sort_key(finding: Finding) -> Tuple[int, str]:
    return (finding.severity.rank, finding.code)


__all__ = ["SEVERITIES", "Finding", "Rule", "sort_key"]
