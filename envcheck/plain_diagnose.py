"""`envcheck diagnose`'s body, and its usual command lines read without click.

Triage runs `envcheck diagnose FILE` (or ``-``, a paste on stdin) report after report, and
importing click cost a short paste about an eighth of its run. So, as for ``envcheck check``
(envcheck.plain_check, whose module says how), the console script reads ``diagnose FILE|-``
with ``--json``, ``--format F``, ``--strict`` and ``--ignore CODE`` without click, and runs
:func:`run_diagnose`, the body the click command (envcheck.cli.diagnose) runs too. Anything
else, or a FILE that cannot be opened, goes to click, which says what is wrong.
"""

from __future__ import annotations

from . import exitcodes
from ._plain_args import UsageProblem

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import IO, Any, Dict, Optional, Sequence, Tuple

    from ._plain_args import Values

# What stdout may carry: the formats a diagnosis renders (a reply to paste into the issue is
# markdown). The click command offers the same.
FORMATS = ("text", "json", "markdown", "html")
FLAGS = {"--json": ("as_json", True), "--strict": ("strict", True)}


def run_diagnose(
    source: IO[str],
    tables_dir: Optional[str] = None,
    as_json: bool = False,
    fmt: Optional[str] = None,
    strict: bool = False,
    ignore: Tuple[str, ...] = (),
) -> int:
    """Diagnose the text of ``source`` (at most 4 MiB of it), write the report as asked, and
    return the exit code: as for `check`, and 2 when nothing in the text can be read (not
    judged). The keywords are the command's options, their defaults its defaults. Raises
    UsageProblem, before anything is read, for --json with another format."""
    from .diagnose import NOTHING_READ, diagnose_text, read_source, unjudged_json
    from .plain_check import tables_or_none
    from .report.emit import emit, write

    if as_json and fmt not in (None, "json"):
        raise UsageProblem("--json and --format markdown/text: give one")
    fmt = "json" if as_json else (fmt or "text")
    as_json = fmt == "json"
    text, notes = read_source(source)  # at most 4 MiB; notes say what was not read
    for note in notes:
        write(f"envcheck: {note}\n", err=True)
    tables = tables_or_none(tables_dir)
    if tables is None:
        return exitcodes.INTERNAL
    report = diagnose_text(text, tables, ignore, strict, notes)
    diagnosis = report.diagnosis or {}
    if not diagnosis.get("read"):  # no facts: not judged, never "ready"
        why = "; ".join(diagnosis.get("errors") or []) or NOTHING_READ
        if as_json:
            write(unjudged_json(report, why))
        write((f"envcheck: {why}" if why != NOTHING_READ else why) + "\n", err=as_json)
        return exitcodes.USAGE
    emit(report, fmt, None)
    return report.exit_code


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_diagnose` (``source`` the FILE or "-" as given) for a
    command line after ``diagnose`` that click would read the same way, or None."""
    from ._plain_args import read

    values: Values = {
        "--format": ("fmt", lambda text: text if text in FORMATS else None),
        "--ignore": ("ignore", str),
    }
    options = read(args, FLAGS, values, repeatable=("ignore",), argument="source")
    if options is not None and options.get("as_json") and options.get("fmt", "json") != "json":
        return None  # options that conflict: click says so
    return options


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck diagnose ...`` run without click: the exit code, or None where click must
    read the command line (nothing has been written then)."""
    import io
    import os
    import sys

    from .plain_check import COMPLETION
    from .tables.load import tables_dir_from_env

    options = plain_options(args)
    if options is None or os.environ.get(COMPLETION):
        return None
    name = options.pop("source")
    stdin = None
    try:
        if name == "-":  # as click.File reads it: UTF-8, what does not decode replaced
            if sys.stdin is None:
                return None
            stdin = io.TextIOWrapper(sys.stdin.buffer, "utf-8", "replace")
        source = stdin or open(name, encoding="utf-8", errors="replace")  # noqa: SIM115
    except (OSError, AttributeError):  # click says why (no such file, a folder, ...)
        return None
    try:
        return run_diagnose(source, tables_dir_from_env(), **options)
    finally:
        if stdin is not None:
            stdin.detach()  # stdin stays open, as click leaves it
        else:
            source.close()
