"""The `envcheck` console script: `healthcheck` takes a fast path past the CLI group.

A healthcheck runs every few seconds for the life of a container; importing the
CLI group (``envcheck.cli``, which loads the compatibility tables) would double
its cost. So `envcheck healthcheck` runs its click command (defined once, in
``envcheck.healthcheck``, and registered in the group too) on its own. Click
itself is imported: about 20 ms, the price of one definition of the command.
Everything else goes to the click CLI.

Both paths get the same signal handling: on SIGINT (Ctrl-C) or SIGTERM every
child process envcheck started is killed with its whole group, and envcheck
exits 130 or 143 (128 + the signal), not with click's "Aborted!". A SIGKILL of
envcheck is handled by the children's watchdogs (see ``envcheck._proc``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import List, Optional

# The exit code once a signal has told envcheck to stop. The SystemExit that _stop
# raises can be dropped by Python (raised inside a weakref callback or a __del__, it
# is only printed); child starts and waits (envcheck._proc) and main() read this, so
# the run still ends with 128 + signum.
stop_code: Optional[int] = None


def _stop(signum: int, frame: object) -> None:
    """Kill the children, say why on stderr (for Ctrl-C), exit 128 + signum."""
    global stop_code
    code = 128 + signum
    if stop_code is not None:  # a second signal while the first unwinds: go now
        proc = sys.modules.get(f"{__package__}._proc")
        if proc is not None:
            proc.kill_all()
        os._exit(code)
    stop_code = code
    proc = sys.modules.get(f"{__package__}._proc")  # loaded only if a child was ever started
    if proc is not None:
        proc.kill_all()
    if signum == signal.SIGINT:
        with contextlib.suppress(OSError):  # no stream buffer: safe at any moment
            os.write(2, b"envcheck: interrupted\n")
    raise SystemExit(code)


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
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            if signal.getsignal(signum) != signal.SIG_IGN:
                signal.signal(signum, _stop)
        except ValueError:  # not the main thread (main() called from a thread)
            return


def main(argv: Optional[List[str]] = None) -> None:
    try:
        _main(argv)
    except SystemExit as exc:
        if stop_code is not None and exc.code != stop_code:
            raise SystemExit(stop_code) from None
        raise
    if stop_code is not None:  # the signal's SystemExit was dropped, and the run went on
        raise SystemExit(stop_code)


def _main(argv: Optional[List[str]]) -> None:
    handle_signals()
    from ._cwd import leave_if_deleted

    leave_if_deleted()
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["healthcheck"]:
        from .healthcheck import main as healthcheck

        sys.exit(healthcheck(args[1:]))
    from .cli import main as cli_main

    cli_main(args)
