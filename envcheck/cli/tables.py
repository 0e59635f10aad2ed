"""`envcheck tables`: the tables in use (``--tables DIR``, updated ones, or the built-in
ones), shown by envcheck.report.tables_text; `envcheck tables update` fetches newer ones
(envcheck.tables.update)."""

from __future__ import annotations

import os
from typing import Optional

import click

from .. import exitcodes
from .._clickstyle import CONTEXT
from .options import Seconds, load_tables


@click.group(invoke_without_command=True, context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def tables(ctx: click.Context, as_json: bool) -> None:
    """Show what the compatibility tables hold, where they come from, and their age."""
    if ctx.invoked_subcommand is not None:
        return
    from .._clock import today as clock_today
    from ..report.tables_text import tables_blocks, tables_json

    t = load_tables(ctx)
    today = clock_today().isoformat()
    if as_json:
        import json

        from ..report.documents import tables_document

        click.echo(json.dumps(tables_document(tables_json(t, today)), indent=2))
        return
    from ..report.wrap import terminal_width

    for block in tables_blocks(t, today, terminal_width()):
        click.echo(block)


@tables.command(context_settings=CONTEXT)
@click.option(
    "--from",
    "source",
    metavar="URL|FOLDER",
    help="Where to fetch the tables from (default: ENVCHECK_TABLES_URL, else the project's "
    "published tables).",
)
@click.option("--force", is_flag=True, help="Take the tables even when they are not newer.")
@click.option(
    "--timeout",
    type=Seconds(0.1, 600),
    default=20.0,
    show_default=True,
    help="Seconds to wait for each file.",
)
@click.option(
    "--remove", is_flag=True, help="Forget the updated tables: the built-in ones are used again."
)
@click.pass_context
def update(
    ctx: click.Context, source: Optional[str], force: bool, timeout: float, remove: bool
) -> None:
    """Fetch newer compatibility tables into the cache folder, where every later run uses them.

    They are taken only when their checksum manifest matches, they validate with this
    envcheck, and they are newer than the tables in use; otherwise the old ones stay.
    Exit 4: the source could not be read; 5: the tables were refused; 6: not newer.
    """
    from ..tables import cache
    from ..tables.update import UpdateFailed, source_of
    from ..tables.update import update as run_update

    if remove:
        gone = cache.remove()
        click.echo(
            "updated tables removed; the built-in ones are used"
            if gone
            else "no updated tables to remove"
        )
        return
    where = source_of(source, os.environ)
    try:
        outcome = run_update(where, force=force, timeout=timeout)
    except UpdateFailed as exc:
        click.echo(f"envcheck: tables not updated: {exc}; the tables in use stay", err=True)
        ctx.exit(exc.kind.value)
    except OSError as exc:  # the cache folder: a link, full, not writable
        click.echo(
            f"envcheck: tables not updated: cannot write {cache.cache_dir()}: {exc}", err=True
        )
        ctx.exit(exitcodes.INTERNAL)
    if not outcome.updated:
        click.echo(f"tables up to date (as of {outcome.after}); {outcome.source} has the same")
        return
    click.echo(f"tables updated: as of {outcome.before} -> {outcome.after}, from {outcome.source}")
    for line in outcome.changed:
        click.echo(f"  {line}")
    if outcome.new_releases:
        click.echo(f"  new torch releases: {', '.join(outcome.new_releases)}")
    click.echo(f"  in {cache.cache_dir()}; every later run uses them (--remove forgets them)")
    if (ctx.obj or {}).get("tables_dir"):
        click.echo("  note: --tables/ENVCHECK_TABLES is set and is used before them")
