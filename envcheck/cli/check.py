"""`envcheck check`'s click command: its options, help and usage errors. Its body is
envcheck.commands.check.run_check, which the console script also runs without click for the
usual command lines; the keywords click passes are that function's."""

from __future__ import annotations

from typing import Any

import click

from .._clickstyle import CONTEXT
from .._plain_args import UsageProblem
from ..commands.check import run_check
from .options import deep_options, format_option, manager_option, output_option


@click.command(context_settings=CONTEXT)
@format_option
@output_option("--junit", "Also write a JUnit XML report to FILE (its folder is made if missing).")
@output_option("--html", "Also write the HTML report to FILE (one self-contained page).")
@click.option(
    "--config",
    "config",
    metavar="FILE",
    help="Project requirements ([tool.envcheck] in pyproject.toml, or envcheck.toml); "
    "found from the current folder upwards by default.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only on errors.")
@click.option(
    "--smoke", "with_smoke", is_flag=True, help="Also run the smoke test and join its results."
)
@click.option(
    "--code",
    "code",
    metavar="PATH",
    is_flag=False,
    flag_value=".",
    default=None,
    help="Also scan the project's code in PATH (default: this folder) for what this torch "
    "removed, changed or deprecated (envcheck scan).",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="CODE",
    help="Drop findings with this code or name (repeat, or separate with commas).",
)
@manager_option("the install fix")
@deep_options
@click.pass_context
def check(ctx: click.Context, /, **options: Any) -> None:
    """Check this machine against the compatibility tables: what is wrong, why, and the fix.

    Exit codes: 0 ready, 1 not ready (an error finding; with --strict, a warning too),
    2 usage error (e.g. a --junit FILE that is a folder, a link or a FIFO: refused before
    any work), 3 envcheck could not run or finish (e.g. unreadable tables, a --junit file
    whose writing failed after the run).
    """
    try:
        exit_code = run_check((ctx.obj or {}).get("tables_dir"), **options)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    ctx.exit(exit_code)
