"""A Report as the terminal report a person reads: findings with evidence and fix, the
follow-ons under their root cause, the smoke results, one verdict."""

from __future__ import annotations

import shutil
import textwrap
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from .._version import __version__
from ..facts import Facts
from ..findings import Finding
from .style import Style

if TYPE_CHECKING:
    from ..core import Report

REPORT_SCHEMA_VERSION = 1
_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}
_MARK = {"error": "x", "warning": "!", "info": "i"}


def _machine_line(facts: Facts, observed: Optional[Iterable[str]] = None) -> str:
    """torch · Python · driver · GPUs. For a pasted report (``observed``: the Facts sections
    the text gave), a section it did not give is "not in the text", never "no torch"."""
    seen = None if observed is None else set(observed)
    if seen is not None and "nvidia" not in seen:
        nvidia = "driver and GPUs: not in the text"
    else:
        names = [g.name or "GPU" for g in facts.nvidia.gpus]
        one = names and len(set(names)) == 1
        gpus = f"{len(names)}x {names[0]}" if one else ", ".join(names) or "no GPU"
        driver = facts.nvidia.driver_version
        nvidia = f"{'driver ' + driver if driver else 'no driver'} · {gpus}"
    if seen is not None and "torch" not in seen:
        torch = "torch: not in the text"
    else:
        torch = f"torch {facts.torch.version}" if facts.torch.installed else "no torch"
    if seen is not None and "python" not in seen:
        python = "Python: not in the text"
    else:
        python = f"Python {facts.python.version}"
    return f"{torch} · {python} · {nvidia}"


def _finding(f: Finding, s: Style, width: int, indent: str = "") -> List[str]:
    sev = f.severity.value
    head = s(f"{_MARK[sev]} {sev.upper()}", _COLOR[sev], "bold")
    lines = [f"{indent}{head} {s(f.code, 'bold')} {f.title}"]
    for item in f.evidence:
        for i, part in enumerate(item.splitlines()):
            lines.append(f"{indent}    {s('·' if i == 0 else ' ', 'dim')} {s(part, 'dim')}")
    if f.fix:
        wrapped = textwrap.wrap(f.fix, width=max(40, width - 9 - len(indent))) or [""]
        lines.append(f"{indent}    {s('fix:', 'green')} {wrapped[0]}")
        lines.extend(f"{indent}         {more}" for more in wrapped[1:])
    if f.command:
        for i, part in enumerate(f.command.splitlines()):
            lines.append(f"{indent}    {s('$' if i == 0 else ' ', 'green')} {part}")
    return lines


def render_text(report: Report, color: bool = False, width: Optional[int] = None) -> str:
    """The terminal report; fixes are wrapped to ``width`` (the terminal's, at most 100)."""
    s = Style(color)
    if width is None:
        width = min(100, shutil.get_terminal_size((100, 24)).columns)
    facts = report.facts
    lines = [
        s(f"envcheck {__version__} {report.command}", "bold")
        + s(f"  {_machine_line(facts, (report.diagnosis or {}).get('observed'))}", "dim")
    ]
    if facts.python.chosen_because:  # the console script chose an interpreter: say which, why
        lines.append(s(f"checking {facts.python.executable}: {facts.python.chosen_because}", "dim"))
    if report.diagnosis:
        lines.append(f"Read from the text: {', '.join(report.diagnosis['read'])}")
    if facts.overrides:
        lines.append(s("overridden from the environment: " + ", ".join(facts.overrides), "yellow"))
    for root in report.roots:
        lines.append("")
        lines += _finding(root, s, width)
        for follow in report.follow_ons(root):
            lines.append(s(f"    follows from {root.code}:", "dim"))
            lines += _finding(follow, s, width, indent="    ")
    advice = report.install
    if advice is not None and advice.command is None:
        lines += ["", "No torch fits this machine for the install fix:"]
        lines += [f"  - {c}" for c in advice.plan.conflicts]
        lines += [f"  ways out: {w}" for w in advice.plan.ways_out]
    if report.smoke:
        from .smoke_text import result_lines

        lines.append("")
        lines += [line for r in report.smoke for line in result_lines(r, color)]
    if report.diagnosis and report.diagnosis.get("missing"):
        d = report.diagnosis
        lines += [
            "",
            f"Not in the text: {', '.join(d['missing'])}; checks not run: {', '.join(d['not_judged'])}",
        ]
    if report.diagnosis:
        lines += [f"note: {n}" for n in report.diagnosis.get("notes", [])]
    lines.append("")
    detail = report.counts_text()
    tone = "green" if report.ready else "red"
    verdict = str(report.verdict).upper()
    if report.ready and report.unverified:  # unknown is never plain "fine"
        tone = "yellow"
        verdict += f" (NOT VERIFIED: {', '.join(report.unverified)})"
    lines.append(
        f"{s(verdict, tone, 'bold')}: {detail}  "
        + s(f"(tables as of {report.tables_as_of})", "dim")
    )
    return "\n".join(lines) + "\n"


def report_dict(report: Report) -> Dict[str, Any]:
    """The versioned JSON document (docs/facts.md, "The report")."""
    out: Dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "envcheck_version": __version__,
        "command": report.command,
        "verdict": report.verdict.value,
        "ready": report.ready,
        "unverified": list(report.unverified),
        "strict": report.strict,
        "summary": report.counts(),
        "findings": [f.to_dict() for f in report.findings],
        "install": report.install.to_dict() if report.install else None,
        "requirements": report.requirements,
        "ignored": list(report.ignored),
        "not_run": [{"code": n.code, "why": n.why} for n in report.not_run],
        "smoke": [r.to_dict() for r in report.smoke],
        "tables": {name: dict(t) for name, t in report.tables.items()},
        "facts": report.facts.to_dict(),
    }
    if report.diagnosis is not None:
        out.update(report.diagnosis)
    return out
