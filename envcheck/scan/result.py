"""What a code scan found: each use with its file, line and change, and what the scan could
not judge (files it could not read, a torch newer than the table knows)."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

from packaging.version import Version

from .._record import record
from ..tables.code_changes import Change, ChangeTable, minor
from .files import Skipped


@record(frozen=True)
class Use:
    change: Change
    file: str  # relative to the scanned folder, "/"-separated
    line: int
    column: int
    text: str  # the source line, trimmed (at most 160 characters)


@record(frozen=True)
class ScanResult:
    root: str
    torch: Version  # the torch the code is judged against
    torch_from: str  # why that torch: "--torch", "installed (...)", "no torch installed: ..."
    since: Optional[Version]  # changes up to this torch are left out (the code's own torch)
    table: ChangeTable
    checked: Tuple[Change, ...]  # the changes in effect between ``since`` and ``torch``
    uses: Tuple[Use, ...]
    files: Mapping[str, int]  # files read, by kind (python, cpp, script)
    skipped: Tuple[Skipped, ...]
    truncated: bool = False  # more uses than MAX_USES: the rest are not listed

    @property
    def unknown(self) -> Optional[str]:
        """What the table cannot say about this torch, or None: never read as "no change"."""
        if minor(self.torch) > self.table.covers:
            return (
                f"torch {minor(self.torch)} is newer than the releases the table covers "
                f"(up to {self.table.covers}, as of {self.table.as_of}): its changes are not "
                "known; envcheck tables update may know them"
            )
        return None

    @property
    def breaking(self) -> Tuple[Use, ...]:
        return tuple(u for u in self.uses if u.change.breaks)

    def by_change(self) -> List[Tuple[Change, List[Use]]]:
        """The uses grouped by change, oldest release first (the order to fix them in)."""
        groups: Dict[str, Tuple[Change, List[Use]]] = {}
        for use in self.uses:
            groups.setdefault(use.change.id, (use.change, []))[1].append(use)
        return sorted(groups.values(), key=lambda g: (g[0].torch, g[0].id))

    def exit_code(self, strict: bool = False) -> int:
        """1 when a use breaks on this torch (with ``strict``, a deprecated use too)."""
        return 1 if self.breaking or (strict and self.uses) else 0

    def summary(self) -> str:
        """One line: how many uses break and warn, on which torch."""
        breaks = len(self.breaking)
        warns = len(self.uses) - breaks
        changes = len({u.change.id for u in self.uses})
        if not self.uses:
            return f"no use of what torch {self.torch} removed, changed or deprecated"
        parts = []
        if breaks:
            parts.append(
                f"{breaks} use{'s' if breaks != 1 else ''} that break{'s' if breaks == 1 else ''}"
            )
        if warns:
            parts.append(f"{warns} deprecated use{'s' if warns != 1 else ''}")
        return (
            f"{' and '.join(parts)} on torch {self.torch} "
            f"({changes} change{'s' if changes != 1 else ''})"
        )


__all__ = ["ScanResult", "Use"]
