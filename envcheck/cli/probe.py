"""`envcheck probe`: the Facts of this machine (or another interpreter), as JSON or text;
nothing is judged."""

from __future__ import annotations

import contextlib
import sys
from typing import Optional

import click

from .._clickstyle import CONTEXT
from . import options


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the Facts record as JSON.")
@options.deep_options
@click.pass_context
def probe(
    ctx: click.Context,
    as_json: bool,
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
) -> None:
    """Observe this machine: system, Python, NVIDIA driver and GPUs, torch, CUDA toolkit.

    Nothing is judged here (that is `envcheck check`); every fact is reported as
    seen, and every probe failure is recorded rather than raised.

    Hardware facts can be overridden for simulation: ENVCHECK_DRIVER_VERSION,
    ENVCHECK_CUDA_DRIVER_VERSION, ENVCHECK_GPUS and ENVCHECK_FACT_<SECTION>_<FIELD>
    (see docs/facts.md).
    """
    facts = options.probe_facts(
        deep=deep, timeout=timeout, python=python, show_ids=show_ids, progress=True
    )
    if as_json:
        click.echo(facts.to_json())
        return
    from ..report.facts_text import render_facts
    from ..report.style import use_color
    from ..tables import TableError, load_tables

    # The tables name the PCIe generations, and say whether torch's labelled files beside
    # its plain metadata are PyPI's one build; the facts print without them (said, not known).
    tables = None
    t = facts.torch
    if any(gpu.pcie for gpu in facts.nvidia.gpus) or t.version != t.dist_version:
        with contextlib.suppress(TableError):
            tables = load_tables((ctx.obj or {}).get("tables_dir"))
    link_table = tables.links if tables is not None else None
    color = use_color(sys.stdout)
    click.echo(
        render_facts(facts, color=color, link_table=link_table, tables=tables),
        nl=False,
        color=color,
    )
