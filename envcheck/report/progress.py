"""What envcheck is waiting for, on a terminal: the one-line wait display lives in
envcheck._progress (the probe, a lower layer, shows the deep probe's wait with it)."""

from .._progress import DELAY_S, Ticker, clear, on_terminal, show

__all__ = ["DELAY_S", "Ticker", "clear", "on_terminal", "show"]
