"""A child's output stream, bounded: what is kept of it, and the threads that pump the pipes.

A child's output is read as it comes, by a thread per pipe (:func:`pump`), and only the
first ``HEAD_BYTES`` and the last ``TAIL_BYTES`` are kept: a child that floods its output
costs neither memory nor time beyond its timeout. Lines that start with the caller's
``marker`` (the result lines our child scripts print) are kept from the dropped middle too.
"""

from __future__ import annotations

import contextlib
import os
import threading

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import IO, List, Optional

HEAD_BYTES = 64 * 1024  # kept from the start of each stream
TAIL_BYTES = 256 * 1024  # kept from its end
MARKED_BYTES = 1024 * 1024  # marker lines kept from the middle, all together
MARKED_LINE_BYTES = 256 * 1024  # a longer marker line is dropped with the rest
_CHUNK = 65536


def size_text(n: int) -> str:
    """1234567 -> '1.2 MB'."""
    if n < 1000:
        return f"{n} bytes"
    for unit, scale in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if n < scale * 1000 or unit == "GB":
            return f"{n / scale:.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


class Capture:
    """One output stream, bounded: its first ``head`` and last ``tail`` bytes.

    What falls between is counted, not kept, except complete lines that start
    with ``marker``, which are kept (up to ``marked`` bytes in all, each up to
    ``line_max``) so that a parser looking for result lines still finds them.
    """

    def __init__(
        self,
        marker: Optional[str] = None,
        head: int = HEAD_BYTES,
        tail: int = TAIL_BYTES,
        marked: int = MARKED_BYTES,
        line_max: int = MARKED_LINE_BYTES,
    ) -> None:
        self._head_cap, self._tail_cap = head, tail
        self._marked_cap, self._line_max = marked, line_max
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.kept: List[bytes] = []
        self._kept_bytes = 0
        # The marker as it appears at a line start, and the last len(marker)
        # bytes before the data not yet scanned (a marker split between reads).
        self._needle = b"\n" + marker.encode() if marker else b""
        self._carry = b""
        self._pending: Optional[bytearray] = None  # a kept line whose end is still to come
        self._lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self._lock:
            room = self._head_cap - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if not data:
                return
            self.tail += data
            excess = len(self.tail) - self._tail_cap
            if excess > 0:
                gone = bytes(self.tail[:excess])
                del self.tail[:excess]
                self._drop(gone)

    def _drop(self, gone: bytes) -> None:
        if not self.dropped and self._needle:
            self._begin()
        self.dropped += len(gone)
        if self._needle:
            buf = self._carry + gone
            self._scan(buf, len(self._carry))
            self._carry = buf[-(len(self._needle) - 1) :]

    def _begin(self) -> None:
        """The dropped part starts where the head ends: a marker line may span both."""
        head = b"\n" + bytes(self.head)  # the stream starts at a line start
        line = head[head.rfind(b"\n") + 1 :]
        if line.startswith(self._needle[1:]):
            self._pending = bytearray(line)
        self._carry = head[-(len(self._needle) - 1) :]

    def _scan(self, buf: bytes, start: int) -> None:
        """Keep the marker lines in ``buf``, whose first ``start`` bytes were seen before."""
        search = 0  # a marker that starts in the seen bytes ends in the new ones: not seen
        if self._pending is not None:
            nl = buf.find(b"\n", start)
            self._extend(buf[start : len(buf) if nl < 0 else nl + 1])
            if nl < 0:
                return
            self._keep()
            search = nl
        i = buf.find(self._needle, search)
        while i >= 0:
            self._pending = bytearray()
            nl = buf.find(b"\n", i + 1)
            self._extend(buf[i + 1 : len(buf) if nl < 0 else nl + 1])
            if nl < 0:
                return
            self._keep()
            i = buf.find(self._needle, nl)

    def _extend(self, data: bytes) -> None:
        if self._pending is None:
            return
        if len(self._pending) + len(data) > self._line_max:
            self._pending = None  # too long to be a result line: dropped with the rest
        else:
            self._pending += data

    def _keep(self) -> None:
        line = bytes(self._pending or b"")
        self._pending = None
        if line and self._kept_bytes + len(line) <= self._marked_cap:
            self.kept.append(line)
            self._kept_bytes += len(line)

    def text(self) -> str:
        """What was kept, decoded, with a line saying how much was dropped."""
        with self._lock:
            head, tail = bytes(self.head), bytes(self.tail)
            if not self.dropped:
                return _decode(head + tail)
            kept = list(self.kept)
            if self._needle:  # a marker line cut by the start of the tail
                nl = tail.find(b"\n")
                first = tail if nl < 0 else tail[: nl + 1]
                if self._pending is not None:
                    kept.append(bytes(self._pending) + first)
                else:
                    buf = self._carry + first
                    i = buf.find(self._needle)
                    if 0 <= i < len(self._carry):
                        kept.append(buf[i + 1 :])
            notice = f"\n[... {size_text(self.dropped)} dropped ...]\n".encode()
            lines = b"".join(k if k.endswith(b"\n") else k + b"\n" for k in kept)
            return _decode(head + notice + lines + tail)


def _decode(data: bytes) -> str:
    # As text=True pipes read: UTF-8 with replacement, universal newlines.
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def pump(stream: IO[bytes], capture: Capture) -> None:
    fd = stream.fileno()
    try:
        while True:
            data = os.read(fd, _CHUNK)
            if not data:
                break
            capture.feed(data)
    except (OSError, ValueError):  # closed under us
        pass
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def feed_stdin(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
    with contextlib.suppress(OSError, ValueError):
        stream.close()
