"""Files the user named for envcheck to write (--junit, --html): one policy, checked first.

A report file is a regular file, or a path where none exists yet. Anything else is refused,
and refused before any work is done, by :func:`check_target`, which every command with an
output file calls when it parses its options:

- a symbolic link was not made by envcheck: a link planted in a shared folder (/tmp, a CI
  workspace) would turn the report into a write to any file the user can write;
- a FIFO (or a socket, a terminal, a device) has no reader bound to come: opening it for
  writing waits for one forever, after the run has printed its verdict;
- a folder, or a folder that cannot take a new file, would only fail after the run.

:func:`write_text` applies the same policy again when it opens the file (O_NOFOLLOW, and
O_NONBLOCK so a FIFO put there since the check fails at once instead of waiting), because
the path may have changed while envcheck ran.
"""

from __future__ import annotations

import errno
import os
import stat


class OutputPathError(ValueError):
    """An output path envcheck will not write: the message says why, in a few words."""


def check_target(path: str) -> None:
    """Refuse ``path`` (OutputPathError) unless it is a regular file envcheck may write, or a
    new path in a folder that takes one; the folder is made when missing (as pytest does for
    --junitxml)."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"cannot make the folder {folder}: {exc.strerror or exc}") from None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputPathError(f"{path}: {exc.strerror or exc}") from None
    if st is not None:
        kind = _not_regular(st.st_mode)
        if kind:
            raise OutputPathError(f"{path} is {kind}: envcheck writes only a regular file")
        if not os.access(path, os.W_OK):
            raise OutputPathError(f"{path} is not writable")
    elif not os.access(folder, os.W_OK):
        raise OutputPathError(f"{path} is not writable (the folder {folder} is not)")


def _not_regular(mode: int) -> str:
    """What a file is when it is not a regular file ("" when it is)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISLNK(mode):
        return "a symbolic link (not followed)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def write_text(path: str, text: str, append: bool = False) -> None:
    """Create, replace (or with ``append``, extend) the regular file ``path`` with ``text``
    (UTF-8); OSError when it cannot, or when the path is anything but a regular file."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):
        raise OSError(errno.ELOOP, "is a symbolic link: not followed", path)
    data = text.encode("utf-8", "replace")  # a lone surrogate (an undecodable byte of a name): "?"
    flags = os.O_WRONLY | os.O_CREAT | nofollow | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0) | (os.O_APPEND if append else 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "is a symbolic link: not followed", path) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader (O_NONBLOCK)
            raise OSError(errno.ENXIO, "is a FIFO (a named pipe): not written", path) from None
        raise
    with os.fdopen(fd, "wb") as fh:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind:  # a FIFO with a reader, a device: not a report file
            raise OSError(errno.EINVAL, f"is {kind}: not written", path)
        if not append:
            os.ftruncate(fd, 0)  # only now: a file that is refused is left as it was
        fh.write(data)
