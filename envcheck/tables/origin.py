"""Which tables are in use and where they came from: the report's "tables as of" line."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Optional

from .._record import record


class TablesKind(str, enum.Enum):
    BUILTIN = "built-in"  # shipped inside envcheck
    FOLDER = "folder"  # --tables DIR or ENVCHECK_TABLES: files there replace the built-in ones
    UPDATED = "updated"  # fetched by `envcheck tables update` into the cache folder


@record(frozen=True)
class TablesOrigin:
    kind: TablesKind = TablesKind.BUILTIN
    folder: Optional[Path] = None
    source: Optional[str] = None  # updated tables: where they were fetched from
    installed: Optional[str] = None  # updated tables: when (ISO 8601, UTC)
    unused: Optional[str] = None  # why updated tables in the cache are not the ones in use

    @property
    def from_cache(self) -> bool:
        """Updated tables are in use, or were found and not used: the report says which
        (tables the user named with --tables need no reminder)."""
        return self.kind is TablesKind.UPDATED or self.unused is not None

    def describe(self) -> str:
        """One phrase for the report: "built-in", "updated 2026-12-07 from URL", ..."""
        if self.kind is TablesKind.UPDATED:
            return f"updated {(self.installed or '?')[:10]} from {self.source}"
        if self.kind is TablesKind.FOLDER:
            return f"from {self.folder}"
        return "built-in" + (" (updated tables in the cache not used)" if self.unused else "")
