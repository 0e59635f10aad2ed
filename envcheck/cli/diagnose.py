"""`envcheck diagnose FILE|-`'s click command: its options, help and usage errors. Its body
is envcheck.commands.diagnose.run_diagnose (the facts read from a pasted report, through the
same core, in the format asked for; text with nothing readable in it is not judged, exit 2),
which the console script also runs without click for the usual command lines."""

from __future__ import annotations

from typing import Any, TextIO

import click

from .._clickstyle import CONTEXT
from .._plain_args import UsageProblem
from ..commands.diagnose import DIAGNOSIS_FORMATS, run_diagnose


@click.command(context_settings=CONTEXT)
@click.argument(
    "source", metavar="FILE|-", type=click.File("r", encoding="utf-8", errors="replace")
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(DIAGNOSIS_FORMATS)),
    default=None,
    help="text (default), json, markdown: a reply to paste into the reporter's issue, or "
    "html: one self-contained page.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@click.option(
    "--ignore", multiple=True, metavar="CODE", help="Drop findings with this code or name."
)
@click.pass_context
def diagnose(ctx: click.Context, /, source: TextIO, **options: Any) -> None:
    """Diagnose a report pasted from another machine: `collect_env` output, `nvidia-smi`
    (table, -L or --query-gpu CSV), an envcheck JSON report, error messages, or any mix.

    Runs the same checks and install advice as `envcheck check`, on the facts the text
    contains, and says which facts were missing (so which checks could not run).
    Exit codes as for `check`; 2 when nothing in the text can be read (not judged).
    """
    try:
        exit_code = run_diagnose(source, (ctx.obj or {}).get("tables_dir"), **options)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    ctx.exit(exit_code)
