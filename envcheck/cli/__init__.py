"""The ``envcheck`` command: a thin click group over the Python API, one module per command.

Each command maps its options onto one call (the core, the probe, the resolver, the smoke
suite, the catalogue) and its result onto a format (envcheck.report); the options they
share are in :mod:`.options`. Commands import what they need when they run, so
``envcheck --help`` and the static probe stay fast; nothing here imports torch.
"""

from __future__ import annotations

import sys
import traceback
from typing import List, Optional

import click

from .. import exitcodes
from .._clickstyle import CONTEXT
from .._version import __version__
from .check import check
from .compare import compare
from .diagnose import diagnose
from .explain import explain
from .healthcheck import healthcheck
from .install import install
from .probe import probe
from .run_install import installed_mismatches, run_install
from .scan import scan
from .smoke import smoke
from .tables import tables


@click.group(invoke_without_command=True, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="envcheck")
@click.option(
    "--tables",
    "tables_dir",
    metavar="DIR",
    envvar="ENVCHECK_TABLES",
    help="Use the compatibility tables in DIR (files it lacks come from the built-in ones). "
    "Also ENVCHECK_TABLES.",
)
@click.pass_context
def cli(ctx: click.Context, tables_dir: Optional[str]) -> None:
    """Will this machine run my PyTorch code, and if not, what do I install?

    Run without a command to check this machine (the same as `envcheck check`).
    """
    ctx.obj = {"tables_dir": tables_dir}
    if ctx.invoked_subcommand is None:
        ctx.invoke(check)


for _command in (
    check,
    install,
    smoke,
    healthcheck,
    diagnose,
    explain,
    scan,
    tables,
    probe,
    compare,
):
    cli.add_command(_command)


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: click's own exit codes, and 3 for an envcheck bug."""
    from .._stdout import guard_stdout

    guard_stdout()
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


__all__ = ["cli", "installed_mismatches", "main", "run_install"]
