"""`envcheck check`'s body, and its usual command lines read without click.

A static check is what envcheck runs most (by hand, as a CI preflight, before every job on a
cluster) and importing click cost it an eighth of its run. So, as for the healthcheck, the
console script (envcheck._entry) reads the command lines people type nearly every time
(``envcheck``, ``envcheck check`` with the options of :data:`FLAGS` and :data:`VALUES`, each
once, each value plainly valid) with :func:`plain_options`, and runs :func:`run_check`, the
body the click command (envcheck.cli.check) runs too. Everything else (``--help``, ``--code``,
the group's ``--tables``, a bad or repeated option) goes to click, which reads it and says what
is wrong; so does a plain line whose run finds a usage error (a bad ``--config``, an override
or ``--python`` that cannot be used), before anything is printed: click then says it as it
says any usage error.
"""

from __future__ import annotations

from . import exitcodes
from ._plain_args import UsageProblem
from .probes.timeouts import DEFAULT_TIMEOUT

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence, Tuple

    from ._plain_args import Values
    from .tables import Tables

# click's shell completion: set, click prints the completion script or the words for the shell
COMPLETION = "_ENVCHECK_COMPLETE"
MIN_TIMEOUT = 0.1  # seconds: the least --timeout click's FloatRange takes

# how the machine is probed: the options `check` and `probe` share (cli.options.deep_options)
DEEP_FLAGS = {
    "--show-ids": ("show_ids", True),
    "--deep": ("deep", True),
    "--no-deep": ("deep", False),
}
FLAGS = {
    "--json": ("as_json", True),
    "--strict": ("strict", True),
    "--smoke": ("with_smoke", True),
    **DEEP_FLAGS,
}


def deep_values() -> Values:
    """The readers of --timeout and --python, as click's deep_options read them."""
    from ._plain_args import decimal

    def timeout(text: str) -> Optional[float]:
        value = decimal(text)
        return value if value is not None and value >= MIN_TIMEOUT else None

    return {"--timeout": ("timeout", timeout), "--python": ("python", str)}


def run_check(
    tables_dir: Optional[str] = None,
    as_json: bool = False,
    fmt: Optional[str] = None,
    junit: Optional[str] = None,
    html: Optional[str] = None,
    config: Optional[str] = None,
    strict: bool = False,
    with_smoke: bool = False,
    code: Optional[str] = None,
    ignore: Tuple[str, ...] = (),
    manager: str = "pip",
    deep: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    python: Optional[str] = None,
    show_ids: bool = False,
) -> int:
    """Check this machine, write the report as asked, and return the exit code (envcheck.
    exitcodes). The keywords are the command's options; their defaults are its defaults (a
    test holds them to click's). Raises UsageProblem before anything is written."""
    from ._toml import ConfigError
    from .core import check
    from .probes import InterpreterError, OverrideError
    from .report.emit import emit
    from .report.progress import smoke_waits
    from .tables import TableError
    from .target import chosen

    fmt = "json" if as_json else (fmt or "text")
    target = chosen(python)
    tables = tables_or_none(tables_dir)
    if tables is None:
        return exitcodes.INTERNAL
    try:
        report = check(
            tables=tables,
            deep=deep,
            timeout=timeout,
            python=target.python,
            chosen_because=target.reason,
            show_ids=show_ids,
            config=config,
            ignore=ignore,
            strict=strict,
            smoke=with_smoke,
            smoke_timeout=timeout,
            on_smoke=smoke_waits(),
            manager=manager,
            progress=True,
            grid=fmt == "html" or html is not None,  # the page draws the releases x variants grid
            code=code,
        )
    except (ConfigError, OverrideError, InterpreterError) as exc:
        raise UsageProblem(str(exc)) from None
    except TableError as exc:  # pragma: no cover - tables_or_none reports these first
        return _tables_unusable(exc)
    if not emit(report, fmt, junit, html):
        return exitcodes.INTERNAL  # the report asked for is missing: CI must not pass
    return report.exit_code


def tables_or_none(tables_dir: Optional[str]) -> Optional[Tables]:
    """The compatibility tables (``--tables DIR``, else those in use), or None once stderr
    says why they cannot be used (the command then exits 3)."""
    from .tables import TableError, load_tables

    try:
        return load_tables(tables_dir)
    except TableError as exc:
        _tables_unusable(exc)
        return None


def _tables_unusable(exc: Exception) -> int:
    from .report.emit import write

    write(f"envcheck: cannot use the compatibility tables: {exc}\n", err=True)
    return exitcodes.INTERNAL


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_check` for a command line after ``check`` that click would
    read the same way, or None (see the module, and envcheck._plain_args)."""
    from ._plain_args import read
    from .report.formats import FORMATS
    from .values import Manager

    def output_file(text: str) -> Optional[str]:
        from ._outfile import OutputPathError, check_target

        try:
            check_target(text)
        except OutputPathError:
            return None  # click says why (a folder, a link, a FIFO)
        return text

    managers = {str(manager) for manager in Manager}
    values: Values = {
        "--format": ("fmt", lambda text: text if text in FORMATS else None),
        "--manager": ("manager", lambda text: text if text in managers else None),
        "--junit": ("junit", output_file),
        "--html": ("html", output_file),
        "--config": ("config", str),
        "--ignore": ("ignore", str),
        **deep_values(),
    }
    return read(args, FLAGS, values, repeatable=("ignore",))


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck [check ...]`` run without click: the exit code, or None where click must
    read the command line (nothing has been written then)."""
    import os

    from .tables.load import tables_dir_from_env

    if os.environ.get(COMPLETION):  # the shell asks click to complete a word: click answers
        return None
    options = plain_options(args)
    if options is None:
        return None
    try:
        return run_check(tables_dir_from_env(), **options)
    except UsageProblem:
        return None  # click reads the line again, finds the same problem and says it
