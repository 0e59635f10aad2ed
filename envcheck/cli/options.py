"""What the commands share: the options that mean the same everywhere (the deep probe,
--format, output files, --manager), and the calls every command makes the same way (the
tables, the probe, the core) with their errors mapped to exit codes: usage 2, tables 3.

Nothing here decides anything: each helper maps options to a call or a format.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Optional, TypedDict, TypeVar

import click

from .. import exitcodes
from ..commands.common import MIN_TIMEOUT, managers
from ..probes import DEFAULT_TIMEOUT  # probes/__init__ imports no probe: cheap

if TYPE_CHECKING:
    from ..facts import Facts
    from ..tables import Tables

F = TypeVar("F", bound=Callable[..., Any])

# What `--manager` renders for (check's install fix, install's plan)
MANAGERS = managers()


class Seconds(click.FloatRange):
    """A number of seconds in a range, and a finite one: click's FloatRange takes "nan" (no
    comparison refuses it) and "inf" where no maximum is set, and a deadline of either left
    the deep probe not run while the report said nothing of it."""

    name = "seconds"

    def convert(
        self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]
    ) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return seconds


def manager_option(what: str) -> Callable[[F], F]:
    """``--manager``: which package manager or project file ``what`` is rendered for, one of
    the renderers' registry (check's install fix and install's plan offer the same)."""
    return click.option(
        "--manager",
        default="pip",
        show_default=True,
        type=click.Choice(MANAGERS),
        help=f"Render {what} for this tool or project file.",
    )


def load_tables(ctx: click.Context) -> Tables:
    """The compatibility tables (``--tables DIR`` of the group, else the built-in ones);
    unreadable tables end the command with exit 3."""
    from ..commands.common import tables_or_none

    tables = tables_or_none((ctx.obj or {}).get("tables_dir"))
    if tables is None:
        ctx.exit(exitcodes.INTERNAL)
    return tables


class Target(TypedDict):
    """The probe's arguments for the interpreter meant, and why it was chosen."""

    python: Optional[str]
    chosen_because: Optional[str]


def target(python: Optional[str]) -> Target:
    """The interpreter the user means (--python, the activated environment, the project's
    .venv, else envcheck's own; see envcheck.target) as probe arguments."""
    from ..target import chosen

    target = chosen(python)
    return {"python": target.python, "chosen_because": target.reason}


def probe_facts(python: Optional[str] = None, **kwargs: Any) -> Facts:
    """The probe of the interpreter the user means; a bad override or interpreter is a usage
    error."""
    from .._plain_args import UsageProblem
    from ..commands.probe import probe_facts as probe

    try:
        return probe(python, **kwargs)
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None


def deep_options(fn: F) -> F:
    """--deep/--no-deep, --timeout, --python and --show-ids: how the machine is probed."""
    fn = click.option(
        "--show-ids",
        is_flag=True,
        help="Keep GPU UUIDs and the host name (redacted by default, so reports can be shared).",
    )(fn)
    fn = click.option(
        "--python",
        "python",
        metavar="PATH",
        help="Describe the environment of another interpreter (e.g. a project's .venv/bin/python).",
    )(fn)
    fn = click.option(
        "--timeout",
        type=Seconds(min=MIN_TIMEOUT),
        default=DEFAULT_TIMEOUT,
        show_default=True,
        help="Seconds the deep probe may take before it is killed.",
    )(fn)
    fn = click.option(
        "--deep/--no-deep",
        default=True,
        show_default=True,
        help="Also import torch in a child process to see what it really loads.",
    )(fn)
    return fn


def format_option(fn: F) -> F:
    """--format (the registry of envcheck.report.formats) and --json (--format json)."""
    from ..report.formats import FORMATS

    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(list(FORMATS)),
        default=None,
        help="What stdout carries: "
        + "; ".join(f"{f.name} {f.description}" for f in FORMATS.values())
        + ".",
    )(fn)
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json)."
    )(fn)


def output_path(path: Optional[str], what: str) -> Optional[str]:
    """Check an output file before any work is done (envcheck._outfile.check_target decides),
    so a typo, a folder, a link or a FIFO costs nothing: a usage error (exit 2)."""
    if not path:
        return path
    from .._outfile import OutputPathError, check_target

    try:
        check_target(path)
    except OutputPathError as exc:
        raise click.BadParameter(str(exc), param_hint=what) from None
    return path


def output_option(flag: str, help: str) -> Callable[[F], F]:
    """An output FILE option, checked (``output_path``) before any work is done."""
    return click.option(
        flag,
        flag.lstrip("-"),
        metavar="FILE",
        callback=lambda ctx, param, value: output_path(value, flag),
        help=help,
    )
