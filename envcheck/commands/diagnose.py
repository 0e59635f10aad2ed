"""`envcheck diagnose`'s body, and the reading of its usual command lines without click (see
envcheck.commands): ``diagnose FILE|-`` with ``--json``, ``--format F``, ``--strict`` and
``--ignore CODE``. A FILE that cannot be opened goes to click, which says why."""

from __future__ import annotations

from .. import exitcodes
from .._plain_args import UsageProblem

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import IO, Any, Dict, Optional, Sequence, Tuple

    from .._plain_args import Values

# what stdout may carry for a diagnosis (markdown: a reply to paste into the reporter's issue);
# the click command offers the same
DIAGNOSIS_FORMATS = ("text", "json", "markdown", "html")
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
    from ..diagnose import NOTHING_READ, diagnose_text, read_source, unjudged_json
    from ..report.emit import emit, tables_unusable, write
    from ..tables import TableError
    from .common import tables_or_none

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
    try:
        report = diagnose_text(text, tables, ignore, strict, notes)
    except TableError as exc:  # a built-in file read on first use (tables.groups.OnUse)
        return tables_unusable(exc)
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
    from .._plain_args import read

    values: Values = {
        "--format": ("fmt", lambda text: text if text in DIAGNOSIS_FORMATS else None),
        "--ignore": ("ignore", str),
    }
    return read(args, FLAGS, values, repeatable=("ignore",), argument="source")


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck diagnose ...`` run without click: the exit code, or None where click must
    read the command line (nothing has run then)."""
    from ..tables.load import tables_dir_from_env

    options = plain_options(args)
    if options is None:
        return None
    name = options.pop("source")
    if name == "-":
        return _from_stdin(options, tables_dir_from_env())
    try:
        source = open(name, encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:  # no such file, a folder, no permission: click says which
        return None
    with source:
        return run_diagnose(source, tables_dir_from_env(), **options)


def _from_stdin(options: Dict[str, Any], tables_dir: Optional[str]) -> Optional[int]:
    """The paste on stdin, read as click.File reads "-": UTF-8, what does not decode
    replaced; stdin is left open, as click leaves it."""
    import io
    import sys

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # no stdin, or one without bytes under it: click says what it makes of it
        return None
    source = io.TextIOWrapper(buffer, "utf-8", "replace")
    try:
        return run_diagnose(source, tables_dir, **options)
    finally:
        source.detach()
