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

import functools
import json
import re
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Protocol,
    Tuple,
    TypeVar,
)

from .._patterns import compile_on_use

MIN_LITERAL = 5
_ESCAPED_PLAIN = set(".^$*+?{}[]()|\\/-'\"` :,=<>!@#%&~")


class Source(Protocol):
    """What a literal test reads of a pattern: its source and flags (a compiled pattern, or a
    catalogue wording that is not compiled yet: tables.message_records.Wording)."""

    @property
    def pattern(self) -> str: ...

    @property
    def flags(self) -> int: ...


S = TypeVar("S", bound=Source)
T = TypeVar("T")


class PerPattern(Generic[S, T]):
    """A question about a pattern, answered once for each source and flags and remembered
    (as the patterns are, for the life of the process): the answers of ``question`` by
    ``key``, in ``answers``.

    A question made with ``@answered_ahead`` is also answered ahead, when envcheck is built,
    for the catalogue's wordings and the readers' patterns (tools/pattern_answers.py writes
    ANSWERS, and a test fails when one differs from what the question answers now): a run
    reads those answers instead of parsing each pattern, about 30 ms of a first read of a
    long paste. A pattern that is not there (a catalogue from ``--tables``) is answered as
    it is asked."""

    def __init__(self, question: Callable[[S], T], ahead: bool = False) -> None:
        self.question = question
        self.answers: Dict[str, T] = {}
        self.name = question.__name__
        functools.update_wrapper(self, question)
        if ahead:
            AHEAD[self.name] = self

    @staticmethod
    def key(pattern: Source) -> str:
        """The flags as a number (a wording's RegexFlag prints by name) and the source: a
        wording and its compiled pattern share one key, as they share every answer."""
        return f"{int(pattern.flags)}:{pattern.pattern}"

    def __call__(self, pattern: S) -> T:
        key = self.key(pattern)
        if key not in self.answers:
            stored = _stored().get(key) if self.name in AHEAD else None
            if isinstance(stored, dict) and self.name in stored:
                self.answers[key] = _tuples(stored[self.name])
            else:
                self.answers[key] = self.question(pattern)
        return self.answers[key]


ANSWERS = Path(__file__).with_name("pattern_answers.json")
AHEAD: Dict[str, PerPattern[Any, Any]] = {}  # the questions answered ahead, by name


def answered_ahead(question: Callable[[S], T]) -> PerPattern[S, T]:
    """``PerPattern(question)``, its answers also worked out ahead (ANSWERS)."""
    return PerPattern(question, ahead=True)


@functools.cache
def _stored() -> Dict[str, Dict[str, Any]]:
    """The answers worked out ahead (ANSWERS), by pattern key and question; none when the
    file is missing or unreadable (each question is then answered as it is asked)."""
    try:
        answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return answers if isinstance(answers, dict) else {}


def _tuples(answer: Any) -> Any:
    """An answer as the question gives it: JSON's lists are tuples."""
    return tuple(answer) if isinstance(answer, list) else answer


@answered_ahead
def required_literals(pattern: Source) -> Optional[Tuple[str, ...]]:
    """Literals one of which every match contains (one per top-level alternative; lower
    case when the pattern ignores case), or None when some alternative has none."""
    fold = bool(pattern.flags & re.IGNORECASE)
    found: List[str] = []
    for branch in _branches(_unwrapped(pattern.pattern)):
        run = _longest_run(branch)
        if run is None or len(run) < MIN_LITERAL:
            return None
        found.append(run.lower() if fold else run)
    return tuple(found) or None


_LINE_FLAGS = compile_on_use(r"\(\?[ms]+\)")


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
    kind: str  # plain (literal characters), quant, bar, open, close, other
    text: str  # the literal characters, for plain
    start: int  # where it starts in the pattern
    depth: int  # the group depth it stands at (a group's own parentheses: outside)


# The pattern's tokens, each run of plain characters one token (read by the engine, not a
# loop over characters in Python: the catalogue's sources are read once a run, 30 ms that way)
_TOKEN = compile_on_use(
    r"(?P<plain>[^\\\[\](){}|*+?.^$]+)"
    r"|\\(?P<escaped>.)"
    r"|(?P<cls>\[\^?\]?(?:\\.|[^\]\\])*\]?)"  # a class, read whole: its | or ( is no syntax
    r"|(?P<quant>\{[^}]*\}?|[*+?])"  # "{2,3}" one token: its digits are not literal text
    r"|(?P<open>\()|(?P<close>\))|(?P<bar>\|)"
    r"|(?P<other>.)",  # . ^ $ ] }, and a backslash that ends the pattern
    re.S,
)


def _tokens(source: str) -> Iterator[_Token]:
    """The pattern's tokens: escapes and character classes read whole."""
    depth = 0
    for match in _TOKEN.finditer(source):
        kind, start = str(match.lastgroup), match.start()
        if kind == "escaped":
            char = match.group("escaped")
            yield _Token("plain" if char in _ESCAPED_PLAIN else "other", char, start, depth)
        elif kind == "open":
            yield _Token("open", "(", start, depth)
            depth += 1
        elif kind == "close":
            depth -= 1
            yield _Token("close", ")", start, depth)
        elif kind == "plain":
            yield _Token("plain", match.group(), start, depth)
        else:
            yield _Token("other" if kind == "cls" else kind, "", start, depth)


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
    run = ""
    for token in _tokens(source):
        if token.kind == "plain" and token.depth == 0:
            run += token.text
            continue
        if token.kind == "quant":
            run = run[:-1]
        runs.append(run)
        run = ""
    runs.append(run)
    return max(runs, key=len, default=None)
