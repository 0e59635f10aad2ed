"""What envcheck is waiting for, on a terminal: the one-line wait display lives in
envcheck._progress (the probe, a lower layer, shows the deep probe's wait with it)."""

from __future__ import annotations

from .._progress import DELAY_S, Ticker, clear, on_terminal, show

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Callable


def smoke_waits() -> Callable[..., None]:
    """A progress callback (run_suite's) that shows what runs, and for how long, on a
    terminal's stderr; nothing elsewhere."""
    shown = on_terminal()

    def progress(kind: str, label: str, elapsed: float, result: object) -> None:
        if kind == "tick" and shown:
            show(f"running {label}", elapsed)
        elif kind == "done" and shown:
            clear()

    return progress


__all__ = ["DELAY_S", "Ticker", "clear", "on_terminal", "show", "smoke_waits"]
