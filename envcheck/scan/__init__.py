"""The code scan: which uses of what a torch release removed, changed or deprecated a
project's code holds (``envcheck scan``, ``envcheck check --code``, install's notes).

The project's code is read, never imported or run: Python with ``ast``, C/C++/CUDA sources
and launch scripts as text. A prefilter on each file's words decides which files are parsed
at all, and in those only the statements over the lines that hold a change's word are walked
in full, so a large project with few torch calls costs little more than reading it.
"""

from __future__ import annotations

import bisect
import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..tables.code_changes import Change, ChangeTable, MatchKind, TableError, load_changes, minor
from .files import FileKind, Skipped, SourceFile, walk
from .literals import scan_text
from .python_code import Hit, parse, scan_tree
from .result import ScanResult, Use

MAX_USES = 10_000  # uses listed; a project with more is told how many were left out
_TEXT = 160


_WORD = re.compile(rb"\w+")


class _Prefilter:
    """Which changes a file can use, from the words it holds: a Python use spells out every
    part of the dotted name it resolves to (in the attribute chain or in the import that
    bound its root), so a file lacking one of them cannot use it; C++ and scripts need the
    literal. One pass over the file's words; only the files that pass are parsed."""

    def __init__(self, changes: Sequence[Change]) -> None:
        self.python = [(c, _words(c)) for c in changes if c.match.kind.python]
        self.literal = [(c, c.match.target.encode()) for c in changes if not c.match.kind.python]

    def candidates(self, data: bytes, kind: FileKind) -> List[Change]:
        if kind is FileKind.PYTHON:
            if not self.python:
                return []
            present = set(_WORD.findall(data))
            return [c for c, words in self.python if words <= present]
        literal = MatchKind.CPP if kind is FileKind.CPP else MatchKind.SCRIPT
        return [c for c, text in self.literal if c.match.kind is literal and text in data]


def _words(change: Change) -> FrozenSet[bytes]:
    match = change.match
    if match.kind is MatchKind.ARGPARSE:
        return frozenset({b"add_argument", *_WORD.findall(match.target.encode())})
    return frozenset(_WORD.findall(match.target.removesuffix(".*").encode()))


def _lines_of(data: bytes, changes: Sequence[Change]) -> Callable[[Iterable[str]], List[int]]:
    """For the parser: the numbers of the lines that hold a candidate change's word or one
    of the names given (sorted)."""

    def lines(names: Iterable[str]) -> List[int]:
        regexes = {c.match.needle_regex for c in changes}
        regexes.update(rf"(?<!\w){re.escape(name)}(?!\w)" for name in names)
        pattern = re.compile("|".join(sorted(regexes)).encode())
        newlines = [m.start() for m in re.finditer(b"\n", data)]
        found = {bisect.bisect_left(newlines, m.start()) + 1 for m in pattern.finditer(data)}
        return sorted(found)

    return lines


def judged_torch(table: ChangeTable, found: Optional[Version], where: str) -> Tuple[Version, str]:
    """The torch a scan judges against, and why: the one ``found`` (``where`` says where),
    else the newest release the table covers, said so (never read as "no change")."""
    if found is not None:
        return found, where
    return table.covers, "no torch installed here: the newest release the table covers"


def scan(
    root: str,
    torch: Version,
    table: ChangeTable,
    since: Optional[Version] = None,
    torch_from: str = "--torch",
) -> ScanResult:
    """Scan ``root`` (a folder or one file) for uses of the changes in effect in ``torch``
    made after ``since``."""
    checked = table.between(since, torch)
    prefilter = _Prefilter(checked)
    files, skipped = walk(root)
    counts = {kind.value: 0 for kind in FileKind}
    uses: List[Use] = []
    for file in files:
        data = _read(file, skipped)
        if data is None:
            continue
        counts[file.kind.value] += 1
        candidates = prefilter.candidates(data, file.kind)
        if candidates:
            uses += _uses(file, data, candidates, skipped)
    kept = _newest_per_place(uses)
    return ScanResult(
        root=root,
        torch=torch,
        torch_from=torch_from,
        since=since,
        table=table,
        checked=checked,
        uses=tuple(kept[:MAX_USES]),
        files=counts,
        skipped=tuple(skipped),
        truncated=len(kept) > MAX_USES,
    )


def _read(file: SourceFile, skipped: List[Skipped]) -> Optional[bytes]:
    try:
        with open(file.path, "rb") as fh:
            return fh.read(file.size + 1)
    except OSError as exc:
        skipped.append(Skipped(file.relative, f"cannot read: {exc.strerror or exc}"))
        return None


def _uses(
    file: SourceFile, data: bytes, candidates: Sequence[Change], skipped: List[Skipped]
) -> List[Use]:
    hits: List[Hit]
    if file.kind is FileKind.PYTHON:
        tree, why = parse(data)
        if tree is None:
            skipped.append(Skipped(file.relative, why or "not Python"))
            return []
        hits = scan_tree(tree, candidates, _lines_of(data, candidates))
    else:
        text = data.decode("utf-8", "replace")
        hits = scan_text(text, candidates, cpp=file.kind is FileKind.CPP)
    if not hits:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    unique = {(change.id, line, column): change for change, line, column in hits}
    return [
        Use(change, file.relative, line, column, _line(lines, line))
        for (_, line, column), change in sorted(unique.items(), key=lambda kv: kv[0][1:])
    ]


def _line(lines: Sequence[str], number: int) -> str:
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"


def _newest_per_place(uses: Sequence[Use]) -> List[Use]:
    """One change per place and API: where a deprecation and the later removal of the same
    name both apply, the removal (the newer change) is the one to report."""
    best: Dict[Tuple[str, int, str], Use] = {}  # (file, line, what is matched)
    for use in uses:
        key = (use.file, use.line, use.change.match.describe())
        held = best.get(key)
        if held is None or use.change.torch > held.change.torch:
            best[key] = use
    kept = [u for u in uses if best[(u.file, u.line, u.change.match.describe())] is u]
    return sorted(kept, key=lambda u: (u.change.torch, u.change.id, u.file, u.line, u.column))


__all__ = [
    "MAX_USES",
    "Change",
    "ChangeTable",
    "ScanResult",
    "TableError",
    "Use",
    "judged_torch",
    "load_changes",
    "minor",
    "scan",
]
