"""stdout and stderr as envcheck writes to them: a reader may close them early, and their
encoding may not hold every character envcheck prints.

``envcheck check | head -1`` or ``| true`` closes the pipe before envcheck has
written its report. Python then raises BrokenPipeError at the next write, and
click turns that into exit 1, so a ready machine reads "not ready" to a CI
script that branches on the code. The reader has gone: what is left to write goes
nowhere, and the exit code stays the verdict.

Under ``PYTHONIOENCODING=ascii``, or ``LC_ALL=C`` without UTF-8 mode, the streams are
ASCII: the header's "·", a GPU named "…Ω" or a path with an accent raised
UnicodeEncodeError mid-report (a traceback, exit 3), and click wrote UTF-8 bytes to an
ASCII stderr. Every write goes through :func:`fit` instead, the one place that decides
what a narrow terminal shows: the typographic characters envcheck uses get their ASCII
stand-ins ("·" -> "-"), anything else the encoding lacks becomes "?". JSON is ASCII
already (its escapes are lossless); a UTF-8 terminal gets every character unchanged.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Any, Optional, TextIO

# The ASCII a narrow terminal shows for the characters envcheck's own texts and tables use.
ASCII_STAND_INS = str.maketrans(
    {
        "\u00b7": "-",  # middle dot, the header's separator
        "\u2014": "--",  # em dash
        "\u2013": "-",  # en dash
        "\u2026": "...",
        "\u2192": "->",
        "\u2190": "<-",
        "\u00d7": "x",
        "\u2264": "<=",
        "\u2265": ">=",
        "\u201c": '"',
        "\u201d": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u2705": "[ok]",  # the markdown verdict and finding icons
        "\u274c": "[x]",
        "\u26a0": "[!]",
        "\u2139": "[i]",
        "\ufe0f": "",  # the emoji presentation selector after them
        "\u25b6": ">",
        "\u2570": "`",
        "\u2500": "-",
    }
)


def fit(text: str, encoding: Optional[str]) -> str:
    """``text`` as a stream in ``encoding`` can carry it: unchanged when it can, else with
    the ASCII stand-ins, and "?" for whatever is still missing."""
    encoding = encoding or "utf-8"
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.translate(ASCII_STAND_INS).encode(encoding, "replace").decode(encoding)
    except LookupError:  # an encoding Python does not know: ASCII is safe in any
        return text.translate(ASCII_STAND_INS).encode("ascii", "replace").decode("ascii")


def _bytes_encoding(encoding: Optional[str]) -> str:
    """The encoding of bytes click hands a stream of ``encoding``: click, finding a stream
    that takes bytes, writes through its own wrapper, in UTF-8 where the stream says ASCII
    (click's get_best_encoding), else in the stream's encoding."""
    import codecs

    try:
        name = codecs.lookup(encoding or "utf-8").name
    except LookupError:
        return "utf-8"
    return "utf-8" if name == "ascii" else name


class ReaderMayClose(io.TextIOBase):
    """Wraps a text stream; after a BrokenPipeError, writes are dropped and the file
    descriptor points at /dev/null so the interpreter's last flush cannot fail. Text the
    stream's encoding cannot carry is written as :func:`fit` makes it. (It has no
    ``buffer``: so click writes text to it, instead of UTF-8 bytes past it.)"""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_closed = False

    # click writes to a stream as it is when its encoding and errors fit: show them.
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> Any:  # type: ignore[override]
        return self._stream.errors

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if isinstance(text, (bytes, bytearray)):  # click's shell completion echoes bytes
            text = bytes(text).decode(_bytes_encoding(self.encoding), "replace")
        if not self.reader_closed:
            try:
                try:
                    self._stream.write(text)
                except UnicodeEncodeError:  # raised before anything of ``text`` is written
                    self._stream.write(fit(text, self.encoding))
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self.reader_closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def guard_stdout() -> None:
    """Replace sys.stdout and sys.stderr (once) so a closed pipe never becomes an exit code,
    and a character the terminal's encoding lacks never becomes a traceback."""
    if not isinstance(sys.stdout, ReaderMayClose) and sys.stdout is not None:
        sys.stdout = ReaderMayClose(sys.stdout)
    if not isinstance(sys.stderr, ReaderMayClose) and sys.stderr is not None:
        sys.stderr = ReaderMayClose(sys.stderr)
