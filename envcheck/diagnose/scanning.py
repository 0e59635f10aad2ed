r"""Searching a long text fast for a pattern the engine cannot skip ahead for, with the same
matches in the same order.

A pattern that starts with an assertion ((?<![\w-]), \b), an alternation of words, or with
case ignored gets no help from the regular-expression engine: it tries the whole pattern at
every character, 20 to 80 ms a MiB. Two ways round it, each exact:

- the places a match may start: when every match starts with one of a few literals
  ("nvidia", "geforce", "rtx", ... for a GPU's name), only the places those stand (found by
  str.find, many times faster) can start a match, and the pattern is tried there alone
  (:func:`scan`, :func:`first`);
- the places a match may stand: when every match holds one of its required literals
  (literals.py, or the leading literals of a part every match passes through, such as a
  group of words) and is at most so long, a match starts at most that far before one of
  them, and the engine searches only those stretches (:func:`search`, and :func:`scan`
  for a pattern without leading literals).
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any, Iterator, List, Optional, Set, Tuple

from .literals import PerPattern, answered_ahead, required_literals
from .reading import same_places_lowered

MIN_START = 2  # shorter leading literals stand nearly everywhere: the engine's scan is as fast
MAX_STARTS = 64
MAX_FINDS = 24  # a pass of str.find costs about 0.6 ms a MiB (the GPU mentions need 22)
_sre: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT)
BLOCK = 1 << 16  # the text read ahead for the places a match may start
# A text this short the engine searches whole: reading a pattern's literals (Python's own
# parser, once a run for each pattern) costs more than the engine's pass over 16 KiB, and a
# pasted report is most often shorter.
DIRECT = 1 << 14


@PerPattern
def _parsed(pattern: re.Pattern[str]) -> Any:
    """The pattern as the engine's own parser reads it (a list of (op, argument)), parsed
    once for every question asked of it (its leading and inner literals, its reach, its
    line starts): the parser is Python, and a first diagnose asks them of every wording it
    searches. None where the parser does not read it (the engine compiled it, so it does:
    no help then)."""
    try:
        return _sre.parse(pattern.pattern, pattern.flags)
    except Exception:
        return None


@answered_ahead
def leading_literals(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    """Literals one of which every match of the pattern starts with (lower case when it
    ignores case), or None when some match may start otherwise, or when the engine finds
    the starts as fast itself (a pattern that starts with its literal)."""
    return _leading(pattern)


def folds(pattern: re.Pattern[str]) -> bool:
    """Whether some part of the pattern ignores case (the whole, or a ``(?i:...)`` group):
    its leading literals are then lower case, to be found in the lower-cased text, where a
    literal of a part that keeps case stands wherever it stands in the text, and more."""
    return bool(pattern.flags & re.IGNORECASE) or "(?i" in pattern.pattern


def _leading(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    fold = folds(pattern)
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    items = list(parsed)
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


def prefixes(source: str, length: int) -> Optional[Tuple[str, ...]]:
    """The strings of at most ``length`` characters one of which every match of the
    pattern source (case kept) starts with, each of its top-level alternatives read alone
    (a long list of words has more than MAX_STARTS in all); None when a match may start
    with anything else."""
    items = list(_sre.parse(source))
    whole = len(items) == 1 and items[0][0] is _sre.BRANCH
    found: Set[str] = set()
    for alternative in items[0][1][1] if whole else [items]:
        starts = _starts(list(alternative), length)
        if starts is None:
            return None
        found.update(starts)
    return _shortest(found)


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
        if av[1] & ~re.IGNORECASE or av[2]:
            return None  # flags set or cleared for the group: matched otherwise
        # (?i:...): its starts may stand in any case, and folds() has the text lowered
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
    if end <= DIRECT:
        yield from pattern.finditer(text, 0, end)
        return
    starts = leading_literals(pattern)
    if starts is None:
        yield from _stretches(pattern, text, end)
        return
    hay = same_places_lowered(text) if folds(pattern) else text
    if hay is None:  # not the same places in both
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


MAX_WIDTH = 4096  # a wording that may match more than this is searched whole


def search(pattern: re.Pattern[str], text: str) -> Optional[re.Match[str]]:
    """``pattern.search(text)``: from the places its leading literals stand when it has
    them, else over the stretches around its required literals when a match is at most so
    long, else whole (a text of at most DIRECT characters: whole)."""
    if len(text) <= DIRECT:
        return pattern.search(text)
    if _at_line_starts(pattern) and "\n" not in text:
        return pattern.match(text)  # a line start in a text of one line: its start alone
    starts = leading_literals(pattern)
    if starts is not None and not _fewer_inside(pattern, len(starts)):
        return first(pattern, text)
    return next(_stretches(pattern, text, len(text)), None)


@answered_ahead
def _at_line_starts(pattern: re.Pattern[str]) -> bool:
    """Whether every match starts at a line start (a pattern that starts with ``^``; in
    multi-line mode the engine tries it at every character all the same)."""
    items = list(_parsed(pattern) or ())
    # the parser reads ^ as the string's start; (?m) makes it a line's when compiled
    return bool(items) and items[0] == (_sre.AT, _sre.AT_BEGINNING)


def _fewer_inside(pattern: re.Pattern[str], starts: int) -> bool:
    """Whether the stretches around the literals every match holds are found in fewer
    passes over the text than the places its matches start (a case-insensitive list of
    phrases that all end "of torch" starts two dozen ways: its middle, in two)."""
    inner = inner_literals(pattern)
    return inner is not None and len(inner) < starts and _reach(pattern) is not None


MIN_INNER = 4  # a part's leading literals shorter than this stand nearly everywhere


@answered_ahead
def inner_literals(pattern: re.Pattern[str]) -> Optional[Tuple[str, ...]]:
    """Literals one of which every match holds (lower case when some part ignores case):
    the leading literals of a part of the pattern's top level, which every match passes
    through ("aarch64", "arm64", "x86_64", "x86-64" for a group of those words), those of
    the part whose shortest is longest; for a pattern that is one alternation (or one group
    around one) whose whole has no such part, those of each alternative, read alone. None
    when no part has a few of MIN_INNER or more."""
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    items = list(parsed)
    fold = folds(pattern)
    found = _inner(items, fold)
    alternatives = _alternatives(items)
    if found is None and alternatives:
        each = [_inner(alternative, fold) for alternative in alternatives]
        union = _shortest({s for part in each for s in part or ()})
        found = union if all(each) and len(union) <= MAX_FINDS else None
    return found


def _inner(items: List[Any], fold: bool) -> Optional[Tuple[str, ...]]:
    """The leading literals of the part of the items whose shortest is longest, of those
    the fewest (at least MIN_INNER characters, at most MAX_FINDS of them), or None."""
    best: Optional[Tuple[str, ...]] = None
    for i, (op, _) in enumerate(items):
        found = None if op in _ZERO_WIDTH else _starts(items[i:], 8)
        if not found or (fold and not all(s.isascii() for s in found)):
            continue
        literals = _shortest({s.lower() if fold else s for s in found})
        shortest = min(map(len, literals))
        if len(literals) > MAX_FINDS or shortest < MIN_INNER:
            continue
        if best is None or (shortest, -len(literals)) > (min(map(len, best)), -len(best)):
            best = literals
    return best


def _alternatives(items: List[Any]) -> Optional[List[List[Any]]]:
    """The whole matches of a pattern with one alternation at its top level, or in one group
    around its whole (``(?i:a|b)``: a group that sets no flag but ignoring case matches what
    its body does), each alternative with what stands before and after it (the parser takes
    what all alternatives start with out of them: ``\\bab|\\bcd`` is ``\\b(?:ab|cd)``);
    else None."""
    while len(items) == 1 and items[0][0] is _sre.SUBPATTERN:
        _, add, remove, body = items[0][1]
        if add & ~re.IGNORECASE or remove:
            return None
        items = list(body)
    branches = [i for i, (op, _) in enumerate(items) if op is _sre.BRANCH]
    if len(branches) != 1:
        return None
    at = branches[0]
    return [items[:at] + list(alternative) + items[at + 1 :] for alternative in items[at][1][1]]


def _stretches(pattern: re.Pattern[str], text: str, end: int) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, 0, end)``, the engine trying only the stretches where a
    match may stand: those before each place one of the literals every match holds stands
    (its required literals, else its inner literals), when a match is at most so long."""
    literals, fold = required_literals(pattern), bool(pattern.flags & re.IGNORECASE)
    if literals is None:
        literals, fold = inner_literals(pattern), folds(pattern)
    reach = _reach(pattern)
    hay = same_places_lowered(text) if fold else text
    if literals is None or reach is None or hay is None:
        yield from pattern.finditer(text, 0, end)
        return
    width, ahead = reach
    tried = 0  # no match starts before this but those found
    for block in range(0, end, BLOCK):  # the literals found a block at a time
        stop = min(end, block + BLOCK)
        places = set()
        for literal in literals:
            at = hay.find(literal, block, min(end, stop + len(literal) - 1))
            while at != -1:
                places.add(at)
                at = hay.find(literal, at + 1, min(end, stop + len(literal) - 1))
        if len(places) * ahead > BLOCK:  # the stretches would be the block, or more
            yield from pattern.finditer(text, max(tried, block - width), end)
            return
        for at in sorted(places):
            if at < tried:
                continue  # inside a match found: the engine goes on after it
            # a match that holds the literal here starts in [at - width, at]; the engine
            # reads no further than ``ahead`` past a start, so the text cut there answers
            # the same for those starts (a match found past ``at`` might not: the next
            # stretch decides)
            match = pattern.search(text, max(tried, at - width), min(end, at + ahead))
            if match and match.start() <= at:
                yield match
                tried = match.end()  # a match holds its literal: never empty
            else:
                tried = at + 1


