"""A Report as the terminal report a person reads: findings with evidence and fix, the
follow-ons under their root cause, the smoke results, one verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from .._version import __version__
from ..facts import Facts
from ..findings import Finding
from ..nvml_errors import NVML_NO_DRIVER
from .style import Style
from .wrap import command_lines, command_width, heading, terminal_width, wrap

if TYPE_CHECKING:
    from ..core import Report

REPORT_SCHEMA_VERSION = 1
_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}
_MARK = {"error": "x", "warning": "!", "info": "i"}


def machine_line(
    facts: Facts, observed: Optional[Iterable[str]] = None, unstated: Iterable[str] = ()
) -> str:
    """torch · Python · driver · GPUs. For a pasted report (``observed``: the Facts sections
    the text gave; ``unstated``: details of them it did not give), what the text did not
    give is "not in the text", never "no torch" or "no GPU"."""
    seen = None if observed is None else set(observed)
    lacks = set(unstated)
    if seen is not None and "nvidia" not in seen:
        nvidia = "driver and GPUs: not in the text"
    else:
        names = [g.name or "GPU" for g in facts.nvidia.gpus]
        one = names and len(set(names)) == 1
        gpus = f"{len(names)}x {names[0]}" if one else ", ".join(names) or "no GPU"
        if "nvidia.gpus" in lacks:
            gpus = "GPUs: not in the text"
        nvml = facts.nvidia.nvml
        unanswered = not nvml.ok and nvml.error is not None and nvml.error not in NVML_NO_DRIVER
        if unanswered and not names:  # NVML crashed, hung, was refused: not "no GPU"
            gpus = f"GPUs not known (NVML {nvml.error})"
        driver = facts.nvidia.driver_version
        supports = facts.nvidia.cuda_driver_version
        if driver:
            drv = f"driver {driver}"
        elif supports:
            drv = f"a driver for CUDA {supports}"
        elif unanswered:
            drv = "driver not known"
        else:
            drv = "driver: not in the text" if "nvidia.driver" in lacks else "no driver"
        nvidia = f"{drv} · {gpus}"
        amd = _amd_part(facts)
        if amd and not (driver or supports or facts.nvidia.gpus):
            nvidia = amd  # an AMD machine: "no driver · no GPU" said it had nothing
        elif amd:
            nvidia = f"{nvidia} · {amd}"
    if seen is not None and "torch" not in seen:
        torch = "torch: not in the text"
    else:
        torch = f"torch {facts.torch.version}" if facts.torch.installed else "no torch"
    if seen is not None and "python" not in seen:
        python = "Python: not in the text"
    else:
        python = f"Python {facts.python.version}"
    return f"{torch} · {python} · {nvidia}"


def _amd_part(facts: Facts) -> str:
    """``amdgpu 6.8.5 · 2x gfx942`` for the AMD GPUs, or "" when there are none."""
    if not facts.amd.gpus:
        return ""
    names = [g.gfx or "AMD GPU" for g in facts.amd.gpus]
    gpus = f"{len(names)}x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    driver = f"amdgpu {facts.amd.driver_version}" if facts.amd.driver_version else "amdgpu"
    return f"{driver} · {gpus}"


def finding_lines(f: Finding, s: Style, width: int, commands: int, indent: str = "") -> List[str]:
    sev = f.severity.value
    head = f"{_MARK[sev]} {sev.upper()}"
    lines = wrap(f"{head} {f.code} {f.title}", width, first=indent, rest=indent + "    ")
    lines[0] = (
        lines[0]
        .replace(head, s(head, _COLOR[sev], "bold"), 1)
        .replace(f" {f.code}", " " + s(f.code, "bold"), 1)
    )
    for item in f.evidence:
        for i, part in enumerate(item.splitlines()):
            mark = "· " if i == 0 else "  "
            lines += [
                s(line, "dim")
                for line in wrap(part, width, indent + "    " + mark, indent + "      ")
            ]
    if f.fix:
        fix = wrap(f.fix, width, first=indent + "    fix: ", rest=indent + "         ")
        fix[0] = fix[0].replace("fix:", s("fix:", "green"), 1)
        lines += fix
    if f.command:
        command = command_lines(
            f.command, commands, first=indent + "    $ ", rest=indent + "      "
        )
        command[0] = command[0].replace("$", s("$", "green"), 1)
        lines += command
    return lines


def render_text(report: Report, color: bool = False, width: Optional[int] = None) -> str:
    """The terminal report, every line fitted to ``width`` (default: the terminal's; see
    envcheck.report.wrap) without breaking a word or a command."""
    s = Style(color)
    commands = width if width is not None else command_width(terminal_width())
    if width is None:
        width = terminal_width()
    lines = _header(report, s, width)
    for root in report.roots:
        lines.append("")
        lines += finding_lines(root, s, width, commands)
        for follow in report.follow_ons(root):
            lines.append(s(f"    follows from {root.code}:", "dim"))
            lines += finding_lines(follow, s, width, commands, indent="    ")
    advice = report.install
    if advice is not None and advice.command is None:
        lines += ["", *wrap("No torch fits this machine for the install fix:", width, rest="  ")]
        lines += [x for c in advice.plan.conflicts for x in wrap(c, width, first="  - ")]
        lines += [x for w in advice.plan.ways_out for x in wrap(w, width, first="  ways out: ")]
    if report.smoke:
        from .smoke_text import result_lines

        lines.append("")
        lines += [line for r in report.smoke for line in result_lines(r, color, width)]
    lines += _diagnosis_notes(report, width)
    lines.append("")
    lines += _closing(report, s, width)
    return "\n".join(lines) + "\n"


def _header(report: Report, s: Style, width: int) -> List[str]:
    """The title and the machine, the interpreter checked and why, what was read from a
    pasted text, and the facts overridden from the environment."""
    facts = report.facts
    diagnosis = report.diagnosis or {}
    machine = machine_line(facts, diagnosis.get("observed"), diagnosis.get("unstated", ()))
    title = f"envcheck {__version__} {report.command}"
    header = heading(title, machine.split(" · "), width)
    header[0] = header[0].replace(title, s(title, "bold"), 1)
    lines = [header[0], *(s(h, "dim") for h in header[1:])]
    if facts.python.chosen_because:  # the console script chose an interpreter: say which, why
        checking = f"checking {facts.python.executable}: {facts.python.chosen_because}"
        lines += [s(line, "dim") for line in wrap(checking, width, rest="  ")]
    if report.diagnosis:
        lines += wrap(
            f"Read from the text: {', '.join(report.diagnosis['read'])}", width, rest="  "
        )
    if facts.overrides:
        overridden = "overridden from the environment: " + ", ".join(facts.overrides)
        lines += [s(line, "yellow") for line in wrap(overridden, width, rest="  ")]
    return lines


def _diagnosis_notes(report: Report, width: int) -> List[str]:
    """diagnose: what the text did not say (so which checks did not run), and the notes."""
    lines: List[str] = []
    if report.diagnosis and report.diagnosis.get("missing"):
        d = report.diagnosis
        lines.append("")
        lines += wrap(
            f"Not in the text: {', '.join(d['missing'])}; checks not run: {', '.join(d['not_judged'])}",
            width,
            rest="  ",
        )
    if report.diagnosis:
        lines += [x for n in report.diagnosis.get("notes", []) for x in wrap(n, width, "note: ")]
        needs = report.diagnosis.get("command_needs")
        if needs:
            lines += wrap(
                "no install command: it would be for a guessed machine; the text does not say "
                + ", ".join(needs),
                width,
                "note: ",
            )
    return lines


def _closing(report: Report, s: Style, width: int) -> List[str]:
    """The verdict line: READY (NOT VERIFIED where the tables do not know) or NOT READY,
    the counts, the tables' date."""
    tone = "green" if report.ready else "red"
    verdict = str(report.verdict).upper()
    if report.ready and report.unverified:  # unknown is never plain "fine"
        tone = "yellow"
        verdict += f" (NOT VERIFIED: {', '.join(report.unverified)})"
    age = f"(tables as of {report.tables_as_of}" + (
        f", {report.tables_from})" if report.tables_from else ")"
    )
    closing = wrap(f"{verdict}: {report.counts_text()}  {age}", width, rest="  ")
    closing[0] = closing[0].replace(verdict, s(verdict, tone, "bold"), 1)
    closing[-1] = closing[-1].replace(age, s(age, "dim"), 1)
    return closing


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
        "ignored_findings": list(report.ignored_findings),
        "not_run": [{"code": n.code, "why": n.why} for n in report.not_run],
        "smoke": [r.to_dict() for r in report.smoke],
        "tables": {name: dict(t) for name, t in report.tables.items()},
        "facts": report.facts.to_dict(),
    }
    if report.diagnosis is not None:
        out.update(report.diagnosis)
    return out
