"""`envcheck compare --format markdown|html`: the findings, and a table of the machines by the
facts that differ, one row per combination of values (machines folded into host lists, so a
thousand machines make a few rows), values that differ from the majority marked.

Like every format it renders and decides nothing: the majority, the findings and the
machines' values are the FleetReport's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .._version import __version__
from ..rules import RULES
from ..values import Severity
from .charts import GREEN, RED
from .charts import escape_html as _e
from .fleet_text import verdict_line
from .html import _CSS, SEVERITY, _section, finding_html

if TYPE_CHECKING:
    from ..fleet.compare import FleetReport

Row = Tuple[Tuple[str, ...], List[str]]  # the values, in the differences' order; the machines


def table_rows(report: FleetReport) -> Tuple[List[str], List[Row]]:
    """The differing facts, and one row per combination of their values, most machines first."""
    facts = [d.aspect.label for d in report.differences]
    rows: Dict[Tuple[str, ...], List[str]] = {}
    for machine in report.machines:
        have = report.values.get(machine, {})
        rows.setdefault(tuple(have.get(f, "?") for f in facts), []).append(machine)
    return facts, sorted(rows.items(), key=lambda row: (-len(row[1]), row[1][0]))


def _odd(report: FleetReport, column: int, value: str) -> Optional[str]:
    """The severity of a cell that differs from its fact's majority (None when it does not)."""
    d = report.differences[column]
    if value == d.majority or value == "?":
        return None
    return str(Severity.parse(RULES[d.aspect.code].severity).value)


def _cell(value: str) -> str:
    """A value as a markdown table cell: a pipe would end the cell."""
    return value.replace("|", "\\|")


def render_fleet_markdown(report: FleetReport) -> str:
    from ..fleet.hostlist import fold

    lines = [f"## envcheck compare: {verdict_line(report)}", ""]
    for f in report.findings:
        lines.append(f"- **{f.severity.value.upper()} {f.code}** {f.title}")
        lines += [f"  - {e}" for e in f.evidence]
        if f.fix:
            lines.append(f"  - fix: {f.fix}")
        if f.command:
            lines += ["", "    ```sh", f"    {f.command}", "    ```"]
    facts, rows = table_rows(report)
    if facts:
        lines += ["", "| machines | " + " | ".join(facts) + " |"]
        lines.append("|---" * (len(facts) + 1) + "|")
        for values, machines in rows:
            cells = [
                f"**{_cell(v)}**" if _odd(report, i, v) else _cell(v) for i, v in enumerate(values)
            ]
            lines.append(f"| {len(machines)}: {fold(machines)} | " + " | ".join(cells) + " |")
    lines += [f"- unreadable: {u.source}: {u.why}" for u in report.unreadable]
    lines += [f"- note: {n}" for n in report.notes]
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"


def render_fleet_html(report: FleetReport) -> str:
    from ..fleet.hostlist import fold

    verdict = verdict_line(report)
    tone = GREEN if report.verdict == "COMPATIBLE" and not report.unreadable else RED
    facts, rows = table_rows(report)
    table = ["<table><tr><th>machines</th>" + "".join(f"<th>{_e(f)}</th>" for f in facts) + "</tr>"]
    for values, machines in rows:
        cells = []
        for i, value in enumerate(values):
            odd = _odd(report, i, value)
            style = f' class="state" style="background:{SEVERITY[odd]}"' if odd else ""
            cells.append(f"<td{style}>{_e(value)}</td>")
        table.append(f"<tr><td>{len(machines)}: {_e(fold(machines))}</td>{''.join(cells)}</tr>")
    table.append("</table>")
    problems = [f"<p>unreadable: {_e(u.source)}: {_e(u.why)}</p>" for u in report.unreadable]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>envcheck compare: {_e(verdict)}</title><style>{_CSS}</style></head><body>",
        f'<header class="verdict" id="verdict" style="background:{tone}">',
        f"<h1>envcheck compare: {_e(verdict)}</h1>"
        f"<p>{len(report.machines)} machines: {_e(fold(report.machines))}</p></header><main>",
        _section(
            "findings", "Findings", [finding_html(f) for f in report.findings] or ["<p>None.</p>"]
        ),
        _section(
            "machines",
            "Machines by the facts that differ",
            table if facts else ["<p>None differ.</p>"],
        ),
        *problems,
        f'<p class="muted">envcheck {_e(__version__)}</p></main></body></html>',
    ]
    return "\n".join(parts) + "\n"


__all__ = ["render_fleet_html", "render_fleet_markdown", "table_rows"]
