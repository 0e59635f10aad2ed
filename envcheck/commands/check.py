"""`envcheck check`'s body, and the reading of its usual command lines without click (see
envcheck.commands)."""

from __future__ import annotations

from .. import exitcodes
from .._plain_args import UsageProblem
from ..probes.timeouts import DEFAULT_TIMEOUT
from .common import DEEP_FLAGS, deep_values

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence, Tuple

    from .._plain_args import Values

FLAGS = {
    "--json": ("as_json", True),
    "--strict": ("strict", True),
    "--smoke": ("with_smoke", True),
    **DEEP_FLAGS,
}
OUTPUT_FILES = ("junit", "html")  # checked before any work (envcheck._outfile.check_target)


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
    from .._toml import ConfigError
    from ..core import check
    from ..probes import InterpreterError, OverrideError
    from ..report.emit import emit, tables_unusable
    from ..report.progress import smoke_waits
    from ..tables import TableError
    from ..target import chosen
    from .common import tables_or_none

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
    except TableError as exc:  # a built-in file read on first use (tables.groups.OnUse)
        return tables_unusable(exc)
    if not emit(report, fmt, junit, html):
        return exitcodes.INTERNAL  # the report asked for is missing: CI must not pass
    return report.exit_code


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_check` for a command line after ``check`` that click would
    read the same way, or None (see envcheck.commands and envcheck._plain_args). Reading it
    changes nothing: output files are checked once a line is taken (:func:`run_plain`)."""
    from .._plain_args import read
    from ..report.formats import FORMATS
    from .common import managers

    choices = managers()
    values: Values = {
        "--format": ("fmt", lambda text: text if text in FORMATS else None),
        "--manager": ("manager", lambda text: text if text in choices else None),
        "--junit": ("junit", str),
        "--html": ("html", str),
        "--config": ("config", str),
        "--ignore": ("ignore", str),
        **deep_values(),
    }
    return read(args, FLAGS, values, repeatable=("ignore",))


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck [check ...]`` run without click: the exit code, or None where click must
    read the command line (nothing has run then). An output file that click's check refuses
    (a folder, a link, a FIFO) is left to click, which says why, as it checks it first."""
    from .._outfile import OutputPathError, check_target
    from ..tables.load import tables_dir_from_env

    options = plain_options(args)
    if options is None:
        return None
    for name in OUTPUT_FILES:
        if options.get(name):
            try:
                check_target(options[name])
            except OutputPathError:
                return None
    return run_check(tables_dir_from_env(), **options)
