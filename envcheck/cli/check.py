"""`envcheck check`: the options mapped onto one envcheck.check() call, and its Report onto
the format asked for (stdout) and the files beside it."""

from __future__ import annotations

from typing import Optional, Tuple

import click

from .. import exitcodes
from .._clickstyle import CONTEXT
from .options import (
    deep_options,
    emit,
    format_option,
    manager_option,
    output_option,
    run_core,
    show_waits,
    target,
)


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
def check(
    ctx: click.Context,
    as_json: bool,
    fmt: Optional[str],
    junit: Optional[str],
    html: Optional[str],
    config: Optional[str],
    strict: bool,
    with_smoke: bool,
    code: Optional[str],
    ignore: Tuple[str, ...],
    manager: str,
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
) -> None:
    """Check this machine against the compatibility tables: what is wrong, why, and the fix.

    Exit codes: 0 ready, 1 not ready (an error finding; with --strict, a warning too),
    2 usage error (e.g. a --junit FILE that is a folder, a link or a FIFO: refused before
    any work), 3 envcheck could not run or finish (e.g. unreadable tables, a --junit file
    whose writing failed after the run).
    """
    fmt = "json" if as_json else (fmt or "text")
    report = run_core(
        ctx,
        deep=deep,
        timeout=timeout,
        **target(python),
        show_ids=show_ids,
        config=config,
        ignore=ignore,
        strict=strict,
        smoke=with_smoke,
        smoke_timeout=timeout,
        on_smoke=show_waits(),
        manager=manager,
        progress=True,
        grid=fmt == "html" or html is not None,  # the page draws the releases x variants grid
        code=code,
    )
    if not emit(report, fmt, junit, html):
        ctx.exit(exitcodes.INTERNAL)  # the report asked for is missing: CI must not pass
    ctx.exit(report.exit_code)
