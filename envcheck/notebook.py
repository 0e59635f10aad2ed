"""envcheck's values displayed by IPython and Jupyter: ``envcheck.check()`` as the last line
of a cell shows the verdict card (envcheck.report.notebook), a Facts its tables, an install
advice its command as ``%pip install ...``.

The display is registered with IPython's formatters by type *name* (no class is imported to
register it), when ``import envcheck`` runs inside a live IPython, or by hand with
``%load_ext envcheck.notebook``. The values themselves stay plain records with no renderer
in them: the core never imports a format (shared/DESIGN.md's layers), and a renderer is
looked up only when a value is shown.

Each type gets HTML (the card), Markdown (the report as ``--format markdown`` writes it, for
front ends that prefer it) and plain text (the terminal report, for the IPython console).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Tuple

# (module, class) -> mime type -> the function that renders it
_PLAN = {"text/html": "plan_card"}
DISPLAYS: Dict[Tuple[str, str], Dict[str, str]] = {
    ("envcheck.core.report", "Report"): {
        "text/html": "report_card",
        "text/markdown": "report_markdown",
        "text/plain": "report_text",
    },
    ("envcheck.core.report", "Advice"): {"text/html": "advice_card"},
    ("envcheck.facts", "Facts"): {"text/html": "facts_card", "text/plain": "facts_text"},
    ("envcheck.install.plan", "Planned"): _PLAN,
    ("envcheck.install.plan", "NoPlan"): _PLAN,
}


def _renderer(name: str) -> Callable[..., Any]:
    """The renderer ``name``, imported when a value is first shown, not when registered."""

    def render(value: Any, *pretty: Any) -> Any:
        from .report import notebook

        if name == "report_markdown":
            from .report.formats import render as render_format

            return render_format(value, "markdown")
        if name == "report_text":
            from .report.formats import render as render_format

            return pretty[0].text(render_format(value, "text").rstrip("\n"))
        if name == "facts_text":
            from .report.facts_text import render_facts

            return pretty[0].text(render_facts(value).rstrip("\n"))
        return getattr(notebook, name)(value)

    return render


def register(shell: Any = None) -> bool:
    """Register envcheck's displays with ``shell`` (default: the running IPython); False when
    there is none. Safe to call again."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    formatter = getattr(shell, "display_formatter", None)
    if formatter is None:
        return False
    for (module, cls), mimes in DISPLAYS.items():
        for mime, name in mimes.items():
            if mime in formatter.formatters:
                formatter.formatters[mime].for_type_by_name(module, cls, _renderer(name))
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext envcheck.notebook``."""
    register(shell)


__all__ = ["DISPLAYS", "load_ipython_extension", "register"]
