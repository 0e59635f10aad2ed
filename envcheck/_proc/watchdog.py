"""The watchdog that kills a child's process group when envcheck dies, however it dies.

A tiny ``/bin/sh`` per child, in a session of its own, blocked reading a pipe whose only
writer is envcheck. When envcheck dies (SIGKILL: Docker's HEALTHCHECK timeout, the OOM
killer), the kernel closes the pipe and the watchdog kills the child's whole group. Unlike
``PR_SET_PDEATHSIG`` this works whichever thread started the child, takes the grandchildren
too, and works on every POSIX system.
"""

from __future__ import annotations

import os
import subprocess
from typing import Optional, Tuple

# The watchdog: read the child's process group id from stdin, then wait for EOF
# there (envcheck has gone) and kill that group.
_WATCHDOG = 'read pgid || exit 0; read _; kill -s KILL -- "-$pgid"'
_SH = "/bin/sh"


def _high_fd(fd: int) -> int:
    """``fd`` moved above 2, so that a child's stdio set-up cannot overwrite it."""
    if fd > 2:
        return fd
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    finally:
        os.close(fd)


def start_watchdog() -> Tuple[Optional[subprocess.Popen[bytes]], Optional[int]]:
    """A shell that reads a process group id from its stdin, a pipe only this
    process writes to, then kills that group when the pipe reaches EOF: when
    envcheck dies, however it dies. Returns it and the pipe's write end, both
    None where no shell could be started."""
    read, write = os.pipe()  # not inherited by other children (PEP 446)
    read, write = _high_fd(read), _high_fd(write)  # a closed stdout must not become the pipe
    try:
        watchdog = subprocess.Popen(
            [_SH, "-c", _WATCHDOG],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of reach of a Ctrl-C or a kill of envcheck's group
        )
    except OSError:  # no /bin/sh: the registry and the exit handlers still work
        os.close(write)
        return None, None
    finally:
        os.close(read)
    return watchdog, write
