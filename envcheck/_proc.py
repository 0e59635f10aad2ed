"""Run a child process with a hard timeout and leave nothing behind.

Everything in envcheck that imports torch or touches a GPU runs through here:
a torch import can segfault, a wedged driver can hang ``cuda.is_available()``,
and an NCCL all_reduce can wait forever. The child gets its own process group
(session on POSIX) so that on timeout, and after a normal exit too, the whole
group is killed: grandchildren a hanging import started go with it.

``Child`` is started first and waited for later, so a caller can overlap the
slow child (importing torch takes a second) with its own work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence


@dataclass
class ChildResult:
    returncode: Optional[int]  # None when it timed out
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    signal: Optional[str]  # "SIGSEGV" when a signal ended it (not our timeout kill)

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


class Child:
    """A child process started now and reaped by :meth:`wait`."""

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stdin_text: Optional[str] = None,
    ) -> None:
        self.argv: List[str] = list(argv)
        self.timeout = timeout
        self._stdin_text = stdin_text
        self._start = time.monotonic()
        kwargs: dict = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]  # Windows only
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            text=True,
            encoding="utf-8",
            errors="replace",
            **kwargs,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def wait(self) -> ChildResult:
        remaining = max(0.0, self.timeout - (time.monotonic() - self._start))
        timed_out = False
        try:
            out, err = self._proc.communicate(self._stdin_text, timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._kill_group()
            try:
                out, err = self._proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a grandchild escaped the group and holds the pipe
                self._proc.kill()
                out, err = "", ""
        finally:
            duration = time.monotonic() - self._start
            self._kill_group()  # stragglers of a child that exited normally
        rc = None if timed_out else self._proc.returncode
        return ChildResult(
            returncode=rc,
            stdout=out or "",
            stderr=err or "",
            duration_s=duration,
            timed_out=timed_out,
            signal=None if timed_out else signal_name(rc),
        )

    def _kill_group(self) -> None:
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        elif self._proc.poll() is None:  # pragma: no cover - Windows
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(self._proc.pid)],
                capture_output=True,
                check=False,
            )


def run(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Dict[str, str]] = None,
    cwd: Optional[str] = None,
) -> ChildResult:
    """Start a child and wait for it; see :class:`Child`."""
    return Child(argv, timeout, env=env, cwd=cwd).wait()


def python_argv(python: Optional[str] = None) -> List[str]:
    return [python or sys.executable]
