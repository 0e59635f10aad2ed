"""`envcheck diagnose FILE|-`: the facts read from a pasted report, through the same core,
in the format asked for; text with nothing readable in it is not judged (exit 2)."""

from __future__ import annotations

from typing import Optional, TextIO, Tuple

import click

from .. import exitcodes
from .._clickstyle import CONTEXT
from ..report.emit import emit
from .options import load_tables


@click.command(context_settings=CONTEXT)
@click.argument(
    "source", metavar="FILE|-", type=click.File("r", encoding="utf-8", errors="replace")
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default=None,
    help="text (default), json, markdown: a reply to paste into the reporter's issue, or "
    "html: one self-contained page.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@click.option(
    "--ignore", multiple=True, metavar="CODE", help="Drop findings with this code or name."
)
@click.pass_context
def diagnose(
    ctx: click.Context,
    source: TextIO,
    as_json: bool,
    fmt: Optional[str],
    strict: bool,
    ignore: Tuple[str, ...],
) -> None:
    """Diagnose a report pasted from another machine: `collect_env` output, `nvidia-smi`
    (table, -L or --query-gpu CSV), an envcheck JSON report, error messages, or any mix.

    Runs the same checks and install advice as `envcheck check`, on the facts the text
    contains, and says which facts were missing (so which checks could not run).
    Exit codes as for `check`; 2 when nothing in the text can be read (not judged).
    """
    from ..diagnose import NOTHING_READ, diagnose_text, read_source, unjudged_json

    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format markdown/text: give one")
    fmt = "json" if as_json else (fmt or "text")
    as_json = fmt == "json"
    text, notes = read_source(source)  # at most 4 MiB; notes say what was not read
    for note in notes:
        click.echo(f"envcheck: {note}", err=True)
    report = diagnose_text(text, load_tables(ctx), ignore, strict, notes)
    diagnosis = report.diagnosis or {}
    if not diagnosis.get("read"):  # no facts: not judged, never "ready"
        why = "; ".join(diagnosis.get("errors") or []) or NOTHING_READ
        if as_json:
            click.echo(unjudged_json(report, why), nl=False)
        click.echo(f"envcheck: {why}" if why != NOTHING_READ else why, err=as_json)
        ctx.exit(exitcodes.USAGE)
    emit(report, fmt, None)
    ctx.exit(report.exit_code)
