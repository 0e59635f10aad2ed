"""The project's code as findings (``envcheck check --code``): the code scan (envcheck.scan)
run against the torch of these facts, each change the code uses as one finding with its
places as evidence.

COD001: a use that breaks on this torch; COD002: a deprecated use (it still works, and warns);
COD003: the torch is newer than the change table knows, so its changes are not judged.
"""

from __future__ import annotations

from typing import List, Optional

from ..compat import torch_version
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..scan import ScanResult, judged_torch, load_changes, scan

SHOWN = 5  # places listed per finding; the scan's own formats list every one


def scan_for(facts: Facts, path: str, tables_dir: Optional[str] = None) -> ScanResult:
    """Scan ``path`` against the torch these facts hold (none: the newest the table covers,
    and the result says so)."""
    table = load_changes(tables_dir)
    torch, why = judged_torch(table, torch_version(facts), "the torch of this environment")
    return scan(path, torch, table, torch_from=why)


def code_findings(result: ScanResult) -> List[Finding]:
    findings = []
    for change, uses in result.by_change():
        rule = RULES["COD001" if change.breaks else "COD002"]
        count = f"{len(uses)} use{'s' if len(uses) != 1 else ''}"
        title = (
            f"{change.release} {change.kind.value} {change.match.describe()}: {count} in the code"
        )
        evidence = [change.what] + [f"{u.file}:{u.line}  {u.text}" for u in uses[:SHOWN]]
        if len(uses) > SHOWN:
            evidence.append(f"and {len(uses) - SHOWN} more (envcheck scan lists every one)")
        findings.append(rule(title, evidence, fix=change.fix))
    if result.unknown:
        findings.append(RULES["COD003"](result.unknown, [f"scanned {result.root}"]))
    if result.truncated:  # never a silent cut: the findings say the list is not whole
        findings.append(RULES["COD003"]("more uses than the scan lists", [result.summary()]))
    return findings


__all__ = ["code_findings", "scan_for"]
