"""`envcheck tables`: the tables in use (``--tables DIR`` or the built-in ones), shown by
envcheck.report.tables_text."""

from __future__ import annotations

import click

from .._clickstyle import CONTEXT
from .options import load_tables


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def tables(ctx: click.Context, as_json: bool) -> None:
    """Show what the compatibility tables hold, where they come from, and their age."""
    import datetime

    from ..report.tables_text import tables_blocks, tables_json

    t = load_tables(ctx)
    today = datetime.date.today().isoformat()
    if as_json:
        import json

        from ..report.documents import tables_document

        click.echo(json.dumps(tables_document(tables_json(t, today)), indent=2))
        return
    from ..report.wrap import terminal_width

    for block in tables_blocks(t, today, terminal_width()):
        click.echo(block)
