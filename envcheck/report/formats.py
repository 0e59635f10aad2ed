"""Formats: one small interface that renders a Report, and the registry ``--format`` maps onto.

A format renders; it makes no judgment (the verdict, the follow-ons, the install
advice and which checks ran are all in the Report). stdout carries exactly one
format per run; the CLI sends GitHub annotations to stderr beside any of them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Callable, Dict, Optional

from .._record import record

if TYPE_CHECKING:
    from ..core import Report


@record(frozen=True)
class Format:
    name: str
    render: Callable[[Report, bool, Optional[int]], str]  # (report, color, width) -> text
    description: str


def _text(report: Report, color: bool, width: Optional[int]) -> str:
    from .findings_text import render_text

    return render_text(report, color=color, width=width)


def _json(report: Report, color: bool, width: Optional[int]) -> str:
    from .findings_text import report_dict

    return json.dumps(report_dict(report), indent=2) + "\n"


def _markdown(report: Report, color: bool, width: Optional[int]) -> str:
    from .ci import render_markdown

    if report.command == "diagnose":  # a reply to paste into the reporter's issue
        from .reply import render_reply

        return render_reply(report)
    return render_markdown(report)


def _junit(report: Report, color: bool, width: Optional[int]) -> str:
    from .ci import render_junit

    return render_junit(report)


def _github(report: Report, color: bool, width: Optional[int]) -> str:
    from .ci import github_annotations

    return github_annotations(report)


def _html(report: Report, color: bool, width: Optional[int]) -> str:
    from .html import render_html

    return render_html(report)


FORMATS: Dict[str, Format] = {
    f.name: f
    for f in (
        Format("text", _text, "for people (the default)"),
        Format("json", _json, "the versioned report: findings, install plan, facts"),
        Format("markdown", _markdown, "for CI summaries and issue comments"),
        Format("junit", _junit, "JUnit XML: a testcase per rule, skipped when not judged"),
        Format("github", _github, "GitHub Actions workflow annotations"),
        Format("html", _html, "one self-contained page: findings, charts, topology, grid"),
    )
}


def render(report: Report, name: str, color: bool = False, width: Optional[int] = None) -> str:
    return FORMATS[name].render(report, color, width)


__all__ = ["FORMATS", "Format", "render"]
