"""Run a child process with a hard timeout and leave nothing behind.

Everything in envcheck that imports torch or touches a GPU runs through here:
a torch import can segfault, a wedged driver can hang ``cuda.is_available()``,
and an NCCL all_reduce can wait forever. The child gets its own process group
(session on POSIX) so that on timeout, and after a normal exit too, the whole
group is killed: grandchildren a hanging import started go with it.

Nothing outlives envcheck either:

* every running child is in a registry; :func:`kill_all` kills their groups, and
  runs at interpreter exit and from the SIGINT/SIGTERM handlers that the console
  entry point installs (``envcheck._entry``);
* when envcheck itself is killed (SIGKILL: Docker's HEALTHCHECK timeout, the
  OOM killer), a watchdog does it: a tiny ``/bin/sh`` per child, in a session
  of its own, blocked reading a pipe whose only writer is envcheck. When
  envcheck dies, the kernel closes the pipe and the watchdog kills the child's
  whole group. Unlike ``PR_SET_PDEATHSIG`` this works whichever thread started
  the child, takes the grandchildren too, and works on every POSIX system.

A child's output is read as it comes, by a thread per pipe, and only the first
``HEAD_BYTES`` and the last ``TAIL_BYTES`` are kept: a child that floods its
output costs neither memory nor time beyond its timeout. Lines that start with
the caller's ``marker`` (the result lines our child scripts print) are kept
from the dropped middle too.

``Child`` is started first and waited for later, so a caller can overlap the
slow child (importing torch takes a second) with its own work.

A child is a program (``argv``) or, on POSIX, a fork of envcheck that runs one
Python function (``target``, see :class:`_Forked`): NVML's C calls run that way,
so that a library that segfaults, calls ``exit()`` or hangs ends a child, never
envcheck. Both kinds get the same session, watchdog, timeout and bounded output.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, List, Optional, Sequence

HEAD_BYTES = 64 * 1024  # kept from the start of each stream
TAIL_BYTES = 256 * 1024  # kept from its end
MARKED_BYTES = 1024 * 1024  # marker lines kept from the middle, all together
MARKED_LINE_BYTES = 256 * 1024  # a longer marker line is dropped with the rest
DRAIN_S = 2.0  # how long to read what is left once the child's group is dead
_CHUNK = 65536
# The watchdog: read the child's process group id from stdin, then wait for EOF
# there (envcheck has gone) and kill that group.
_WATCHDOG = 'read pgid || exit 0; read _; kill -s KILL -- "-$pgid"'
_SH = "/bin/sh"


@dataclass
class ChildResult:
    returncode: Optional[int]  # None when it timed out
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    signal: Optional[str]  # "SIGSEGV" when a signal ended it (not our timeout kill)
    stdout_dropped: int = 0  # bytes left out of the middle of stdout (see HEAD_BYTES)
    stderr_dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def signal_name(returncode: Optional[int]) -> Optional[str]:
    """Name of the signal that ended a child (POSIX negative return codes)."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


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


def _read(stream: IO[bytes], capture: Capture) -> None:
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


