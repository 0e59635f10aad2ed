"""`envcheck explain MESSAGE`: one error message through the catalogue (envcheck.diagnose),
shown by envcheck.report.explain_text."""

from __future__ import annotations

import sys

import click

from .. import exitcodes
from .._clickstyle import CONTEXT
from .options import load_tables


@click.command(context_settings=CONTEXT)
@click.argument("message")
@click.pass_context
def explain(ctx: click.Context, message: str) -> None:
    """Explain one error message: what it means, the fix, and the facts it carries.
    MESSAGE `-` reads it from standard input (as `diagnose -` does).

    Exit 0 when the message is recognised, 1 when it is not, 2 for an empty message.
    """
    from ..diagnose import explain as explain_message
    from ..report.explain_text import explained_blocks, not_recognised
    from ..report.wrap import terminal_width

    if message == "-":
        message = _read_stdin()
    if not message.strip():
        raise click.UsageError("the message is empty: give it as an argument, or `-` for stdin")
    result = explain_message(message, load_tables(ctx))
    if result is None:
        click.echo(not_recognised(terminal_width()))
        ctx.exit(exitcodes.NOT_READY)
    for block in explained_blocks(result, terminal_width()):
        click.echo(block)


def _read_stdin() -> str:
    """The message on stdin, bounded as diagnose reads it; notes on what was not read."""
    import io

    from ..diagnose import read_source

    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    message, notes = read_source(stdin)
    for note in notes:
        click.echo(f"envcheck: {note}", err=True)
    return message
