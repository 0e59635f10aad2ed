"""The ``envcheck`` command: a thin click group over the Python API, one module per command.

Each command maps its options onto one call (the core, the probe, the resolver, the smoke
suite, the catalogue) and its result onto a format (envcheck.report); the options they
share are in :mod:`.options`. Commands import what they need when they run, so
``envcheck --help`` and the static probe stay fast; nothing here imports torch.
"""

from __future__ import annotations

from typing import List, Optional

import click

from .._clickstyle import CONTEXT
from .._version import __version__
from .run_install import installed_mismatches, run_install

# Each command's module, imported when the command runs (or --help lists them all): a check
# does not pay for the other nine and what they import.
COMMANDS = {
    "check": "check",
    "compare": "compare",
    "diagnose": "diagnose",
    "explain": "explain",
    "healthcheck": "healthcheck",
    "install": "install",
    "probe": "probe",
    "scan": "scan",
    "smoke": "smoke",
    "tables": "tables",
}


class _Commands(click.Group):
    """A group whose commands are imported on first use (click's lazy-group pattern)."""

    def list_commands(self, ctx: click.Context) -> List[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in COMMANDS:
            return None
        import importlib

        module = importlib.import_module(f"{__name__}.{COMMANDS[cmd_name]}")
        command: click.Command = getattr(module, cmd_name)
        return command


@click.group(cls=_Commands, invoke_without_command=True, context_settings=CONTEXT)
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
        from .check import check

        ctx.invoke(check)


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: click's own exit codes, and 3 for an envcheck bug."""
    from .._stdout import guard_stdout
    from ..report.emit import failures_explained

    guard_stdout()
    with failures_explained():
        cli.main(args=argv, prog_name="envcheck", standalone_mode=True)


def usage_error(command: str, message: str) -> int:
    """Say a usage error that a command line run without click found while running
    (envcheck.commands) as click says one for ``command``: its usage line, how to get help,
    the message; exit 2. Nothing is read or run again (a --config read from a pipe could not
    be), and the line is not parsed again."""
    group = click.Context(cli, info_name="envcheck", **cli.context_settings)
    command_cli = cli.get_command(group, command)
    assert command_cli is not None, command  # envcheck.commands runs only these commands
    context = command_cli.context_class(
        command_cli, info_name=command, parent=group, **command_cli.context_settings
    )
    error = click.UsageError(message, ctx=context)
    error.show()
    return error.exit_code


__all__ = ["cli", "installed_mismatches", "main", "run_install", "usage_error"]