@answered_ahead
def _reach(pattern: re.Pattern[str]) -> Optional[Tuple[int, int]]:
    """The longest match of the pattern, and how far past its start the engine may read
    (the match, what each lookahead reads, and one more character for $ or \\b); None when
    either is unbounded or past MAX_WIDTH."""
    parsed = _parsed(pattern)
    try:
        width = parsed.getwidth()[1]
        ahead = _lookahead(list(parsed))
    except Exception:  # not parsed, or a width the parser cannot tell: no help
        return None
    if ahead is not None and width + ahead <= MAX_WIDTH:
        return (width, width + ahead + 2)  # past the last character read
    return None


def _lookahead(items: List[Any]) -> Optional[int]:
    """How many characters the lookaheads among the items read, at most (None: unknown)."""
    total = 0
    for op, av in items:
        if op in (_sre.LITERAL, _sre.NOT_LITERAL, _sre.IN, _sre.ANY, _sre.AT, _sre.CATEGORY):
            continue
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            inner = _lookahead(list(av[1]))
            if inner is None:
                return None
            total += inner + (av[1].getwidth()[1] if av[0] == 1 else 0)
        elif op is _sre.SUBPATTERN or op in _REPEATS or op is _sre.BRANCH:
            bodies = av[1] if op is _sre.BRANCH else [av[-1]]
            for body in bodies:
                inner = _lookahead(list(body))
                if inner is None:
                    return None
                total += inner
        else:
            return None  # a back reference, an atomic group: not worth reading
    return total
