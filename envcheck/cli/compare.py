"""`envcheck compare REPORT...`: the machines of a cluster side by side, and the difference
that breaks a job across them (envcheck.fleet)."""

from __future__ import annotations

import sys
from typing import Optional, Tuple

import click

from .._clickstyle import CONTEXT
from .options import load_tables


@click.command(context_settings=CONTEXT)
@click.argument("reports", metavar="REPORT...", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default=None,
    help="text (default), json, markdown (to paste into an issue or a PR), or html: one "
    "self-contained page with a table of the machines by the facts that differ.",
)
@click.pass_context
def compare(
    ctx: click.Context, reports: Tuple[str, ...], as_json: bool, fmt: Optional[str]
) -> None:
    """Compare machines: each REPORT is a file of `envcheck probe --json` or `check --json`
    output, a folder of them (*.json), or - for JSON documents on stdin, one per line.

    For each fact that differs, names the value most machines hold and the machines that
    differ, as findings: errors break a multi-node job (torch build, NCCL, CUDA, Python,
    backends), warnings slow or destabilise it (GPUs, driver, cuDNN, companions, NCCL_*
    variables, /dev/shm, memlock limit, RDMA devices). Each machine's own errors are listed too. Exit 0 when
    nothing breaks the job, 1 when something does, 2 when an input cannot be read (the others
    are still compared) or fewer than two reports are.
    """
    from ..fleet import compare_reports
    from ..report.fleet_text import fleet_document, render_fleet_text
    from ..report.style import use_color

    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format: give one")
    fmt = "json" if as_json else (fmt or "text")
    report = compare_reports(reports, load_tables(ctx), stdin=sys.stdin)
    if fmt == "json":
        import json

        click.echo(json.dumps(fleet_document(report), indent=2))
    elif fmt in ("markdown", "html"):
        from ..report.fleet_pages import render_fleet_html, render_fleet_markdown

        render = render_fleet_markdown if fmt == "markdown" else render_fleet_html
        click.echo(render(report), nl=False)
    else:
        color = use_color(sys.stdout)
        click.echo(render_fleet_text(report, color=color), nl=False, color=color)
    if report.verdict == "NOT COMPARED":
        click.echo(
            f"envcheck: compare needs two or more reports; {len(report.machines)} could be read",
            err=True,
        )
    ctx.exit(report.exit_code)
