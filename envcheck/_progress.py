"""What envcheck is waiting for, on a terminal: one line on stderr, rewritten in place and
erased when the wait ends. Silent when stderr is not a terminal (CI logs, pipes, --json
readers), so it never mixes into output a program reads.

Every wait over about half a second uses it: the deep probe's torch import (a
:class:`Ticker` around the wait) and the smoke tests (the runner's tick callbacks call
:func:`show` and :func:`clear`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import IO, Optional, Type

DELAY_S = 0.5  # a wait shorter than this shows nothing
_WIDTH = 60  # the line is erased with this many spaces


def on_terminal(stream: Optional[IO[str]] = None) -> bool:
    stream = sys.stderr if stream is None else stream
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def show(label: str, elapsed: float, stream: Optional[IO[str]] = None) -> None:
    stream = sys.stderr if stream is None else stream
    stream.write(f"\r  {label} ... {elapsed:4.1f} s"[:_WIDTH].ljust(_WIDTH))
    stream.flush()


def clear(stream: Optional[IO[str]] = None) -> None:
    stream = sys.stderr if stream is None else stream
    stream.write("\r" + " " * (_WIDTH + 2) + "\r")
    stream.flush()


class Ticker:
    """``with Ticker("importing torch"):`` shows the label and the seconds so far while
    the block runs, from DELAY_S on, when stderr is a terminal."""

    def __init__(self, label: str, stream: Optional[IO[str]] = None) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._shown = False

    def _run(self, start: float) -> None:
        if self._stop.wait(DELAY_S):
            return
        while not self._stop.is_set():
            show(self.label, time.monotonic() - start, self.stream)
            self._shown = True
            self._stop.wait(0.1)

    def __enter__(self) -> Ticker:
        if on_terminal(self.stream):
            start = time.monotonic()
            self._thread = threading.Thread(target=self._run, args=(start,), daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        value: Optional[BaseException],
        trace: Optional[TracebackType],
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
            if self._shown:
                clear(self.stream)
