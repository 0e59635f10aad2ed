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
Python function (``target``, see ``forked._Forked``): NVML's C calls run that way,
so that a library that segfaults, calls ``exit()`` or hangs ends a child, never
envcheck; so do the gloo ranks the CPU smoke worker forks, torch already imported
(``smoke.group``). Both kinds get the same session, watchdog, timeout and bounded output.

One concept per module: ``child`` (:class:`Child`, the registry, :func:`run`),
``capture`` (the bounded output and the threads that read the pipes), ``watchdog``
and ``forked``. The names callers use are imported here.
"""

from .capture import HEAD_BYTES, MARKED_BYTES, MARKED_LINE_BYTES, TAIL_BYTES, Capture, size_text
from .child import DRAIN_S, Child, ChildResult, kill_all, python_argv, run, signal_name

__all__ = [
    "DRAIN_S",
    "HEAD_BYTES",
    "MARKED_BYTES",
    "MARKED_LINE_BYTES",
    "TAIL_BYTES",
    "Capture",
    "Child",
    "ChildResult",
    "kill_all",
    "python_argv",
    "run",
    "signal_name",
    "size_text",
]
