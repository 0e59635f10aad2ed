"""A Report written out as a command asked: one format on stdout, the files beside it, and
under GitHub Actions the annotations (stderr) and the step summary.

Written without click, so that the usual lines of the commands envcheck.commands runs do not
import it: :func:`write` does what click's echo did for envcheck (control sequences out unless
colour is asked, "?" for a lone surrogate), on envcheck's guarded streams (envcheck._stdout: a
reader that has gone, an encoding that lacks a character). Also the one way a run ends on a
failure (:func:`failures_explained`). A format renders the Report; nothing here decides
anything.
"""

from __future__ import annotations

import contextlib
import os
import sys

from .._patterns import compile_on_use

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Iterator, Optional

    from ..core import Report


# an ANSI control sequence (a colour, a cursor move), as click's echo took them out
_ANSI = compile_on_use(r"\x1b\[[0-?]*[ -/]*[@-~]")


def write(text: str, err: bool = False, color: bool = False) -> None:
    """``text`` on stdout (or stderr), flushed, as click's echo wrote it for envcheck: without
    ANSI control sequences unless ``color`` (a path or a paste that holds one cannot move the
    reader's cursor or colour their terminal), and with "?" for what no encoding can carry (a
    file name's undecodable byte, which Python holds as a lone surrogate)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # pythonw, or a closed stream: nowhere to write
        return
    if not color and "\x1b" in text:
        text = _ANSI.sub("", text)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates
            text = text.encode("utf-8", "replace").decode("utf-8")
    stream.write(text)
    stream.flush()


def tables_unusable(exc: Exception) -> int:
    """Say on stderr why the compatibility tables cannot be used; the exit code that says it
    (3: envcheck could not run)."""
    from .. import exitcodes

    write(f"envcheck: cannot use the compatibility tables: {exc}\n", err=True)
    return exitcodes.INTERNAL


def emit(report: Report, fmt: str, junit: Optional[str], html: Optional[str] = None) -> bool:
    """Exactly one format on stdout; the JUnit file, GitHub annotations (stderr) and step
    summary beside it. False when a file asked for could not be written (a line on stderr
    says why). The runner shows stdout and stderr in one log: when stdout already carries
    the annotations (--format github), they are not repeated on stderr, so each is shown
    once."""
    from .formats import render
    from .style import use_color

    color = fmt == "text" and use_color(sys.stdout)
    write(render(report, fmt, color=color), color=color)
    written = True
    if junit:
        written = write_output(junit, render(report, "junit"), "--junit")
    if html:
        written = write_output(html, render(report, "html"), "--html") and written
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from . import ci  # only here and with --junit (report.formats imports it then)

        if fmt != "github":
            write(render(report, "github"), err=True)
        try:
            ci.write_step_summary(render(report, "markdown"))
        except OSError as exc:
            write(f"envcheck: cannot write GITHUB_STEP_SUMMARY: {exc.strerror or exc}\n", err=True)
    return written


def write_output(path: str, text: str, what: str) -> bool:
    """Write an output file the user asked for; False (and a line on stderr) if it failed."""
    from .._outfile import write_text

    try:
        write_text(path, text)
    except OSError as exc:
        write(f"envcheck: cannot write {what} {path}: {exc.strerror or exc}\n", err=True)
        return False
    return True


@contextlib.contextmanager
def failures_explained() -> Iterator[None]:
    """Run a command so that a failure reads as what it is, never as a bare traceback that CI
    might take for the command's own verdict: tables that cannot be used (a built-in file read
    on first use, tables.groups.OnUse) say so, exit 3; an envcheck bug is a plea to report it
    with the traceback, exit 3 (envcheck.exitcodes.INTERNAL); a KeyboardInterrupt that reaches
    here (the signal handler of envcheck._entry catches nearly all) exits 130."""
    from .. import exitcodes

    try:
        yield
    except KeyboardInterrupt:
        write("envcheck: interrupted\n", err=True)
        sys.exit(130)
    except Exception as exc:
        from ..tables.reader import TableError

        if isinstance(exc, TableError):
            sys.exit(tables_unusable(exc))
        import traceback

        write("envcheck failed unexpectedly; please report this:\n", err=True)
        write(traceback.format_exc() + "\n", err=True)
        sys.exit(exitcodes.INTERNAL)