def _write(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
    with contextlib.suppress(OSError, ValueError):
        stream.close()


def _high_fd(fd: int) -> int:
    """``fd`` moved above 2, so that a child's stdio set-up cannot overwrite it."""
    if fd > 2:
        return fd
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    finally:
        os.close(fd)


class _Forked:
    """The part of ``subprocess.Popen`` that :class:`Child` uses, for a child that is a
    fork of envcheck calling one Python function.

    Why a fork and not a fresh interpreter: the child starts with everything already
    imported (Python, envcheck, the NVML binding), so it costs a ``fork()`` instead of
    an interpreter start and the imports again, which would double the cost of a
    healthcheck that runs every few seconds.

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
    warning.)

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
        # Closed by the reader threads, as a Popen's pipes are (see _read).
        self.stdout: IO[bytes] = open(out_read, "rb", buffering=0)  # noqa: SIM115
        self.stderr: IO[bytes] = open(err_read, "rb", buffering=0)  # noqa: SIM115

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while True:
            code = self.poll()
            if code is not None:
                return code
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"fork {self.pid}", timeout or 0.0)
            delay = min(delay * 2, 0.05)
            time.sleep(delay)


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


_live: Dict[int, Child] = {}  # pid -> running child (on POSIX the pid is its group)
_live_lock = threading.Lock()


def kill_all() -> None:
    """Kill every running child's process group now.

    Safe from a signal handler: takes no lock, only sends signals."""
    for child in list(_live.values()):
        child.kill()


def _check_stopping() -> None:
    """End envcheck now if a signal has told it to stop (see ``envcheck._entry``).

    A signal handler's exception does not always unwind the program: raised while
    Python runs a weakref callback or a ``__del__``, it is printed ("Exception
    ignored") and dropped, and envcheck would go on to report its killed child as a
    crash. Every start and wait of a child checks, so the run still ends here."""
    entry = sys.modules.get(f"{__package__}._entry")
    code = getattr(entry, "stop_code", None)
    if code is not None:
        raise SystemExit(code)


atexit.register(kill_all)


class Child:
    """A child process started now and reaped by :meth:`wait`."""

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stdin_text: Optional[str] = None,
        marker: Optional[str] = None,
        target: Optional[Callable[[], None]] = None,
    ) -> None:
        """``marker``: lines of stdout that start with it are kept however much
        the child prints (see :class:`Capture`).

        ``target`` (POSIX): instead of running ``argv``, fork this process and
        call ``target()`` in the child, which writes its answer to file
        descriptor 1 (see :class:`_Forked`); ``argv`` then only names the child.
        """
        _check_stopping()
        if target is not None and (env is not None or cwd is not None or stdin_text is not None):
            raise ValueError("a forked child takes no env, cwd or stdin")
        self.argv: List[str] = list(argv)
        self.timeout = timeout
        self._start = time.monotonic()
        self._out = Capture(marker)
        self._err = Capture()
        self._killed = False
        self._result: Optional[ChildResult] = None
        self._threads: List[threading.Thread] = []
        self._watchdog: Optional[subprocess.Popen] = None
        self._guard: Optional[int] = None  # the watchdog's pipe: closing it fires the watchdog
        kwargs: dict = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
            # Started before the child, so that no moment of the child's life is unguarded.
            self._watchdog, self._guard = _start_watchdog()
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]  # Windows only
        try:
            self._proc: Any = (
                _Forked(target)
                if target is not None
                else subprocess.Popen(
                    self.argv,
                    stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    cwd=cwd,
                    **kwargs,
                )
            )
        except BaseException:
            self._killed = True  # nothing started but the watchdog
            self._stop_watchdog(kill=True)
            raise
        try:
            if self._guard is not None:  # the group the watchdog is to kill
                with contextlib.suppress(OSError):
                    os.write(self._guard, b"%d\n" % self._proc.pid)
            with _live_lock:
                _live[self._proc.pid] = self
            assert self._proc.stdout is not None and self._proc.stderr is not None
            self._threads = [  # the readers first
                threading.Thread(target=_read, args=(self._proc.stdout, self._out), daemon=True),
                threading.Thread(target=_read, args=(self._proc.stderr, self._err), daemon=True),
            ]
            if stdin_text is not None:
                assert self._proc.stdin is not None
                data = stdin_text.encode("utf-8")
                self._threads.append(
                    threading.Thread(target=_write, args=(self._proc.stdin, data), daemon=True)
                )
            for thread in self._threads:
                thread.start()
        except BaseException:
            self.kill()
            self._release()
            raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    def wait(self) -> ChildResult:
        """Wait until the child exits or its time is up; kill its group either way."""
        if self._result is not None:
            return self._result
        timed_out = False
        duration = 0.0
        try:
            timed_out = not self._exited(self._start + self.timeout)
            duration = time.monotonic() - self._start
            self.kill()  # on timeout; after an exit, the stragglers it left
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=DRAIN_S)  # reap it (a SIGKILLed child goes at once)
            end = time.monotonic() + DRAIN_S  # what is left in the pipes
            for thread in self._threads:  # a grandchild that escaped the group may hold them
                thread.join(max(0.0, end - time.monotonic()))
        finally:
            self.kill()
            self._release()
        _check_stopping()
        rc = None if timed_out else self._proc.returncode
        self._result = ChildResult(
            returncode=rc,
            stdout=self._out.text(),
            stderr=self._err.text(),
            duration_s=duration,
            timed_out=timed_out,
            signal=None if timed_out else signal_name(rc),
            stdout_dropped=self._out.dropped,
            stderr_dropped=self._err.dropped,
        )
        return self._result

    def _exited(self, deadline: float) -> bool:
        """Whether the child exited before ``deadline``. On Linux it is left a zombie
        (waitid with WNOWAIT): its pid, the group's id, cannot be reused until the
        group is killed and the child reaped."""
        if not (sys.platform.startswith("linux") and hasattr(os, "waitid")):
            try:
                self._proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                return True
            except subprocess.TimeoutExpired:
                return False
        delay = 0.0005
        while True:
            try:
                flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                if os.waitid(os.P_PID, self._proc.pid, flags) is not None:
                    return True
            except ChildProcessError:  # already reaped
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            reading = [t for t in self._threads[:2] if t.is_alive()]
            if reading:  # the pipes close when it exits: wake then, or look again soon
                reading[0].join(min(remaining, 0.05))
            else:
                delay = min(delay * 2, 0.05, remaining)
                time.sleep(delay)

    def kill(self) -> None:
        """Kill the child's whole group and its watchdog, at once and without
        waiting (so a signal handler may call it); once is enough."""
        if self._killed:
            return
        if os.name == "posix":
            self._killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            watchdog = self._watchdog  # read once: _release may clear it meanwhile
            if watchdog is not None:
                with contextlib.suppress(OSError):
                    watchdog.kill()
        elif self._proc.poll() is None:  # pragma: no cover - Windows
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(self._proc.pid)],
                capture_output=True,
                check=False,
            )

    def _release(self) -> None:
        with _live_lock:
            _live.pop(self._proc.pid, None)
        self._stop_watchdog(kill=False)

    def _stop_watchdog(self, kill: bool) -> None:
        """Reap the watchdog (killed by :meth:`kill`), then close its pipe: in
        that order, so that it never acts on a group that is gone."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            if kill:
                with contextlib.suppress(OSError):
                    watchdog.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=DRAIN_S)
        guard, self._guard = self._guard, None
        if guard is not None:
            with contextlib.suppress(OSError):
                os.close(guard)


def _start_watchdog() -> tuple[Optional[subprocess.Popen], Optional[int]]:
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


def run(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Dict[str, str]] = None,
    cwd: Optional[str] = None,
    marker: Optional[str] = None,
) -> ChildResult:
    """Start a child and wait for it; see :class:`Child`."""
    return Child(argv, timeout, env=env, cwd=cwd, marker=marker).wait()


def python_argv(python: Optional[str] = None) -> List[str]:
    return [python or sys.executable]
