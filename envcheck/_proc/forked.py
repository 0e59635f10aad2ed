"""A child that is a fork of envcheck running one Python function (POSIX).

NVML's C calls run this way, so that a library that segfaults, calls ``exit()`` or hangs
ends a child, never envcheck. :class:`~envcheck._proc.child.Child` gives it the same
session, watchdog, timeout and bounded output as a program it starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import warnings

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import IO, Callable, Optional


class _Forked:
    """The part of ``subprocess.Popen`` that :class:`Child` uses, for a child that is a
    fork of envcheck calling one Python function.

    Why a fork and not a fresh interpreter: the child starts with everything already
    imported (Python, envcheck, the NVML binding), so it costs a ``fork()`` instead of
    an interpreter start and the imports again, which would double the cost of a
    healthcheck that runs every few seconds (and of a CPU all_reduce rank: torch's import,
    ``smoke.group``).

    The hazard of forking a process that has threads: only the forking thread goes on
    in the child, and a lock another thread held at that moment stays held there for
    ever. So the child does as little as it can: it imports nothing (the caller
    imports before it forks), takes no lock of envcheck's (the reader threads' are
    never used in the child), writes with ``os.write``, and leaves with ``os._exit``
    (no atexit handlers: the registry of children it inherited is its parent's, not
    its own; no flush of stdio buffers it inherited). What is left, a lock inside a C
    library, can at worst make the child hang, and the child's timeout ends that
    like any hang: it is reported, never read as an answer. (Python 3.12+ warns of
    this hazard at every such fork; having weighed it here, the fork silences that one
    warning.) A target that must do more, a gloo rank running torch, says how it keeps
    clear of the threads its parent had (``smoke.group.run_forked``).

    In the child: a process group of its own (killed on timeout), the
    default action for SIGINT and SIGTERM (not envcheck's handlers), stdin from
    /dev/null, stdout and stderr into the pipes, and every other descriptor closed,
    so that it holds no pipe that other children or their watchdogs wait on to close.
    """

    stdin = None

    def __init__(self, target: Callable[[], None]) -> None:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            with warnings.catch_warnings():  # Python 3.12+: weighed above, and accepted
                warnings.filterwarnings(
                    "ignore",
                    message=r".*multi-threaded, use of fork\(\)",
                    category=DeprecationWarning,
                )
                pid = os.fork()
        except BaseException:
            for fd in (out_read, out_write, err_read, err_write):
                os.close(fd)
            raise
        if pid == 0:  # pragma: no cover - the child; it never returns
            _in_fork(target, out_write, err_write)
        with contextlib.suppress(OSError):  # as the child does: whichever runs first
            os.setpgid(pid, pid)
        os.close(out_write)
        os.close(err_write)
        self.pid = pid
        self.returncode: Optional[int] = None
        # Closed by the reader threads, as a Popen's pipes are (see capture.pump).
        self.stdout: IO[bytes] = open(out_read, "rb", buffering=0)  # noqa: SIM115
        self.stderr: IO[bytes] = open(err_read, "rb", buffering=0)  # noqa: SIM115

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            self.returncode = reap(self.pid, deadline=0.0)  # one look, no wait
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            self.returncode = reap(self.pid, deadline)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"fork {self.pid}", timeout or 0.0)
        return self.returncode


def reap(pid: int, deadline: Optional[float]) -> Optional[int]:
    """Reap child ``pid``: its exit code (negative: the signal), or None when ``deadline``
    (time.monotonic; None: none) passes first. Looks at least once, then more and more
    rarely (at most every 50 ms)."""
    delay = 0.0005
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: its status is lost
            done, status = pid, 255 << 8
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _in_fork(target: Callable[[], None], out: int, err: int) -> None:  # pragma: no cover
    """The forked child's whole life (see :class:`_Forked`): set up, call, ``_exit``."""
    code = 70  # EX_SOFTWARE: the target raised
    try:
        # A process group of its own, set by both sides so that it exists before
        # either goes on (a group, not a session: setsid would fail once the parent
        # has made the child a group leader). Out of the terminal's foreground
        # group, so a Ctrl-C reaches envcheck only, which then kills this group.
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        _close_from(3)
        target()
        code = 0
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(2, f"{type(exc).__name__}: {exc}\n".encode("utf-8", "replace"))
    finally:
        os._exit(code)


def _close_from(low: int) -> None:  # pragma: no cover - runs in a forked child
    """Close every descriptor from ``low`` up: those listed in /proc/self/fd (or
    /dev/fd) where it can be read, as ``subprocess`` does, else the whole range."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            fds = [int(name) for name in os.listdir(listing)]
        except (OSError, ValueError):
            continue
        for fd in fds:
            if fd >= low:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
