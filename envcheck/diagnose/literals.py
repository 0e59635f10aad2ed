"""The literal text a regular expression cannot match without: a cheap test before it.

Searching a megabyte with each of the catalogue's two hundred wordings is most of what
`diagnose` costs, and most wordings match nothing. A wording such as ``No matching
distribution found for (?P<req>torch...)`` cannot match a text that lacks "No matching
distribution found for"; Python's ``in`` finds (or rules out) that string many times faster
than the regular-expression engine scans for the whole wording.

The literal is the longest run of plain characters at the top level of the pattern (outside
groups, which may be optional, and never in a pattern with a top-level ``|``); a character
that a quantifier follows is not part of it. A pattern with no such run of at least
``MIN_LITERAL`` characters gets none, and is always searched.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

MIN_LITERAL = 5
_META = set(".^$*+?{}[]()|\\")
_QUANTIFIERS = set("*+?{")
_ESCAPED_PLAIN = set(".^$*+?{}[]()|\\/-'\"` :,=<>!@#%&~")
_CACHE: Dict[str, Optional[Tuple[str, ...]]] = {}


def required_literals(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    """Literals one of which every match contains (one per top-level alternative; lower
    case when the pattern ignores case), or None when some alternative has none."""
    key = f"{pattern.flags}:{pattern.pattern}"
    if key not in _CACHE:
        fold = bool(pattern.flags & re.IGNORECASE)
        found: List[str] = []
        for branch in _branches(pattern.pattern):
            run = _longest_run(branch)
            if run is None or len(run) < MIN_LITERAL:
                found = []
                break
            found.append(run.lower() if fold else run)
        _CACHE[key] = tuple(found) or None
    return _CACHE[key]


def _branches(source: str) -> List[str]:
    """The top-level alternatives of a pattern (the whole pattern when it has none)."""
    out, start, depth, i = [], 0, 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(source, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(source[start:i])
            start = i + 1
        i += 1
    out.append(source[start:])
    return out


def _longest_run(source: str) -> Optional[str]:
    if source.startswith("(?") and not source.startswith(("(?:", "(?P", "(?=", "(?!", "(?<")):
        return None  # inline flags other than i are not worth reading
    runs: List[str] = []
    run: List[str] = []
    depth, i = 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            i += 2
            if depth == 0 and nxt in _ESCAPED_PLAIN:
                run.append(nxt)
                i = _quantified(source, i, run, runs)
            else:
                runs.append("".join(run))
                run = []
            continue
        if ch == "[":
            runs.append("".join(run))
            run = []
            i = _class_end(source, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch in _META or depth > 0:
            runs.append("".join(run))
            run = []
            i += 1
            continue
        run.append(ch)
        i = _quantified(source, i + 1, run, runs)
    runs.append("".join(run))
    return max(runs, key=len, default=None)


def _quantified(source: str, i: int, run: List[str], runs: List[str]) -> int:
    """A quantifier after the last character makes it optional or repeated: the run ends
    before it."""
    if i < len(source) and source[i] in _QUANTIFIERS:
        last = run.pop()
        del last
        runs.append("".join(run))
        run.clear()
    return i


def _class_end(source: str, i: int) -> int:
    """The index after the character class that starts at ``i``."""
    j = i + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":
        j += 1
    while j < len(source) and source[j] != "]":
        j += 2 if source[j] == "\\" else 1
    return j + 1
