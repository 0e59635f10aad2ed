"""Start a child, wait for it with a hard timeout, and kill its whole group: :class:`Child`.

Also the registry of running children that :func:`kill_all` empties at exit and from
the signal handlers of ``envcheck._entry``.
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

from .._record import record
from .capture import Capture, feed_stdin, pump
from .forked import _Forked
from .watchdog import Watchdog, start_watchdog

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Union

    _Process = Union["subprocess.Popen[bytes]", _Forked]

DRAIN_S = 2.0  # how long to read what is left once the child's group is dead
# what a child is: a program envcheck started, or a fork of envcheck
_ENTRY = __name__.rsplit(".", 2)[0] + "._entry"  # envcheck._entry


@record
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

    def why_ended(self, lines: int = 8) -> str:
        """Why a child that gave no answer ended: its signal or exit code, and the last
        ``lines`` lines of its stderr."""
        tail = "\n".join(self.stderr.strip().splitlines()[-lines:])
        why = f"killed by {self.signal}" if self.signal else f"exited with code {self.returncode}"
        return f"{why}\n{tail}".strip()


def signal_name(returncode: Optional[int]) -> Optional[str]:
    """Name of the signal that ended a child (POSIX negative return codes)."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


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
    entry = sys.modules.get(_ENTRY)
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
        self._marker = marker
        self._start = time.monotonic()
        self._out = Capture(marker)
        self._err = Capture()
        self._killed = False
        self._result: Optional[ChildResult] = None
        self._threads: List[threading.Thread] = []
        self._watchdog: Optional[Watchdog] = None
        self._guard: Optional[int] = None  # the watchdog's pipe: closing it fires the watchdog
        self._proc: _Process = self._launch(env, cwd, stdin_text, target)
        try:
            self._register()
            self._pump(stdin_text)
        except BaseException:
            self.kill()
            self._release()
            raise

    def _launch(
        self,
        env: Optional[Dict[str, str]],
        cwd: Optional[str],
        stdin_text: Optional[str],
        target: Optional[Callable[[], None]],
    ) -> _Process:
        """The watchdog, then the child in a session (process group) of its own: a program,
        or a fork that calls ``target``. Should the child not start, the watchdog goes."""
        kwargs: Dict[str, Any] = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
            # Started before the child, so that no moment of the child's life is unguarded.
            self._watchdog, self._guard = start_watchdog()
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]  # Windows only
        try:
            return (
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

    def _register(self) -> None:
        """Tell the watchdog which group to kill, and list the child for :func:`kill_all`."""
        if self._guard is not None:  # the group the watchdog is to kill
            with contextlib.suppress(OSError):
                os.write(self._guard, b"%d\n" % self._proc.pid)
        with _live_lock:
            _live[self._proc.pid] = self

    def _pump(self, stdin_text: Optional[str]) -> None:
        """Start the threads that read the child's output as it comes (and write its stdin)."""
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [  # the readers first
            threading.Thread(target=pump, args=(self._proc.stdout, self._out), daemon=True),
            threading.Thread(target=pump, args=(self._proc.stderr, self._err), daemon=True),
        ]
        if stdin_text is not None:
            assert self._proc.stdin is not None
            data = stdin_text.encode("utf-8")
            self._threads.append(
                threading.Thread(target=feed_stdin, args=(self._proc.stdin, data), daemon=True)
            )
        for thread in self._threads:
            thread.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def marked(self) -> List[str]:
        """The complete lines starting with the marker that the child has printed so far,
        in order (a child that answers more than once, while it runs)."""
        if not self._marker:
            return []
        lines = self._out.text().split("\n")[:-1]  # the last piece may be a line in progress
        return [line for line in lines if line.startswith(self._marker)]

    @property
    def running(self) -> bool:
        """Whether the child has not exited yet (asked without waiting)."""
        return self._result is None and not self._exited(time.monotonic())

    def wait_for(self, ready: Callable[[], bool], deadline: float) -> bool:
        """Until ``ready()`` holds, the child exits or ``deadline`` (time.monotonic) passes:
        whether ``ready()`` held. The child is left running (or a zombie: see _exited)."""
        while not ready():
            if self._exited(min(deadline, time.monotonic() + 0.05)):
                for thread in self._threads[:2]:  # what it printed before it exited
                    thread.join(max(0.0, min(DRAIN_S, deadline - time.monotonic())))
                return ready()
            if time.monotonic() >= deadline:
                return False
        return True

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
            watchdog.wait(timeout=DRAIN_S)
        guard, self._guard = self._guard, None
        if guard is not None:
            with contextlib.suppress(OSError):
                os.close(guard)


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
