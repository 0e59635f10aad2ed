"""`envcheck compare`'s outputs: the terminal text and the JSON document.

The text reads like `envcheck check`'s report (the same finding blocks), with machines named
as Slurm host lists so that a thousand machines stay a screenful.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

from .._version import __version__
from ..values import Severity
from .findings_text import finding_lines
from .style import Style
from .wrap import command_width, terminal_width, wrap

if TYPE_CHECKING:
    from ..fleet.compare import FleetReport

FLEET_SCHEMA_VERSION = 1


def render_fleet_text(report: FleetReport, color: bool = False, width: Optional[int] = None) -> str:
    from ..fleet.hostlist import count

    s = Style(color)
    commands = width if width is not None else command_width(terminal_width())
    width = width if width is not None else terminal_width()
    names = count(report.machines) if report.machines else "no machines"
    lines = wrap(f"envcheck {__version__} compare  {names}", width, rest="  ")
    for f in report.findings:
        lines.append("")
        lines += finding_lines(f, s, width, commands)
    lines.append("")
    if report.not_compared:
        lines += wrap(
            "Not compared (no report has it): "
            + ", ".join(report.not_compared)
            + " (the deep probe's facts: probe --json without --no-deep)"
            * any(n in report.not_compared for n in ("NCCL", "cuDNN")),
            width,
            rest="  ",
        )
    for note in report.notes:
        lines += wrap(f"note: {note}", width, rest="      ")
    for bad in report.unreadable:
        lines += wrap(f"unreadable: {bad.source}: {bad.why}", width, rest="      ")
    lines += ["", s(verdict_line(report), "bold")]
    return "\n".join(lines) + "\n"


def verdict_line(report: FleetReport) -> str:
    tally = {sev: sum(f.severity is sev for f in report.findings) for sev in Severity}
    counts = (
        f"{tally[Severity.ERROR]} error(s), {tally[Severity.WARNING]} warning(s), "
        f"{tally[Severity.INFO]} info"
    )
    if report.unreadable:
        counts += f"; {len(report.unreadable)} report{'s' * (len(report.unreadable) > 1)} could not be read"
    why = {
        "NOT COMPARED": f"{len(report.machines)} report(s) read, two or more are needed",
        "DIFFER": f"the job may break across these machines ({counts})",
        "COMPATIBLE": f"nothing found that breaks a job across these machines ({counts})",
    }
    return f"{report.verdict}: {why[report.verdict]}"


def fleet_document(report: FleetReport) -> Dict[str, Any]:
    """`envcheck compare --json` (docs/json.md): the findings, each difference as data, the
    value of every compared fact per machine."""
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "envcheck_version": __version__,
        "command": "compare",
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "machines": list(report.machines),
        "findings": [f.to_dict() for f in report.findings],
        "differences": [
            {
                "fact": d.aspect.label,
                "code": d.aspect.code,
                "majority": d.majority,
                "groups": [{"value": v, "machines": list(n)} for v, n in d.groups],
                "unknown": list(d.unknown),
            }
            for d in report.differences
        ],
        "not_compared": list(report.not_compared),
        "values": report.values,
        "unreadable": [{"source": u.source, "why": u.why} for u in report.unreadable],
        "notes": list(report.notes),
    }


__all__ = ["FLEET_SCHEMA_VERSION", "fleet_document", "render_fleet_text", "verdict_line"]
