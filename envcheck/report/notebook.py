"""A Report, Facts or install advice as a notebook shows it (Jupyter, Colab, Kaggle, VS Code).

The same pieces as ``--format html`` (envcheck.report.html: the verdict banner, the
findings with their fix, the facts tables) in one card instead of a page: its styles are
scoped to the card, so they never restyle the notebook, and the card carries its own
background and text colours, so it reads the same in a light and a dark theme. No script,
nothing fetched. Commands are written the way a notebook cell runs them: ``%pip install``
(the kernel's own interpreter, whatever ``python`` is on the PATH), ``%conda``, else ``!``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, List, Optional

from .._version import __version__
from .charts import escape_html as _e
from .html import _CSS, facts_html, findings_html, verdict_heading

if TYPE_CHECKING:
    from ..core import Advice, Report
    from ..facts import Facts
    from ..install import InstallPlan

CARD = "envcheck-card"
_CARD_CSS = (
    f".{CARD}{{all:initial;display:block;font:14px/1.45 system-ui,-apple-system,'Segoe UI',"
    "sans-serif;color:#1f2328;background:#fff;color-scheme:light;border:1px solid #d0d7de;"
    "border-radius:6px;overflow:hidden;max-width:1100px}"
    f".{CARD} .body{{padding:4px 16px 12px}}"
    f".{CARD} .verdict{{color:#fff;padding:10px 16px}}"
    f".{CARD} .verdict h1{{margin:0;font-size:20px;color:#fff}}"
    f".{CARD} .verdict p{{margin:2px 0 0;color:#fff}}"
    f".{CARD} h2{{font-size:16px;color:#1f2328}}"
    f".{CARD} summary{{cursor:pointer;font-weight:600;margin-top:10px}}"
)
# pip run as a module by an interpreter (a path, or one quoted with its spaces), pip itself, conda
_PIP = re.compile(r"""^(?P<python>'[^']*'|"[^"]*"|\S+)\s+-m\s+pip\s+(?P<rest>.+)$""", re.S)
_BARE = re.compile(r"^pip3?\s+(?P<rest>.+)$", re.S)
_CONDA = re.compile(r"^conda\s+(?P<rest>.+)$", re.S)
_SHELL = ("&&", "||", ";", "|", "\n")  # a chain of commands: only a shell runs it as written


def _scoped_page_css() -> str:
    """The page's rules (envcheck.report.html), each selector put under the card."""
    rules = []
    for rule in re.findall(r"([^{}]+)\{([^{}]*)\}", _CSS):
        selectors, body = rule
        if selectors.strip() in ("body", "main"):
            continue
        scoped = ",".join(f".{CARD} {sel.strip()}" for sel in selectors.split(","))
        rules.append(f"{scoped}{{{body}}}")
    return "".join(rules)


def notebook_command(command: str, kernel: str = sys.executable) -> str:
    """A command as a notebook cell runs it. ``%pip install X`` installs into the kernel's own
    interpreter (a bare ``!pip`` may be another one), so it stands for ``pip`` and for
    ``KERNEL -m pip`` only; a command for another interpreter (``envcheck.check(python=...)``)
    keeps it, as a shell escape ``!``. ``conda`` becomes ``%conda``; a chain of commands or any
    other tool stays a shell escape."""
    if any(token in command for token in _SHELL):
        return f"!{command}"
    bare = _BARE.match(command)
    if bare:
        return f"%pip {bare.group('rest')}"
    pip = _PIP.match(command)
    if pip:
        python = pip.group("python").strip("'\"")
        same = os.path.normcase(os.path.abspath(python)) == os.path.normcase(
            os.path.abspath(kernel)
        )
        return (
            f"%pip {pip.group('rest')}"
            if python in ("python", "python3") or same
            else f"!{command}"
        )
    conda = _CONDA.match(command)
    if conda:
        return f"%conda {conda.group('rest')}"
    return f"!{command}"


def _card(*parts: str) -> str:
    inner = "\n".join(p for p in parts if p)
    return f'<div class="{CARD}"><style>{_CARD_CSS}{_scoped_page_css()}</style>\n{inner}\n</div>'


def report_card(report: Report) -> str:
    """The verdict, each finding with its fix and command, the one install command, and the
    facts folded away."""
    colour, title, machine = verdict_heading(report)
    findings = findings_html(report, notebook_command) or ["<p>No findings.</p>"]
    return _card(
        f'<div class="verdict" style="background:{colour}"><h1>{_e(title)}</h1>'
        f"<p>{_e(report.counts_text())}</p><p>{_e(machine)}</p></div>",
        '<div class="body">',
        "<h2>Findings</h2>",
        *findings,
        _advice(report.install),
        "<details><summary>Facts</summary>",
        *facts_html(report.facts, report.links, report.torch_label),
        "</details>",
        f'<p class="muted">envcheck {_e(__version__)} · tables as of {_e(report.tables_as_of)}'
        "</p></div>",
    )


def _advice(advice: Optional[Advice]) -> str:
    if advice is None:
        return ""
    if advice.command:
        return f"<h2>Install</h2><pre>{_e(notebook_command(advice.command))}</pre>"
    return "<h2>Install</h2>" + _plan_body(advice.plan)


def advice_card(advice: Advice) -> str:
    """An install advice: the plan's reasons and its command, ready for a cell."""
    body = _plan_body(advice.plan)
    if advice.command:
        body += f"<pre>{_e(notebook_command(advice.command))}</pre>"
    return _card('<div class="body">', body, "</div>")


def plan_card(plan: InstallPlan) -> str:
    """An install plan on its own (``envcheck.install.resolve``): what and why; its command
    depends on the manager, which the Advice of a Report names."""
    return _card('<div class="body">', _plan_body(plan), "</div>")


def _plan_body(plan: InstallPlan) -> str:
    where = f"Python {_e(str(plan.python))} on {_e(str(plan.platform))}"
    if not plan.ok:
        items = [f"<li>{_e(c)}</li>" for c in plan.conflicts]
        items += [f"<li>way out: {_e(w)}</li>" for w in plan.ways_out]
        return f"<p>No torch fits this machine ({where}):</p><ul>{''.join(items)}</ul>"
    lines: List[str] = [f"<p><strong>torch {_e(plan.installs)}</strong> for {where}</p><ul>"]
    lines += [f"<li>{_e(r)}</li>" for r in plan.reasons]
    lines += [f"<li>note: {_e(n)}</li>" for n in plan.notes]
    lines += [f"<li>not verified: {_e(u)}</li>" for u in plan.unverified]
    return "".join(lines) + "</ul>"


def facts_card(facts: Facts) -> str:
    """The facts tables, as `envcheck probe` shows them."""
    return _card('<div class="body">', *facts_html(facts), "</div>")


__all__ = ["advice_card", "facts_card", "notebook_command", "plan_card", "report_card"]
