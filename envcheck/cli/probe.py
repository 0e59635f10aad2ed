"""`envcheck probe`'s click command: its options, help and usage errors. Its body is
envcheck.commands.probe.run_probe (the Facts of this machine or another interpreter, as JSON or
text; nothing is judged), which the console script also runs without click for the usual
command lines."""

from __future__ import annotations

from typing import Any

import click

from .._clickstyle import CONTEXT
from .._plain_args import UsageProblem
from ..commands.probe import run_probe
from . import options


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the Facts record as JSON.")
@options.deep_options
@click.pass_context
def probe(ctx: click.Context, /, **options: Any) -> None:
    """Observe this machine: system, Python, NVIDIA driver and GPUs, torch, CUDA toolkit.

    Nothing is judged here (that is `envcheck check`); every fact is reported as
    seen, and every probe failure is recorded rather than raised.

    Hardware facts can be overridden for simulation: ENVCHECK_DRIVER_VERSION,
    ENVCHECK_CUDA_DRIVER_VERSION, ENVCHECK_GPUS and ENVCHECK_FACT_<SECTION>_<FIELD>
    (see docs/facts.md).
    """
    try:
        exit_code = run_probe((ctx.obj or {}).get("tables_dir"), **options)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    ctx.exit(exit_code)
