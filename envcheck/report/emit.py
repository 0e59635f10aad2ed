"""A Report written out as a command asked: one format on stdout, the files beside it, and
under GitHub Actions the annotations (stderr) and the step summary.

Written without click, so that the usual ``envcheck check`` (envcheck.plain_check) does not
import it: the streams are envcheck's guarded ones (envcheck._stdout), which already do what
click's echo did for envcheck (a reader that has gone, an encoding that lacks a character).
A format renders the Report; nothing here decides anything.
"""

from __future__ import annotations

import contextlib
import os
import sys

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Iterator, Optional

    from ..core import Report


def write(text: str, err: bool = False) -> None:
    """``text`` on stdout (or stderr), flushed: a line seen at once, as click's echo did."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # pythonw, or a closed stream: nowhere to write
        return
    stream.write(text)
    stream.flush()


def emit(report: Report, fmt: str, junit: Optional[str], html: Optional[str] = None) -> bool:
    """Exactly one format on stdout; the JUnit file, GitHub annotations (stderr) and step
    summary beside it. False when a file asked for could not be written (a line on stderr
    says why). The runner shows stdout and stderr in one log: when stdout already carries
    the annotations (--format github), they are not repeated on stderr, so each is shown
    once."""
    from .formats import render
    from .style import use_color

    color = fmt == "text" and use_color(sys.stdout)
    write(render(report, fmt, color=color))
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
    """Run a command so that an envcheck bug reads as one: a plea to report it and the
    traceback on stderr, exit 3 (envcheck.exitcodes.INTERNAL), never a bare traceback
    that CI might take for the command's own verdict. A KeyboardInterrupt that reaches here
    (the signal handler of envcheck._entry catches nearly all) exits 130."""
    from .. import exitcodes

    try:
        yield
    except KeyboardInterrupt:
        write("interrupted\n", err=True)
        sys.exit(130)
    except Exception:
        import traceback

        write("envcheck failed unexpectedly; please report this:\n", err=True)
        write(traceback.format_exc() + "\n", err=True)
        sys.exit(exitcodes.INTERNAL)
