"""Findings as a terminal report and as a versioned JSON document."""

from __future__ import annotations

import shutil
import textwrap
from typing import Any, Dict, List, Optional

from .._version import __version__
from ..facts import Facts
from ..findings import SEVERITIES, Finding
from ..tables import Tables
from .style import Style

REPORT_SCHEMA_VERSION = 1
_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}
_MARK = {"error": "x", "warning": "!", "info": "i"}


def summary(findings: List[Finding]) -> Dict[str, int]:
    return {sev: sum(1 for f in findings if f.severity == sev) for sev in SEVERITIES}


def ready(findings: List[Finding], strict: bool = False) -> bool:
    bad = ("error", "warning") if strict else ("error",)
    return not any(f.severity in bad for f in findings)


def _machine_line(facts: Facts) -> str:
    gpus = [g.name or "GPU" for g in facts.nvidia.gpus]
    gpu = f"{len(gpus)}x {gpus[0]}" if gpus and len(set(gpus)) == 1 else ", ".join(gpus) or "no GPU"
    torch = f"torch {facts.torch.version}" if facts.torch.installed else "no torch"
    driver = f"driver {facts.nvidia.driver_version}" if facts.nvidia.driver_version else "no driver"
    return f"{torch} · Python {facts.python.version} · {driver} · {gpu}"


def render_findings(
    facts: Facts,
    findings: List[Finding],
    tables: Tables,
    color: bool = False,
    strict: bool = False,
    width: Optional[int] = None,
    command: str = "check",
) -> str:
    """The terminal report; fixes are wrapped to ``width`` (the terminal's, at most 100)."""
    s = Style(color)
    if width is None:
        width = min(100, shutil.get_terminal_size((100, 24)).columns)
    lines = [s(f"envcheck {__version__} {command}", "bold") + s(f"  {_machine_line(facts)}", "dim")]
    if facts.overrides:
        lines.append(s("overridden from the environment: " + ", ".join(facts.overrides), "yellow"))
    for finding in findings:
        sev = finding.severity
        lines.append("")
        head = s(f"{_MARK[sev]} {sev.upper()}", _COLOR[sev], "bold")
        lines.append(f"{head} {s(finding.code, 'bold')} {finding.title}")
        for item in finding.evidence:
            if item:
                for i, part in enumerate(item.splitlines()):
                    lines.append(f"    {s('·' if i == 0 else ' ', 'dim')} {s(part, 'dim')}")
        if finding.fix:
            wrapped = textwrap.wrap(finding.fix, width=max(40, width - 9)) or [""]
            lines.append(f"    {s('fix:', 'green')} {wrapped[0]}")
            lines.extend(f"         {more}" for more in wrapped[1:])
        if finding.command:
            lines.append(f"    {s('$', 'green')} {finding.command}")
    counts = summary(findings)
    lines.append("")
    verdict = "ready" if ready(findings, strict) else "not ready"
    tone = "green" if verdict == "ready" else "red"
    detail = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in counts.items())
    as_of = min(f.as_of for f in tables.files.values())
    lines.append(
        f"{s(verdict.upper(), tone, 'bold')}: {detail}  " + s(f"(tables as of {as_of})", "dim")
    )
    return "\n".join(lines) + "\n"


def report_dict(
    facts: Facts, findings: List[Finding], tables: Tables, strict: bool = False
) -> Dict[str, Any]:
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "envcheck_version": __version__,
        "ready": ready(findings, strict),
        "strict": strict,
        "summary": summary(findings),
        "findings": [f.to_dict() for f in findings],
        "tables": {
            name: {"as_of": t.as_of, "path": str(t.path), "builtin": t.builtin}
            for name, t in tables.files.items()
        },
        "facts": facts.to_dict(),
    }
