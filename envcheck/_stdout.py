"""A stdout that a reader may close early without changing envcheck's exit code.

``envcheck check | head -1`` or ``| true`` closes the pipe before envcheck has
written its report. Python then raises BrokenPipeError at the next write, and
click turns that into exit 1, so a ready machine reads "not ready" to a CI
script that branches on the code. The reader has gone: what is left to write goes
nowhere, and the exit code stays the verdict.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, TextIO


class ReaderMayClose(io.TextIOBase):
    """Wraps a text stream; after a BrokenPipeError, writes are dropped and the file
    descriptor points at /dev/null so the interpreter's last flush cannot fail."""

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

    def write(self, text: str) -> int:  # type: ignore[override]
        if isinstance(text, (bytes, bytearray)):  # click's shell completion echoes bytes
            text = bytes(text).decode(self.encoding or "utf-8", "replace")
        if not self.reader_closed:
            try:
                self._stream.write(text)
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
    """Replace sys.stdout (once) so a closed pipe never becomes an exit code."""
    if not isinstance(sys.stdout, ReaderMayClose) and sys.stdout is not None:
        sys.stdout = ReaderMayClose(sys.stdout)  # type: ignore[assignment]
