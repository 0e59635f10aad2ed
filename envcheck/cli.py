"""The ``envcheck`` command: a thin click layer over the Python API.

Commands import what they need when they run, so ``envcheck --help`` and the
static probe stay fast; nothing here imports torch.
"""

from __future__ import annotations

import sys
import traceback
from typing import Optional

import click

from . import exitcodes
from ._version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(invoke_without_command=True, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="envcheck")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Will this machine run my PyTorch code, and if not, what do I install?

    Run without a command to probe this machine (the same as `envcheck probe`).
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(probe)


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the Facts record as JSON.")
@click.option(
    "--deep/--no-deep",
    default=True,
    show_default=True,
    help="Also import torch in a child process to see what it really loads.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds the deep probe may take before it is killed.",
)
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Describe the environment of another interpreter (e.g. a project's .venv/bin/python).",
)
@click.option(
    "--show-ids",
    is_flag=True,
    help="Keep GPU UUIDs and the host name (redacted by default, so reports can be shared).",
)
def probe(as_json: bool, deep: bool, timeout: float, python: Optional[str], show_ids: bool) -> None:
    """Observe this machine: system, Python, NVIDIA driver and GPUs, torch, CUDA toolkit.

    Nothing is judged here (that is `envcheck check`); every fact is reported as
    seen, and every probe failure is recorded rather than raised.

    Hardware facts can be overridden for simulation: ENVCHECK_DRIVER_VERSION,
    ENVCHECK_CUDA_DRIVER_VERSION, ENVCHECK_GPUS and ENVCHECK_FACT_<SECTION>_<FIELD>
    (see docs/facts.md).
    """
    from .probes import InterpreterError, OverrideError
    from .probes import probe as run_probe

    try:
        facts = run_probe(deep=deep, timeout=timeout, python=python, show_ids=show_ids)
    except (OverrideError, InterpreterError) as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(facts.to_json())
        return
    from .report.facts_text import render_facts
    from .report.style import use_color

    color = use_color(sys.stdout)
    click.echo(render_facts(facts, color=color), nl=False, color=color)


def main(argv: Optional[list] = None) -> None:
    """Console entry point: click's own exit codes, and 3 for an envcheck bug."""
    try:
        cli.main(args=argv, prog_name="envcheck", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception:  # an envcheck bug: say so plainly, keep the traceback for the report
        click.echo("envcheck failed unexpectedly; please report this:", err=True)
        click.echo(traceback.format_exc(), err=True)
        sys.exit(exitcodes.INTERNAL)
