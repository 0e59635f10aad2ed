"""What a pasted text says: :class:`Reading`, and the helpers every reader shares.

Pasted text is messy: markdown code fences, Windows line endings, wrapped or cut
lines, "Could not collect" and "N/A" for missing values, and several reports
glued together. Every reader records in a Reading what it recognises, which Facts
sections it actually saw, and never raises on anything else.
"""

from __future__ import annotations

import functools
import heapq
import re
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar

from .._patterns import compile_on_use
from .._record import field, record
from ..facts import Facts, PackageFacts
from ..values import Variant

MISSING = {"", "could not collect", "n/a", "none", "no cuda", "not available"}
# No line of collect_env or nvidia-smi output is anywhere near this long (the longest, the
# CPU flags, is ~1.5 KiB): the line parsers read at most this much of a line, so a pasted
# megabyte-long line costs no more than a short one. Every pattern here is also linear in
# the length of what it reads (no two adjacent parts that can match the same characters).
MAX_LINE = 8192
# a version as other tools print it: 1.4.0, 2.1.0+cu118, 0.17.0a0, 2.0.0.dev20230101
VERSION = r"(\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:\.?[a-z]+\d*)?(?:\+[A-Za-z0-9.]{1,20})?)"
MAX_GPUS = 64  # GPUs read from one listing; no host shows more (a DGX has 8 or 16)
_ANSI = compile_on_use(r"\x1b\[[0-9;]*[A-Za-z]")
# (str.replace, not str.translate: translate walks a non-ASCII text character by character
# in Python's dict, 60 ms a MiB; no replacement holds another's character, so the order is free)
_WIDTH = (("\uff1a", ": "), ("\u3000", " "), ("\u00a0", " "), ("\uff08", "("), ("\uff09", ")"))
_FENCE = compile_on_use(r"^\s*(```|~~~)[\w-]*\s*$")


@record
class Reading:
    """Facts built from text, what was seen, and what the text says about itself."""

    facts: Facts
    observed: Set[str] = field(default_factory=set)  # Facts sections the text showed
    pieces: List[str] = field(default_factory=list)  # "collect_env", "nvidia-smi table", ...
    notes: List[str] = field(default_factory=list)
    # Details (rules.DETAILS) the text states although Facts cannot show it: "no GPUs" is a
    # fact only when the text says so (nvidia-smi's "No devices were found").
    stated: Set[str] = field(default_factory=set)
    errors: List[str] = field(default_factory=list)  # why a recognised piece was not read
    # Facts of the text that Facts has no place for: "ld_library_path" (its folders),
    # "index_versions" (pip's "from versions" list), "packages" (site-packages folders named
    # in tracebacks, in order), "arch_list" (the sm_XX a build supports, from a warning)
    extra: Dict[str, Any] = field(default_factory=dict)
    where: Dict[str, str] = field(default_factory=dict)  # key fact -> the fragment it came from


