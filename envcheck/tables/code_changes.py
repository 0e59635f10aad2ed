"""compat_tables/code_changes.json: what each torch release (and its companions) removed,
changed or deprecated that a project's code may use, and how the scan recognises a use.

Read on its own, only by the code scan (envcheck.scan: ``envcheck scan``, ``check --code``,
install's notes): the static check never pays for it, and ``envcheck tables update``
carries and validates it with the other tables. The file is found as every table is
(``--tables DIR``, ENVCHECK_TABLES, the updated tables, else the built-in one), through
``tables.load.table_path``.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Dict, Mapping, Optional, Tuple

from packaging.version import Version

from .._record import record
from .load import table_path
from .model import Provenance
from .reader import Reader, TableError, read_document

NAME = "code_changes"


class ChangeKind(str, enum.Enum):
    """What a release did to an API: removed it, changed what it does, or deprecated it."""

    REMOVED = "removed"
    CHANGED = "changed"
    DEPRECATED = "deprecated"


class MatchKind(str, enum.Enum):
    """How a use is recognised, and in which files (see docs/scan.md)."""

    MODULE = "module"  # Python: an import of the module or of anything under it
    NAME = "name"  # Python: a reference to the dotted name, import aliases resolved
    CALL = "call"  # Python: a call of the dotted name, without (or with) a keyword
    METHOD = "method"  # Python: a method call .NAME(...) on any object
    ARGPARSE = "argparse"  # Python: add_argument("--option") without its replacement
    CPP = "cpp"  # C/C++/CUDA sources: a literal outside comments (optionally a pattern)
    SCRIPT = "script"  # shell scripts, Dockerfiles, Makefiles: a literal outside comments

    @property
    def python(self) -> bool:
        return self not in (MatchKind.CPP, MatchKind.SCRIPT)


_NO_VALUE = object()  # a CALL match's "value" that was not given (null is a value)


@record(frozen=True)
class Match:
    """One way a change shows in code. ``target`` is the dotted name, module, method name,
    option or literal; ``keyword`` and ``present`` refine a CALL (a call that passes, or
    lacks, the keyword), ``value`` a passed keyword's literal value; ``unless`` is the
    option an ARGPARSE call may also name (the replacement); ``pattern`` narrows a CPP
    literal to a regular expression on the same line."""

    kind: MatchKind
    target: str
    keyword: Optional[str] = None
    present: bool = False
    value: Any = _NO_VALUE
    unless: Optional[str] = None
    pattern: Optional[re.Pattern[str]] = None

    @property
    def has_value(self) -> bool:
        return self.value is not _NO_VALUE

    @property
    def needle(self) -> str:
        """The word a file must contain for this match to be possible (the prefilter):
        a dotted name's last part (every reference to it spells that part out, through an
        import or an attribute), a method name, an option, a literal."""
        if self.kind in (MatchKind.MODULE, MatchKind.NAME, MatchKind.CALL):
            return self.target.removesuffix(".*").rsplit(".", 1)[-1]
        return self.target

    @property
    def needle_regex(self) -> str:
        """The needle as a regular expression: a whole word where it starts or ends with a
        word character (``AT_CHECK`` is not in ``AT_CHECK_LATER``), except at the end of a
        literal narrowed by a pattern (``AT_DISPATCH`` starts ``AT_DISPATCH_FLOATING_TYPES``:
        the pattern decides)."""
        needle = self.needle
        head = r"(?<!\w)" if re.match(r"\w", needle) else ""
        whole = self.pattern is None and re.search(r"\w$", needle)
        return head + re.escape(needle) + (r"(?!\w)" if whole else "")

    def calls(self, name: Optional[str]) -> bool:
        """Whether a call of ``name`` is one this CALL match is about: the dotted name
        itself, or, for ``module.*``, any callable under the module."""
        if name is None:
            return False
        if self.target.endswith(".*"):
            return name.startswith(self.target[:-1])
        return name == self.target

    def describe(self) -> str:
        """What is matched, as the docs and the text output name it."""
        if self.kind is MatchKind.CALL and self.keyword:
            how = "with" if self.present else "without"
            return f"{self.target}(...) {how} {self.keyword}="
        if self.kind is MatchKind.METHOD:
            return f".{self.target}(...)"
        return self.target


@record(frozen=True)
class Change:
    """One change of one release that code can meet (``torch``: the torch release it took
    effect in, ``companion``: the companion release that made it, when not torch itself)."""

    id: str
    torch: Version
    kind: ChangeKind
    breaks: bool  # code that worked before fails or behaves differently; else it warns
    match: Match
    what: str
    fix: str
    provenance: Provenance
    companion: Optional[str] = None

    @property
    def release(self) -> str:
        """Who made the change, as users name it: "torch 2.6", "torchvision 0.17"."""
        return self.companion or f"torch {self.torch}"


@record(frozen=True)
class ChangeTable:
    """The changes, with the newest torch release whose notes were read (``covers``): a
    torch newer than that may have changes the table does not know, and the scan says so."""

    path: str
    as_of: str
    covers: Version
    changes: Tuple[Change, ...]
    sources: Mapping[str, str]

    def between(self, newer_than: Optional[Version], up_to: Version) -> Tuple[Change, ...]:
        """The changes in effect in torch ``up_to`` (its major.minor) that were made after
        ``newer_than`` (code written for that torch already lives with the older ones)."""
        top = minor(up_to)
        floor = minor(newer_than) if newer_than is not None else None
        return tuple(
            c for c in self.changes if c.torch <= top and (floor is None or c.torch > floor)
        )

    def source_text(self, key: str) -> str:
        return self.sources.get(key, key)


def minor(version: Version) -> Version:
    """A torch version's release (2.6.0+cu124 -> 2.6): changes are made per minor release."""
    return Version(f"{version.major}.{version.minor}")


