"""The `envcheck` console script: `healthcheck` takes a fast path that never imports click.

A healthcheck runs every few seconds for the life of a container; importing the
full CLI would double its cost. Everything else goes to the click CLI.

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

_stopping = False


def _stop(signum: int, frame: object) -> None:
    """Kill the children, say why on stderr (for Ctrl-C), exit 128 + signum."""
    global _stopping
    code = 128 + signum
    proc = sys.modules.get(f"{__package__}._proc")  # loaded only if a child was ever started
    if proc is not None:
        proc.kill_all()
    if _stopping:  # a second signal while the first unwinds: go now
        os._exit(code)
    _stopping = True
    if signum == signal.SIGINT:
        with contextlib.suppress(OSError):  # no stream buffer: safe at any moment
            os.write(2, b"envcheck: interrupted\n")
    raise SystemExit(code)


def handle_signals() -> None:
    """Install :func:`_stop` for SIGINT and SIGTERM, unless they are ignored
    (``nohup``, a background job): what was ignored stays ignored."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            if signal.getsignal(signum) != signal.SIG_IGN:
                signal.signal(signum, _stop)
        except ValueError:  # not the main thread (main() called from a thread)
            return


def main(argv: Optional[List[str]] = None) -> None:
    handle_signals()
    from ._cwd import leave_if_deleted

    leave_if_deleted()
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["healthcheck"]:
        from .healthcheck import main as healthcheck

        sys.exit(healthcheck(args[1:]))
    from .cli import main as cli_main

    cli_main(args)
