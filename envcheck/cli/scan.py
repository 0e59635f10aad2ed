"""`envcheck scan [PATH]`: the project's code against what a torch removed, changed or
deprecated (envcheck.scan), in the format asked for."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional, Tuple

import click
from packaging.version import InvalidVersion, Version

from .. import exitcodes
from .._clickstyle import CONTEXT

if TYPE_CHECKING:
    from ..scan import ChangeTable

# The names of report.scan_text.SCAN_FORMATS, kept here so `envcheck --help` does not import
# the scan (tests/test_scan.py checks the two agree).
SCAN_FORMATS = ("text", "json", "markdown", "github", "sarif")


def _version(value: Optional[str], option: str) -> Optional[Version]:
    if value is None:
        return None
    try:
        return Version(value.strip().lstrip("v"))
    except InvalidVersion:
        raise click.BadParameter(f"{value!r} is not a torch version", param_hint=option) from None


@click.command(context_settings=CONTEXT)
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=True, dir_okay=True))
@click.option(
    "--torch",
    "torch_version",
    metavar="VERSION",
    help="Judge the code against this torch (default: the one installed for --python, "
    "else the newest release the table knows).",
)
@click.option(
    "--since",
    metavar="VERSION",
    help="Leave out changes up to this torch (the one the code runs on today): only what an "
    "upgrade from it changes.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(SCAN_FORMATS),
    default="text",
    show_default=True,
    help="sarif: for code-scanning pages (upload-sarif).",
)
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("--strict", is_flag=True, help="Fail (exit 1) on deprecated uses too.")
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="The interpreter whose installed torch the code is judged against.",
)
@click.pass_context
def scan(
    ctx: click.Context,
    path: str,
    torch_version: Optional[str],
    since: Optional[str],
    fmt: str,
    as_json: bool,
    strict: bool,
    python: Optional[str],
) -> None:
    """Scan a project's code (default: this folder) for what the torch it runs on removed,
    changed or deprecated: imports, calls and their keywords, C++/CUDA extension APIs,
    launcher arguments. The code is read, never imported or run.

    Exit codes: 0 nothing that breaks, 1 a use that breaks on that torch (with --strict, a
    deprecated use too), 2 usage error, 3 unreadable tables.
    """
    from ..report.scan_text import SCAN_FORMATS as RENDER
    from ..report.style import use_color
    from ..scan import TableError, load_changes
    from ..scan import scan as run_scan

    fmt = "json" if as_json else fmt
    asked, floor = _version(torch_version, "--torch"), _version(since, "--since")
    try:
        table = load_changes((ctx.obj or {}).get("tables_dir"))
    except TableError as exc:
        click.echo(f"envcheck: cannot use the compatibility tables: {exc}", err=True)
        ctx.exit(exitcodes.INTERNAL)
    torch, why = _torch(asked, python, table)
    if floor is not None and floor >= torch:
        raise click.BadParameter(f"{floor} is not older than torch {torch}", param_hint="--since")
    result = run_scan(path, torch, table, since=floor, torch_from=why)
    color = fmt == "text" and use_color(sys.stdout)
    click.echo(RENDER[fmt](result, color), nl=False, color=color)
    ctx.exit(result.exit_code(strict))


def _torch(
    asked: Optional[Version], python: Optional[str], table: ChangeTable
) -> Tuple[Version, str]:
    """The torch to judge against, and why that one."""
    from ..scan import judged_torch

    if asked is not None:
        return asked, "--torch"
    found = installed_torch(python)
    if found is not None:
        return found
    torch, why = judged_torch(table, None, "")
    return torch, f"{why}; name one with --torch"


def installed_torch(python: Optional[str]) -> Optional[Tuple[Version, str]]:
    """The torch installed for the interpreter the user means, read from its metadata (never
    imported), and where; None when there is none (or the interpreter cannot be run)."""
    from ..probes.packages import scan as find
    from ..probes.python_env import InterpreterError, snapshot
    from .options import target

    chosen = target(python)
    try:
        snap = snapshot(chosen["python"])
    except InterpreterError as exc:
        raise click.UsageError(str(exc)) from None
    found = find(snap.get("sys_path") or [], lambda name: name == "torch")
    for dist in found:
        try:
            return Version(dist.version), f"installed for {snap.get('executable')}"
        except InvalidVersion:
            continue
    return None
