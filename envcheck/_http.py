"""One bounded HTTP GET for everything envcheck fetches (updated tables, an index's pages).

Every fetch has a deadline for the whole answer, not only per socket read (a server that
sends a byte a second would otherwise hold envcheck for ever), and a size limit read in
chunks (a wrong URL that serves a disk image ends at the limit, not in memory). Any failure
is one FetchError with a one-line reason; the URL in it has its user and password removed,
since index URLs carry tokens (``https://user:token@host/simple``).
"""

from __future__ import annotations

import socket
import ssl
import time
import urllib.error
import urllib.request
from typing import Any, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from ._text import one_line

__all__ = ["FetchError", "fetch", "redact"]

_CHUNK = 64 * 1024


class FetchError(OSError):
    """The URL could not be read in time or within the limit; the message says why.
    ``missing``: the server (or the folder of a file: URL) says there is no such file."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def redact(url: str) -> str:
    """The URL without its user information: ``https://u:token@host/x`` -> ``https://***@host/x``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc="***@" + host))


def fetch(
    url: str,
    *,
    timeout: float,
    limit: int,
    headers: Optional[Mapping[str, str]] = None,
    opener: Optional[urllib.request.OpenerDirector] = None,
) -> Tuple[bytes, str]:
    """The body and content type of ``url`` (http, https or file), within ``timeout`` seconds
    in all and ``limit`` bytes; FetchError otherwise."""
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers=dict(headers or {}))
    open_url = (opener or urllib.request.build_opener()).open
    try:
        with open_url(request, timeout=timeout) as answer:
            kind = answer.headers.get("Content-Type", "") if answer.headers else ""
            return _read(answer, deadline, limit, timeout), kind
    except FetchError:
        raise
    except urllib.error.HTTPError as exc:
        missing = exc.code in (404, 410)
        raise FetchError(f"{redact(url)}: HTTP {exc.code} {exc.reason}", missing) from None
    except urllib.error.URLError as exc:
        missing = isinstance(exc.reason, FileNotFoundError)
        raise FetchError(f"{redact(url)}: {_reason(exc.reason)}", missing) from None
    except (socket.timeout, TimeoutError):
        raise FetchError(f"{redact(url)}: no answer within {timeout:g} s") from None
    except (OSError, ValueError, ssl.SSLError) as exc:  # a reset connection, a bad URL
        raise FetchError(f"{redact(url)}: {_reason(exc)}") from None


def _read(answer: Any, deadline: float, limit: int, timeout: float) -> bytes:
    chunks: List[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise FetchError(f"no complete answer within {timeout:g} s")
        # read1: what has arrived, up to a chunk (read() waits for the whole chunk, so a
        # server sending a byte at a time would never reach the deadline check)
        chunk = (answer.read1 if hasattr(answer, "read1") else answer.read)(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise FetchError(f"answer larger than {limit // 1024} KiB; not what was asked for")
        chunks.append(chunk)


def _reason(reason: object) -> str:
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "no answer in time"
    if isinstance(reason, OSError) and reason.strerror:
        return one_line(reason.strerror)
    return one_line(str(reason)) or type(reason).__name__
