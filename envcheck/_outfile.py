"""Writing a file the user named (--junit, --html) without following a link to somewhere else.

A symbolic link at that path was not made by envcheck: a link planted in a shared folder
(/tmp, a CI workspace) would otherwise turn the report into a write to any file the user
can write. O_NOFOLLOW refuses it (ELOOP); where the OS has no O_NOFOLLOW, a link found
before opening is refused the same way.
"""

from __future__ import annotations

import errno
import os


def write_text(path: str, text: str) -> None:
    """Create or replace ``path`` with ``text`` (UTF-8); OSError when it cannot, or when
    the path is a symbolic link."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):
        raise OSError(errno.ELOOP, "is a symbolic link: not followed", path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | nofollow | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "is a symbolic link: not followed", path) from None
        raise
    with os.fdopen(fd, "wb") as fh:
        fh.write(text.encode("utf-8"))
