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

import importlib
import re
import sys
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from .reading import same_places_lowered

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
        for branch in _branches(_unwrapped(pattern.pattern)):
            run = _longest_run(branch)
            if run is None or len(run) < MIN_LITERAL:
                found = []
                break
            found.append(run.lower() if fold else run)
        _CACHE[key] = tuple(found) or None
    return _CACHE[key]


_LINE_FLAGS = re.compile(r"\(\?[ms]+\)")


def _unwrapped(source: str) -> str:
    """The pattern without leading (?m) or (?s) (they change what ^, $ and . match, not its
    literal text), and without a group around the whole of it (its alternatives are then
    the pattern's)."""
    flags = _LINE_FLAGS.match(source)
    while flags:
        source = source[flags.end() :]
        flags = _LINE_FLAGS.match(source)
    if source.startswith("(?:"):
        close = next((t for t in _tokens(source) if t.kind == "close" and t.depth == 0), None)
        if close is not None and close.start == len(source) - 1:
            return source[3:-1]
    return source


class _Token(NamedTuple):
    kind: str  # plain (a literal character), quant, bar, open, close, other
    text: str  # the literal character, for plain
    start: int  # where it starts in the pattern
    depth: int  # the group depth it stands at (a group's own parentheses: outside)


def _tokens(source: str) -> Iterator[_Token]:
    """The pattern's tokens: escapes and character classes read whole."""
    depth, i = 0, 0
    while i < len(source):
        ch, start = source[i], i
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            i += 2
            plain = nxt in _ESCAPED_PLAIN
            yield _Token("plain" if plain else "other", nxt, start, depth)
            continue
        i += 1
        if ch == "[":
            i = _class_end(source, start)
            yield _Token("other", "", start, depth)
        elif ch == "(":
            yield _Token("open", ch, start, depth)
            depth += 1
        elif ch == ")":
            depth -= 1
            yield _Token("close", ch, start, depth)
        elif ch == "|":
            yield _Token("bar", ch, start, depth)
        elif ch in _QUANTIFIERS:
            if ch == "{":  # "{2,3}" is one token: its digits are not literal text
                close = source.find("}", start)
                i = close + 1 if close != -1 else len(source)
            yield _Token("quant", ch, start, depth)
        else:
            yield _Token("other" if ch in _META else "plain", ch, start, depth)


def _branches(source: str) -> List[str]:
    """The top-level alternatives of a pattern (the whole pattern when it has none)."""
    out, start = [], 0
    for token in _tokens(source):
        if token.kind == "bar" and token.depth == 0:
            out.append(source[start : token.start])
            start = token.start + 1
    out.append(source[start:])
    return out


def _longest_run(source: str) -> Optional[str]:
    """The longest run of literal characters at the top level; a character a quantifier
    follows is not in it (it may be absent or repeated)."""
    if source.startswith("(?") and not source.startswith(("(?:", "(?P", "(?=", "(?!", "(?<")):
        return None  # inline flags other than i are not worth reading
    runs: List[str] = []
    run: List[str] = []
    for token in _tokens(source):
        if token.kind == "plain" and token.depth == 0:
            run.append(token.text)
            continue
        if token.kind == "quant" and run:
            run.pop()
        runs.append("".join(run))
        run = []
    runs.append("".join(run))
    return max(runs, key=len, default=None)


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


# --------------------------------------------------------------------------- where a match starts
#
# A pattern that starts with an assertion ((?<![\w-]), \b), an alternation of words, or with
# case ignored gets no help from the regular-expression engine: it tries the whole pattern at
# every character, 20 to 80 ms a MiB. When every match starts with one of a few literals
# ("nvidia", "geforce", "rtx", ... for a GPU's name), only the places those stand (found by
# str.find, many times faster) can start a match, and the pattern is tried there alone: the
# same matches, in the same order.

MIN_START = 2  # shorter leading literals stand nearly everywhere: the engine's scan is as fast
MAX_STARTS = 64
MAX_FINDS = 20  # a pass of str.find costs about 0.6 ms a MiB
_sre: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT)
BLOCK = 1 << 16  # the text read ahead for the places a match may start
_STARTS: Dict[str, Optional[Tuple[str, ...]]] = {}


