"""Colour and number formatting shared by every text renderer.

Colour follows the conventions users expect: ``NO_COLOR`` (any non-empty
value) turns it off, ``FORCE_COLOR`` / ``CLICOLOR_FORCE`` turn it on, otherwise
it is on only when the stream is a terminal that is not ``TERM=dumb`` (Emacs shells,
some CI log viewers: they show the escape codes as text).
"""

from __future__ import annotations

import os
from typing import IO, Mapping, Optional

from .._text import size as size  # moved down: checks use it too


def use_color(stream: IO[str], environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR") or env.get("CLICOLOR_FORCE"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Style:
    """ANSI styling that is a no-op when colour is off."""

    _CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(self._CODES[s] for s in styles)
        return f"\033[{codes}m{text}\033[0m"
