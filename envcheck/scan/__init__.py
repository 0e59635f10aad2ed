"""The code scan: which uses of what a torch release removed, changed or deprecated a
project's code holds (``envcheck scan``, ``envcheck check --code``, install's notes).

The project's code is read, never imported or run: Python with ``ast``, C/C++/CUDA sources
and launch scripts as text. A literal prefilter (one pattern of every change's distinctive
word) decides which files are parsed at all, so a large project with few torch calls costs
little more than reading it.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..tables.code_changes import Change, ChangeTable, MatchKind, TableError, load_changes, minor
from .files import FileKind, Skipped, SourceFile, walk
from .literals import scan_text
from .python_code import Hit, parse, scan_tree
from .result import ScanResult, Use

MAX_USES = 10_000  # uses listed; a project with more is told how many were left out
_TEXT = 160


class _Prefilter:
    """One pattern of every change's distinctive word, run over a file's bytes: the
    changes whose word it holds are the only ones that file can use."""

    def __init__(self, changes: Sequence[Change]) -> None:
        self.by_needle: Dict[bytes, List[Change]] = {}
        regexes: Dict[bytes, str] = {}
        for change in changes:
            needle = change.match.needle.encode()
            self.by_needle.setdefault(needle, []).append(change)
            # of one needle's forms the looser (without an end boundary) is looked for: a
            # file the prefilter keeps is then judged exactly, change by change
            held = regexes.get(needle)
            if held is None or len(change.match.needle_regex) < len(held):
                regexes[needle] = change.match.needle_regex
        words = sorted(regexes, key=len, reverse=True)
        self.pattern = re.compile(b"|".join(regexes[w].encode() for w in words)) if words else None

    def candidates(self, data: bytes) -> List[Change]:
        if self.pattern is None:
            return []
        found = set(self.pattern.findall(data))
        return [c for needle in found for c in self.by_needle.get(needle, [])]


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
    filters = {
        FileKind.PYTHON: _Prefilter([c for c in checked if c.match.kind.python]),
        FileKind.CPP: _Prefilter([c for c in checked if c.match.kind is MatchKind.CPP]),
        FileKind.SCRIPT: _Prefilter([c for c in checked if c.match.kind is MatchKind.SCRIPT]),
    }
    files, skipped = walk(root)
    counts = {kind.value: 0 for kind in FileKind}
    uses: List[Use] = []
    for file in files:
        data = _read(file, skipped)
        if data is None:
            continue
        counts[file.kind.value] += 1
        candidates = filters[file.kind].candidates(data)
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
        hits = scan_tree(tree, candidates)
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
    "load_changes",
    "minor",
    "scan",
]
