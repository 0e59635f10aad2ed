"""The `envcheck` console script: `healthcheck` and the usual lines of `check`, `diagnose` and
`probe` take a fast path past click.

A healthcheck runs every few seconds for the life of a container; importing the
CLI group (``envcheck.cli``, which loads the compatibility tables) would double
its cost. So `envcheck healthcheck` runs without the group: its usual command line
(no option, or ``--gpus N``, ``--timeout S``, ``--deep``) without click either (about
20 ms), anything else through its one click command (``envcheck.healthcheck_command``,
registered in the group too), which reads it as the group would. `envcheck`, `envcheck
check`, `envcheck diagnose FILE|-` and `envcheck probe` with their usual options run without
click as well (envcheck.commands), the same body as the click command's.
Everything else goes to the click CLI.

Every way in (both paths, and ``torchrun ... -m envcheck.smoke``, whose ranks are
started without the console script) runs through :func:`run_entry`, so all get the
same signal handling: on SIGINT (Ctrl-C) or SIGTERM every child process envcheck
started is killed with its whole group, and envcheck exits 130 or 143 (128 + the
signal) after one line, not with click's "Aborted!" or a KeyboardInterrupt traceback
(once per rank under torchrun). A SIGKILL of envcheck is handled by the children's
watchdogs (see ``envcheck._proc``). And the same streams (``envcheck._stdout``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Callable, List, Optional

# The exit code once a signal has told envcheck to stop. The SystemExit that _stop
# raises can be dropped by Python (raised inside a weakref callback or a __del__, it
# is only printed); child starts and waits (envcheck._proc) and main() read this, so
# the run still ends with 128 + signum.
stop_code: Optional[int] = None


# How long the main thread has to act on a signal itself before the watcher ends the
# process (see _watch): ample for Python code, which runs the handler at once.
GRACE_S = 3.0
_HANDLED = (signal.SIGINT, signal.SIGTERM)
_watching = False


def _stop(signum: int, frame: object) -> None:
    """Kill the children, say why on stderr (for Ctrl-C), exit 128 + signum."""
    global stop_code
    code = 128 + signum
    if stop_code is not None:  # a second signal while the first unwinds: go now
        _kill_children()
        os._exit(code)
    stop_code = code
    _kill_children()
    if signum == signal.SIGINT:
        _say_interrupted()
    raise SystemExit(code)


def _kill_children() -> None:
    proc = sys.modules.get(f"{__package__}._proc")  # loaded only if a child was ever started
    if proc is not None:
        proc.kill_all()


def _say_interrupted() -> None:
    with contextlib.suppress(OSError):  # no stream buffer: safe at any moment
        os.write(2, b"envcheck: interrupted\n")


def _watch(read_fd: int) -> None:
    """A daemon thread reading the signal numbers Python's C-level handler writes to the
    wakeup fd. Python runs :func:`_stop` only once the main thread is back in Python code;
    a main thread held in C code (a torch.distributed store wait or gloo collective for a
    rank that has already gone, bounded only by minutes of timeout) never gets there, and
    torchrun would SIGKILL the rank, silent, 30 s later. After :data:`GRACE_S` the watcher
    does what _stop would have done, and ends the process with 128 + signum; a main thread
    that is unwinding from _stop's SystemExit ends first."""
    while True:
        try:
            data = os.read(read_fd, 1)
        except OSError:
            return
        if not data:
            return
        if data[0] not in _HANDLED:  # a handler someone else installed: not ours to judge
            continue
        time.sleep(GRACE_S)
        _kill_children()
        if stop_code is None and data[0] == signal.SIGINT:
            _say_interrupted()  # _stop never ran: say it here, once
        os._exit(stop_code if stop_code is not None else 128 + data[0])


def _watch_from_a_thread() -> None:
    """Start :func:`_watch` once per process, from the main thread (set_wakeup_fd needs it).
    A child forked without exec drops the wakeup fd: its signals are not its parent's."""
    global _watching
    if _watching:
        return
    read_fd, write_fd = os.pipe()  # not inherited by children (PEP 446)
    os.set_blocking(write_fd, False)
    try:
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read_fd)
        os.close(write_fd)
        return
    os.register_at_fork(after_in_child=_forget_wakeup_fd)
    _watching = True
    threading.Thread(target=_watch, args=(read_fd,), name="envcheck-signals", daemon=True).start()


def _forget_wakeup_fd() -> None:
    global _watching
    _watching = False
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)


def _unraisable(info: sys.UnraisableHookArgs) -> None:
    """Python's hook for exceptions it must drop, minus the SystemExit of a signal that
    :func:`_stop` raised inside a callback: that is no error, and is honoured anyway."""
    if isinstance(info.exc_value, SystemExit) and stop_code is not None:
        return
    sys.__unraisablehook__(info)


def handle_signals() -> None:
    """Install :func:`_stop` for SIGINT and SIGTERM, unless they are ignored
    (``nohup``, a background job): what was ignored stays ignored."""
    sys.unraisablehook = _unraisable
    installed = False
    for signum in _HANDLED:
        try:
            if signal.getsignal(signum) != signal.SIG_IGN:
                signal.signal(signum, _stop)
                installed = True
        except ValueError:  # not the main thread (main() called from a thread)
            return
    if installed:
        _watch_from_a_thread()


def run_entry(body: Callable[[], object]) -> None:
    """Run a way into envcheck: signals handled (:func:`handle_signals`) and stdout and
    stderr guarded (``envcheck._stdout``) before ``body`` imports anything heavy, and after
    a signal the exit code is 128 + signum whatever ``body`` was doing."""
    handle_signals()
    from ._stdout import guard_stdout

    guard_stdout()
    try:
        body()
    except SystemExit as exc:
        if stop_code is not None and exc.code != stop_code:
            raise SystemExit(stop_code) from None
        raise
    if stop_code is not None:  # the signal's SystemExit was dropped, and the run went on
        raise SystemExit(stop_code)


def main(argv: Optional[List[str]] = None) -> None:
    run_entry(lambda: _main(argv))


def _run_plain(args: List[str]) -> Optional[int]:
    """``args`` run without click (envcheck.commands): the exit code, or None where click
    must read them. A usage error found while running is said as click says one."""
    from ._plain_args import UsageProblem
    from .commands import command_of, run_plain
    from .report.emit import failures_explained

    with failures_explained():
        try:
            return run_plain(args)
        except UsageProblem as exc:
            from .cli import usage_error

            return usage_error(command_of(args), str(exc))


def _main(argv: Optional[List[str]]) -> None:
    from ._cwd import leave_if_deleted

    leave_if_deleted()
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["healthcheck"]:
        from .healthcheck import plain_options, run

        options = plain_options(args[1:])
        if options is not None:  # the usual command line: no click to import
            sys.exit(run(**options))
        from .healthcheck_command import main as healthcheck

        sys.exit(healthcheck(args[1:]))
    code = _run_plain(args)
    if code is not None:  # the usual line of a command envcheck.commands runs: no click
        sys.exit(code)
    from .cli import main as cli_main

    cli_main(args)