def leading_literals(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    """Literals one of which every match of the pattern starts with (lower case when it
    ignores case), or None when some match may start otherwise, or when the engine finds
    the starts as fast itself (a pattern that starts with its literal)."""
    key = f"{pattern.flags}:{pattern.pattern}"
    if key not in _STARTS:
        _STARTS[key] = _leading(pattern)
    return _STARTS[key]


def _leading(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    fold = bool(pattern.flags & re.IGNORECASE)
    try:
        items = list(_sre.parse(pattern.pattern, pattern.flags))
    except Exception:  # the engine compiled it: its parser reads it; else no help
        return None
    if not items or (items[0][0] is _sre.LITERAL and not fold):
        return None
    found = _starts(items, 8)
    if not found:
        return None
    if fold and not all(s.isascii() for s in found):
        return None
    for length in (8, 6, 4, 3):  # each is one pass of str.find over the text: the fewest
        starts = _shortest({(s.lower() if fold else s)[:length] for s in found})
        if len(starts) <= MAX_FINDS:
            break
    if len(starts) > MAX_FINDS or any(len(s) < MIN_START for s in starts):
        return None
    return starts


def _shortest(starts: Set[str]) -> Tuple[str, ...]:
    """The starts that no other start begins (where "mac" stands, "macos" may)."""
    return tuple(sorted(s for s in starts if not any(s.startswith(t) for t in starts if t != s)))


def _starts(items: List[Any], want: int) -> Optional[List[str]]:
    """Strings (of at most ``want`` characters, none empty) one of which every match of the
    parsed items starts with; None when a match may start with anything else or be empty."""
    i = 0
    while i < len(items) and items[i][0] in _ZERO_WIDTH:
        i += 1  # an assertion takes no character: what follows it starts the match
    if i == len(items):
        return None
    op, av = items[i]
    rest = items[i + 1 :]
    if op is _sre.LITERAL or op is _sre.IN:
        chars = [chr(av)] if op is _sre.LITERAL else _class(av)
        if not chars:
            return None
        tails = _starts(rest, want - 1) if want > 1 else None
        if tails is None or len(chars) * len(tails) > MAX_STARTS:
            return chars
        return [c + t for c in chars for t in tails]
    if op is _sre.SUBPATTERN:
        if av[1] or av[2]:
            return None  # flags set or cleared for the group: matched otherwise
        return _starts(list(av[3]) + rest, want)
    if op is _sre.BRANCH:
        out: List[str] = []
        for alternative in av[1]:
            found = _starts(list(alternative) + rest, want)
            if found is None:
                return None
            out += found
        return out if len(out) <= MAX_STARTS else None
    if op in _REPEATS:
        low, _, body = av
        first = _starts(list(body), want)  # the body taken once starts the match...
        if first is None or low > 0:
            return first
        later = _starts(rest, want)  # ...or, taken no times, what follows it does
        return None if later is None or len(first) + len(later) > MAX_STARTS else first + later
    return None


def _class(items: List[Any]) -> List[str]:
    """The characters of a small class such as [1-5] or [Tt]; none for a larger one, a
    negated one or one with a category (\\d)."""
    chars: List[str] = []
    for op, av in items:
        if op is _sre.LITERAL:
            chars.append(chr(av))
        elif op is _sre.RANGE and av[1] - av[0] < 10:
            chars += [chr(c) for c in range(av[0], av[1] + 1)]
        else:
            return []
    return chars if len(chars) <= 10 else []


def scan(
    pattern: re.Pattern[str], text: str, endpos: Optional[int] = None
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text[:endpos])``, trying the pattern only where one of its
    leading literals stands when it has them. The places are found a block at a time, so a
    search that stops at its first match reads little further."""
    end = len(text) if endpos is None else min(endpos, len(text))
    starts = leading_literals(pattern)
    hay: Optional[str] = text
    if starts is not None and pattern.flags & re.IGNORECASE:
        hay = same_places_lowered(text)  # None: not the same places in both
    if starts is None or hay is None:
        yield from pattern.finditer(text, 0, end)
        return
    done = 0
    for block in range(0, end, BLOCK):
        stop = min(end, block + BLOCK)
        places = set()
        for start in starts:  # the places a start stands that begin in this block
            at = hay.find(start, block, min(end, stop + len(start) - 1))
            while at != -1:
                places.add(at)
                at = hay.find(start, at + 1, min(end, stop + len(start) - 1))
        for at in sorted(places):
            if at < done:
                continue  # inside the last match: the engine goes on after it
            match = pattern.match(text, at, end)
            if match:
                yield match
                done = match.end()  # a match holds its leading literal: never empty


def first(pattern: re.Pattern[str], text: str) -> Optional[re.Match[str]]:
    """``pattern.search(text)``, by :func:`scan`."""
    return next(scan(pattern, text), None)
