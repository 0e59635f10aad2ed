"""Reports for unattended runs: markdown, JUnit XML, GitHub Actions annotations.

JUnit gets one testcase per rule of the registry (and per smoke test), so CI
systems list what was checked, not only what failed: an error finding is a
failure, a warning or info finding is passed with its text in system-out, and a
rule that was not judged is skipped, never passed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional
from xml.etree import ElementTree as ET

from .._patterns import compile_on_use
from ..findings import Finding
from ..rules import RULES
from ..values import Severity, SmokeStatus
from .smoke_text import summary_line

if TYPE_CHECKING:
    from ..core import Report

_ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}  # noqa: RUF001 - the emoji, as GitHub renders it


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    from .findings_text import machine_line  # the one machine line, as the text report has it

    diagnosis = report.diagnosis or {}
    machine = machine_line(report.facts, diagnosis.get("observed"), diagnosis.get("unstated", ()))
    lines = [
        f"## envcheck: {'✅ ready' if report.ready else '❌ not ready'}",
        "",
        machine,
        "",
        report.counts_text(),
    ]
    if report.findings:
        lines += ["", "| | code | finding | fix |", "|---|---|---|---|"]
        for f in report.findings:
            fix = f.fix or ""
            if f.command:
                fix += f" `{f.command}`"
            title = f.title + (f" (follows from {f.caused_by})" if f.caused_by else "")
            lines.append(
                f"| {_ICON[f.severity.value]} | {f.code} | {_md_cell(title)} | {_md_cell(fix)} |"
            )
    if report.smoke:
        lines += [
            "",
            "| smoke test | device | result | seconds | figures |",
            "|---|---|---|---|---|",
        ]
        for r in report.smoke:
            lines.append(
                f"| {r.name} | {r.device} | {r.status!s} | {r.duration_s:.2f} | {_md_cell(summary_line(r))} |"
            )
    return "\n".join(lines) + "\n"


def render_junit(report: Report) -> str:
    """One testcase per rule of the registry: failed for an error finding, skipped for a
    rule that was not judged (the deep probe or the smoke tests did not run, a pasted
    report lacked the facts), passed otherwise; every finding's text is kept."""
    suites = ET.Element("testsuites", name="envcheck")
    _checks_suite(suites, report)
    if report.smoke:
        _smoke_suite(suites, report)
    ET.indent(suites)
    text = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _NOT_XML.sub("?", text) + "\n"


# What XML 1.0 carries in no form, escaped or not (the C0 controls but tab and line breaks, lone
# surrogates): a path or a pasted message may hold them (an ESC of a colour, an undecodable
# byte of a file name), and ElementTree writes them as they are, which no reader parses.
_NOT_XML = compile_on_use("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _checks_suite(suites: ET.Element, report: Report) -> None:
    """The checks' suite: a testcase per rule that applies to this report."""
    by_code: Dict[str, List[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    skipped = {n.code: n.why for n in report.not_run}
    checks = ET.SubElement(suites, "testsuite", name="envcheck checks")
    cases = failures = skips = 0
    for rule in RULES.values():
        found = by_code.get(rule.code, [])
        if not found and not _applies(rule.family, report):
            continue
        case = ET.SubElement(
            checks,
            "testcase",
            classname=f"envcheck.{rule.family.lower()}",
            name=f"{rule.code} {rule.name}",
        )
        cases += 1
        errors = [f for f in found if f.severity is Severity.ERROR]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", message=errors[0].title, type=rule.code)
            failure.text = "\n\n".join(_finding_text(f) for f in errors)
        elif found:
            ET.SubElement(case, "system-out").text = "\n\n".join(_finding_text(f) for f in found)
        elif rule.code in skipped:
            skips += 1
            ET.SubElement(case, "skipped", message=f"not judged: {skipped[rule.code]}")
    checks.set("tests", str(cases))
    checks.set("failures", str(failures))
    checks.set("skipped", str(skips))


def _smoke_suite(suites: ET.Element, report: Report) -> None:
    """The smoke suite: a testcase per smoke result, failed when it failed or hung."""
    suite = ET.SubElement(suites, "testsuite", name="envcheck smoke", tests=str(len(report.smoke)))
    bad = 0
    for r in report.smoke:
        case = ET.SubElement(
            suite,
            "testcase",
            classname="envcheck.smoke",
            name=f"{r.name} {r.device}",
            time=f"{r.duration_s:.3f}",
        )
        if r.failed:
            bad += 1
            node = ET.SubElement(
                case,
                "failure",
                message=f"{r.status!s}: {(r.error or '').splitlines()[0] if r.error else ''}",
            )
            node.text = "\n".join([r.error or "", *r.hints])
        elif r.status == SmokeStatus.SKIPPED:
            ET.SubElement(case, "skipped", message=r.error or "skipped")
        else:
            ET.SubElement(case, "system-out").text = summary_line(r)
    suite.set("failures", str(bad))


def _applies(family: str, report: Report) -> bool:
    """Whether a rule is a check of this run (listed even when it found nothing)."""
    if family == "SEL":
        return False  # about the selection, not the machine
    if family == "MSG":
        return report.command == "diagnose"
    if family == "REQ":
        return report.requirements is not None
    return True


def _finding_text(f: Finding) -> str:
    parts = [f"{f.code} {f.title}", *[f"  - {e}" for e in f.evidence if e]]
    if f.fix:
        parts.append(f"fix: {f.fix}")
    if f.command:
        parts.append(f"$ {f.command}")
    return "\n".join(parts)


def _escape(text: str) -> str:
    """GitHub workflow command escaping for data and properties."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(report: Report) -> str:
    """One ::error / ::warning / ::notice line per finding."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for f in report.findings:
        message = (
            f.title + (f"\n{f.fix}" if f.fix else "") + (f"\n$ {f.command}" if f.command else "")
        )
        lines.append(
            f"::{level[f.severity.value]} title={_escape_property(f'envcheck {f.code}')}::{_escape(message)}"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def write_step_summary(markdown: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Append to $GITHUB_STEP_SUMMARY when GitHub Actions provides one; returns the path.
    Through envcheck._outfile like every file envcheck writes: a FIFO or a link there is an
    OSError, never a wait."""
    from .._outfile import write_text

    env = os.environ if environ is None else environ
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    write_text(path, markdown, append=True)
    return path


__all__ = ["github_annotations", "render_junit", "render_markdown", "write_step_summary"]
