"""Finding: one thing a check has to say about a machine, with its evidence and fix.

Codes are stable, like a linter's rule codes: CI configurations ignore them by
name, and docs/checks.md has a section for each. Severity decides the exit code:
an ``error`` means "this will not work", a ``warning`` "this works badly or may
break", ``info`` is worth knowing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Rule:
    code: str  # "DRV001"
    name: str  # "driver-too-old"
    severity: str  # the usual severity; a check may raise or lower it for one finding
    summary: str  # what the rule is about, one line

    def __call__(
        self,
        title: str,
        evidence: List[str],
        fix: Optional[str] = None,
        command: Optional[str] = None,
        severity: Optional[str] = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            title=title,
            evidence=list(evidence),
            fix=fix,
            command=command,
        )


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    title: str
    evidence: List[str] = field(default_factory=list)
    fix: Optional[str] = None
    command: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def sort_key(finding: Finding) -> tuple:
    return (SEVERITIES.index(finding.severity), finding.code)