@functools.lru_cache(maxsize=4)
def clean(text: str) -> str:
    """Line endings, ANSI colour, markdown fences and quote markers removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    # a report typed or translated on a CJK keyboard: full-width colons, ideographic and
    # non-breaking spaces
    for wide, narrow in _WIDTH:
        text = text.replace(wide, narrow)
    # each step walks the lines only when the text holds what it takes away (a fence line
    # holds ``` or ~~~, a quoted one starts "> "): a loop of Python over every line of a
    # long paste costs more than all the rest
    lines = text.split("\n")
    if "```" in text or "~~~" in text:
        lines = [s for s in lines if not ("`" in s or "~" in s) or not _FENCE.match(s)]
    if text.startswith("> ") or "\n> " in text:
        lines = [s[2:] if s.startswith("> ") else s for s in lines]
    return "\n".join(map(str.rstrip, lines))


@functools.lru_cache(maxsize=4)
def lowered(text: str) -> str:
    """The text in lower case, made once for every reader that tests it for words."""
    return text.lower()


# characters that a pattern ignoring case takes for an ASCII letter although str.lower makes
# them no ASCII letter (dotless i, long s); a dotted capital I lowers to two characters
_FOLDS_APART = ("\u0131", "\u017f")


@functools.lru_cache(maxsize=4)
def same_places_lowered(text: str) -> Optional[str]:
    """The lowered text when an ASCII word stands at each place in it where a pattern that
    ignores case finds that word in the text, else None."""
    low = lowered(text)
    return low if keeps_places(text, low) else None


def keeps_places(text: str, low: str) -> bool:
    """Whether ``low``, the text lowered, has each letter where the text has it, as a pattern
    ignoring case would find it (no dotted capital I moved the rest, no dotless i or long s
    that such a pattern takes for an ASCII letter)."""
    return len(low) == len(text) and not any(c in text for c in _FOLDS_APART)


def forget_texts() -> None:
    """Drop the forms of the texts read (cleaned, lowered, cut into lines): they serve the
    readers of one text, and kept they would hold several copies of a long paste for the
    life of the process (and spare the next read of the same text what a read pays)."""
    for derived in (clean, lowered, same_places_lowered, _lines):
        derived.cache_clear()


def lines_of(text: str) -> List[str]:
    """The lines of a cleaned text, each cut to MAX_LINE characters for the line parsers
    (a list of its own for each reader: cut once, copied in a tenth of the time)."""
    return list(_lines(text))


def lowered_lines(text: str) -> Sequence[str]:
    """The lines of a cleaned text in lower case, as lines_of cuts them: cut from the lowered
    text (lowered once for every reader), or each line lowered where lowering would not keep
    each letter in its place (see same_places_lowered)."""
    low = same_places_lowered(text)
    return _lines(low) if low is not None else [line.lower() for line in _lines(text)]


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> Tuple[str, ...]:
    return tuple([line[:MAX_LINE] for line in text.split("\n")])


def lines_holding(text: str, words: Sequence[str], lower: bool = False) -> Iterator[int]:
    """The numbers (as in lines_of) of the lines of a cleaned text that may hold one of the
    words: in order, each line that holds one (in lower case when ``lower``; every line when
    lowering would not keep each letter in its place, see same_places_lowered). For a reader
    whose lines all need a word that most lines lack; it tests each line found as before (a
    line lines_of cut may have lost its word).

    Each word is looked for by str.find, from the line after each line found to hold it: an
    alternation of the words has the engine try them at every character one starts with,
    about twice as slow for five words over a MiB, and no faster for one."""
    hay = same_places_lowered(text) if lower else text
    if hay is None:
        return iter(range(text.count("\n") + 1))
    assert all(word and "\n" not in word for word in words), words
    places = [_places(hay, word) for word in words]  # found as asked: a reader may stop early
    return _numbered(hay, places[0] if len(places) == 1 else heapq.merge(*places))


def _places(hay: str, word: str) -> Iterator[int]:
    """Where the word first stands on each line that holds it, in order."""
    at = hay.find(word)
    while at != -1:
        yield at
        end = hay.find("\n", at)
        at = hay.find(word, end + 1) if end != -1 else -1


def _numbered(hay: str, places: Iterable[int]) -> Iterator[int]:
    """The numbers of the lines the places (in order) stand on, each once."""
    number, counted, last = 0, 0, -1
    for at in places:
        number += hay.count("\n", counted, at)
        counted = at
        if number != last:
            yield number
            last = number


def lines_matching(text: str, pattern: re.Pattern[str]) -> Iterator[int]:
    """The numbers of the lines of the text (split at "\\n") where the pattern, which
    matches no line break and sees one as it sees either end of a line, finds a match. One
    search from the start of each line after one found, not a search of each line: the
    engine skips the lines that hold none at its own pace."""
    number, at = 0, 0  # the line that starts at ``at``
    match = pattern.search(text)
    while match:
        number += text.count("\n", at, match.start())
        yield number
        at = text.find("\n", match.start()) + 1
        if not at:
            return
        number += 1
        match = pattern.search(text, at)


T = TypeVar("T")


def at_most(gpus: List[T], reading: Reading, where: str) -> List[T]:
    """The first MAX_GPUS of a listing, with a note when there were more."""
    if len(gpus) > MAX_GPUS:
        reading.notes.append(
            f"the {where} lists more than {MAX_GPUS} GPUs; only the first {MAX_GPUS} were read"
        )
    return gpus[:MAX_GPUS]


def value(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    text = text.strip()
    return None if text.lower() in MISSING else text


def cuda_of_local(version: Optional[str]) -> Optional[str]:
    """The CUDA a wheel's local version names: "2.8.0+cu128" -> "12.8"; else None."""
    if not version or "+" not in version:
        return None
    variant = Variant.maybe(version.split("+", 1)[1])
    return str(variant.cuda) if variant is not None and variant.cuda else None


def note_conflict(reading: Reading, what: str, had: Optional[str], seen: str) -> bool:
    """True when the text already said something else for this fact (it is then kept and
    the conflict is said)."""
    if had is not None and had != seen:
        reading.notes.append(f"the text gives two values for {what}: {had} and {seen}; kept {had}")
        return True
    return False


def set_companion(reading: Reading, name: str, version: str) -> None:
    """A companion of torch (torchvision, torchaudio, ...) and its version, unless known."""
    t = reading.facts.torch
    if name not in {p.name for p in t.companions}:
        t.companions.append(PackageFacts(name, version))


def set_torch(reading: Reading, version: str, cuda: Optional[str], where: str) -> None:
    """The torch version a fragment gives, unless a fuller reader gave one; two different
    releases in one text are said ("2.1.0" beside "2.1.0+cu121" is the same release)."""
    t = reading.facts.torch
    if t.version is not None:
        note_conflict(reading, "torch", t.version.split("+")[0], version.split("+")[0])
        return
    t.installed, t.version, t.dist_version = True, version, version
    t.cuda = cuda or cuda_of_local(version)
    reading.observed.add("torch")
    if where not in reading.pieces:
        reading.pieces.append(where)


def set_python(reading: Reading, version: str, where: str) -> None:
    """The Python version a fragment gives, unless a fuller reader gave one."""
    p = reading.facts.python
    if p.version:
        return
    p.version, p.implementation = version, "CPython"
    reading.observed.add("python")
    if where not in reading.pieces:
        reading.pieces.append(where)


def key_facts(f: Facts) -> Dict[str, object]:
    """The facts a diagnosis turns on, by name, for recording which fragment gave each."""
    return {
        "torch.version": f.torch.version,
        "torch.cuda": f.torch.cuda,
        "python.version": f.python.version or None,
        "system.os": f.system.os or None,
        "system.machine": f.system.machine or None,
        "nvidia.driver_version": f.nvidia.driver_version,
        "nvidia.cuda_driver_version": f.nvidia.cuda_driver_version,
        "nvidia.gpus": tuple((g.name, g.compute_capability) for g in f.nvidia.gpus) or None,
        "toolkit.nvcc_version": f.toolkit.nvcc_version,
    }


def record_where(reading: Reading, before: Dict[str, object], where: str) -> None:
    """Each key fact a reader (or message) set or changed: where it was read."""
    for key, now in key_facts(reading.facts).items():
        if now is not None and now != before.get(key):
            reading.where[key] = where


def summary_of(reading: Reading) -> Dict[str, Any]:
    return {"pieces": reading.pieces, "observed": sorted(reading.observed), "notes": reading.notes}
