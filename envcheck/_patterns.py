"""Regular expressions compiled the first time they are used.

Compiling costs: all of diagnose's readers' 130 patterns took about 30 ms of every run when
``envcheck.diagnose`` was imported, and the message catalogue's 267 wordings about 35 ms
when it was read, while a pasted report uses a third to a half of the first and about ten
of the second. A :class:`LazyPattern` holds its source and the flags it will compile with
(what the literal tests of diagnose/literals.py read), and compiles when first asked
anything else; from then on it holds the compiled pattern's methods as its own, so a call
costs what it costs on the compiled pattern (no lookup through ``__getattr__`` on a hot
path).
"""

from __future__ import annotations

import re
from typing import Any, Optional, cast

# the flags a pattern's leading inline groups set ("(?m)", "(?is)"), as the compiler sets
# them (a global flag may stand only there); a str pattern is Unicode unless ASCII or LOCALE
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_FLAG = {"a": re.ASCII, "i": re.I, "L": re.L, "m": re.M, "s": re.S, "u": re.U, "x": re.X}
# what the readers and diagnose/scanning.py ask of a pattern, held once it is compiled
_HELD = (
    "match", "search", "finditer", "findall", "fullmatch", "sub", "subn", "split",
    "groups", "groupindex",
)  # fmt: skip


def flags_of(source: str, flags: int = 0) -> int:
    """The flags ``re.compile(source, flags)`` gives its pattern, read without compiling."""
    at = 0
    found = _GLOBAL_FLAGS.match(source)
    while found:
        for letter in found.group(1):
            flags |= _FLAG[letter]
        at = found.end()
        found = _GLOBAL_FLAGS.match(source, at)
    return flags if flags & (re.ASCII | re.LOCALE) else flags | re.UNICODE


class LazyPattern:
    """A pattern's source and flags, compiled on first use (see the module)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self.flags = flags_of(source, flags)
        self._compiled: Optional[re.Pattern[str]] = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now, the first time)."""
        if self._compiled is None:
            self._hold(re.compile(self.pattern, self.flags))
        return cast("re.Pattern[str]", self._compiled)

    def _hold(self, compiled: re.Pattern[str]) -> None:
        self._compiled = compiled
        for name in _HELD:
            setattr(self, name, getattr(compiled, name))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # its own, copy's and pickle's: a plain object's answers
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.pattern!r})"


def compile_on_use(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled when first used (a LazyPattern, which answers
    as the compiled pattern does)."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))
