"""The folder envcheck was started in, or None when it had been deleted under it.

A job's folder can vanish (a CI workspace cleaned, a temp folder removed) while a shell
still sits in it. CPython 3.13.0 then fails to import parts of the standard library
(``import socket`` raises "SystemError: error return without exception set"), so the
console script steps into ``/`` first. It remembers that the folder was gone, so that the
config search and the disk probe treat it as gone instead of searching ``/``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Optional

_gone = False


def leave_if_deleted() -> None:
    """Step into ``/`` when the current folder no longer exists (console script only:
    a library call never changes its caller's folder)."""
    global _gone
    try:
        os.getcwd()
    except OSError:
        _gone = True
        os.chdir("/")


def current() -> Optional[str]:
    """The current folder, or None when it was deleted under us."""
    if _gone:
        return None
    try:
        return os.getcwd()
    except OSError:
        return None
