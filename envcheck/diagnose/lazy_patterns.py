"""The readers' patterns, each compiled the first time a reader uses it.

Compiling all of the readers' 130 patterns when ``envcheck.diagnose`` is imported cost about
30 ms of every run, and a pasted report uses a third to a half of them (one collect_env, 54;
one error message, 20). A pattern made by :func:`compile_on_use` holds its source, and is
compiled when a reader first asks it anything else; from then on it holds the compiled
pattern's methods and attributes as its own, so a reader's call costs what it cost on the
compiled pattern (no lookup through ``__getattr__`` on a hot path).
"""

from __future__ import annotations

import re
from typing import Any, Optional, cast

# what the readers and scanning.py ask of a pattern, held once it is compiled
_HELD = (
    "match", "search", "finditer", "findall", "fullmatch", "sub", "subn", "split",
    "flags", "groups", "groupindex",
)  # fmt: skip


class LazyPattern:
    """A pattern's source and flags, compiled on first use (see the module)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self._flags = flags
        self._compiled: Optional[re.Pattern[str]] = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy's and pickle's questions: a plain object's answers
            raise AttributeError(name)
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self._flags)
            for held in _HELD:
                setattr(self, held, getattr(compiled, held))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"compile_on_use({self.pattern!r}, {self._flags})"


def compile_on_use(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled when first used (a LazyPattern, which answers
    as the compiled pattern does)."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))
