"""The watchdog that kills a child's process group when envcheck dies, however it dies.

A tiny ``/bin/sh`` per child, in a session of its own, blocked reading a pipe whose only
writer is envcheck. When envcheck dies (SIGKILL: Docker's HEALTHCHECK timeout, the OOM
killer), the kernel closes the pipe and the watchdog kills the child's whole group. Unlike
``PR_SET_PDEATHSIG`` this works whichever thread started the child, takes the grandchildren
too, and works on every POSIX system.

The shell is started with ``os.posix_spawn`` where the system has it (Linux, macOS): no
``subprocess`` import, no Python code between fork and exec, so a healthcheck, which starts
exactly one child, pays about a millisecond for its guard. Elsewhere ``subprocess`` starts it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from .forked import reap

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple

# The watchdog: read the child's process group id from stdin, then wait for EOF
# there (envcheck has gone) and kill that group.
_WATCHDOG = 'read pgid || exit 0; read _; kill -s KILL -- "-$pgid"'
_SH = "/bin/sh"


class Watchdog:
    """A started watchdog shell: its pid, a kill and a bounded reap."""

    def __init__(self, pid: int, popen: Any = None) -> None:
        self.pid = pid
        self._popen = popen  # the subprocess.Popen where posix_spawn was not used
        self._reaped = False

    def kill(self) -> None:
        """SIGKILL, at once and without waiting (a signal handler may call it)."""
        if not self._reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> None:
        """Reap it, waiting at most ``timeout`` seconds."""
        if self._popen is not None:
            import subprocess

            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout=timeout)
            return
        if not self._reaped:
            self._reaped = reap(self.pid, time.monotonic() + timeout) is not None


def _high_fd(fd: int) -> int:
    """``fd`` moved above 2, so that a child's stdio set-up cannot overwrite it."""
    if fd > 2:
        return fd
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    finally:
        os.close(fd)


def _spawn(read: int) -> Watchdog:
    """The shell, its stdin the pipe's read end, in a session of its own (out of reach of a
    Ctrl-C or a kill of envcheck's group)."""
    argv = [_SH, "-c", _WATCHDOG]
    spawn = getattr(os, "posix_spawn", None)
    if spawn is not None:
        try:
            actions = [
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, 1, 2),
            ]
            return Watchdog(spawn(_SH, argv, os.environ, file_actions=actions, setsid=True))
        except NotImplementedError:  # a libc without POSIX_SPAWN_SETSID
            pass
    import subprocess

    popen = subprocess.Popen(
        argv,
        stdin=read,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return Watchdog(popen.pid, popen)


def start_watchdog() -> Tuple[Optional[Watchdog], Optional[int]]:
    """A shell that reads a process group id from its stdin, a pipe only this
    process writes to, then kills that group when the pipe reaches EOF: when
    envcheck dies, however it dies. Returns it and the pipe's write end, both
    None where no shell could be started."""
    read, write = os.pipe()  # not inherited by other children (PEP 446)
    read, write = _high_fd(read), _high_fd(write)  # a closed stdout must not become the pipe
    try:
        watchdog = _spawn(read)
    except OSError:  # no /bin/sh: the registry and the exit handlers still work
        os.close(write)
        return None, None
    finally:
        os.close(read)
    return watchdog, write