def load_changes(directory: Optional[str] = None) -> ChangeTable:
    """code_changes.json, chosen as every table is; raises TableError naming the file,
    the record and the field of a bad value."""
    path = table_path(NAME, directory)
    return read_changes(read_document(path, NAME), str(path))


def read_changes(data: Dict[str, Any], path: str) -> ChangeTable:
    r = Reader(path, Reader(NAME, {}).strings(data.get("sources"), "sources"))
    raw = r.get(data, "changes", "changes", list)
    seen: Dict[str, str] = {}
    changes = []
    for i, item in enumerate(raw):
        change = _change(r, item, f"changes[{i}]")
        if change.id in seen:
            raise r.fail(f"changes[{i}].id", f"{change.id!r} is also {seen[change.id]}")
        seen[change.id] = f"changes[{i}]"
        changes.append(change)
    covers = r.version(r.get(data, "covers", "covers", str), "covers")
    late = [c.id for c in changes if c.torch > covers]
    if late:
        raise r.fail("covers", f"{covers} is older than the releases of {', '.join(late)}")
    changes.sort(key=lambda c: (c.torch, c.id))
    return ChangeTable(path, data["as_of"], covers, tuple(changes), r.sources)


def _change(r: Reader, raw: Any, where: str) -> Change:
    ident = r.get(raw, "id", where, str)
    where = f"{where} ({ident})"
    torch = r.version(r.get(raw, "torch", where, str), f"{where}.torch")
    if torch != minor(torch):
        raise r.fail(f"{where}.torch", f"{torch} is not a release (major.minor)")
    kind = r.get(raw, "kind", where, str)
    if kind not in {k.value for k in ChangeKind}:
        raise r.fail(f"{where}.kind", f"{kind!r} is not one of removed, changed, deprecated")
    fields = ["id", "torch", "companion", "kind", "breaks", "match", "what", "fix"]
    return Change(
        id=ident,
        torch=torch,
        kind=ChangeKind(kind),
        breaks=r.get(raw, "breaks", where, bool),
        match=_match(r, r.get(raw, "match", where, dict), f"{where}.match"),
        what=r.get(raw, "what", where, str),
        fix=r.get(raw, "fix", where, str),
        provenance=r.provenance(raw, where, fields),
        companion=r.get(raw, "companion", where, str, optional=True),
    )


_EXTRA = {
    MatchKind.CALL: {"without", "with", "value"},
    MatchKind.ARGPARSE: {"unless"},
    MatchKind.CPP: {"pattern"},
}


def _match(r: Reader, raw: Dict[str, Any], where: str) -> Match:
    kinds = [k for k in MatchKind if k.value in raw]
    if len(kinds) != 1:
        raise r.fail(where, f"needs exactly one of {', '.join(k.value for k in MatchKind)}")
    kind = kinds[0]
    unknown = set(raw) - {kind.value} - _EXTRA.get(kind, set())
    if unknown:
        raise r.fail(where, f"unknown field {sorted(unknown)[0]!r} for a {kind.value} match")
    target = r.get(raw, kind.value, where, str).strip()
    if not target:
        raise r.fail(f"{where}.{kind.value}", "empty")
    dotted = target[:-2] if kind is MatchKind.CALL and target.endswith(".*") else target
    if kind in (MatchKind.MODULE, MatchKind.NAME, MatchKind.CALL, MatchKind.METHOD) and not all(
        part.isidentifier() for part in dotted.split(".")
    ):
        raise r.fail(f"{where}.{kind.value}", f"{target!r} is not a dotted Python name")
    if kind is MatchKind.CALL:
        return _call(r, raw, target, where)
    if kind is MatchKind.CPP and raw.get("pattern") is not None:
        return Match(kind, target, pattern=_pattern(r, raw, target, where))
    unless = r.get(raw, "unless", where, str, optional=True)
    return Match(kind, target, unless=unless)


def _call(r: Reader, raw: Dict[str, Any], target: str, where: str) -> Match:
    without = r.get(raw, "without", where, str, optional=True)
    passed = r.get(raw, "with", where, str, optional=True)
    if (without is None) == (passed is None):
        raise r.fail(where, "a call match needs exactly one of 'without' and 'with'")
    if without is not None and "value" in raw:
        raise r.fail(f"{where}.value", "only a 'with' keyword has a value")
    keyword = without if without is not None else passed
    assert keyword is not None
    if not keyword.isidentifier():
        raise r.fail(where, f"{keyword!r} is not a keyword argument")
    value = raw.get("value", _NO_VALUE)
    return Match(MatchKind.CALL, target, keyword, passed is not None, value)


def _pattern(r: Reader, raw: Dict[str, Any], target: str, where: str) -> re.Pattern[str]:
    text = r.get(raw, "pattern", where, str)
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise r.fail(f"{where}.pattern", f"not a regular expression: {exc}") from None
    return pattern  # tried only on the lines that hold the literal (the prefilter)


__all__ = [
    "Change",
    "ChangeKind",
    "ChangeTable",
    "Match",
    "MatchKind",
    "TableError",
    "load_changes",
    "minor",
    "read_changes",
]
