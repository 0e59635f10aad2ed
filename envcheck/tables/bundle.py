"""A bundle of tables: the nine table files and a checksum manifest beside them.

The published tables (what ``envcheck tables update`` fetches) and a folder of updated
tables in the user's cache have the same layout as compat_tables/, plus ``manifest.json``::

    {"format": 1, "schema_version": 1, "as_of": "2026-12-07",
     "files": {"torch_releases.json": {"sha256": "...", "size": 130575, "as_of": "..."}, ...}}

``as_of`` of a bundle is the newest ``as_of`` of its files: the date of the newest fact it
holds, which is what "newer tables" means when an update is offered. The manifest is made
here and checked here, by the publishing pipeline (tools/refresh_tables.py) and by the
update alike, so that the two can never disagree on the format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, Mapping

from .reader import BUNDLED_TABLES, SCHEMA_VERSION, head_as_of, read_document

__all__ = [
    "FORMAT",
    "MANIFEST",
    "BundleError",
    "Manifest",
    "builtin_as_of",
    "make_manifest",
    "read_manifest",
    "table_files",
    "verify_file",
]

MANIFEST = "manifest.json"
FORMAT = 1
MAX_MANIFEST = 64 * 1024  # bytes: nine names and hashes fit in 2 KiB
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class BundleError(ValueError):
    """A manifest or a file that does not match it: the bundle is refused as a whole."""


Manifest = Dict[str, Any]


def table_files() -> tuple[str, ...]:
    """The file names a complete bundle holds, in the loader's order."""
    return tuple(f"{name}.json" for name in BUNDLED_TABLES)


def make_manifest(folder: Path) -> Manifest:
    """The manifest of a folder of tables: each file read and validated as a table document
    (schema version, name, date) before its hash is taken."""
    import hashlib  # only making and verifying bundles hash: not a check (2 ms of its imports)

    files: Dict[str, Dict[str, Any]] = {}
    for name in BUNDLED_TABLES:
        path = folder / f"{name}.json"
        doc = read_document(path, name)
        data = path.read_bytes()
        files[path.name] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "as_of": doc["as_of"],
        }
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "as_of": max(f["as_of"] for f in files.values()),
        "files": files,
    }


def read_manifest(raw: bytes) -> Manifest:
    """Parse and check a manifest; BundleError names what is wrong in one line."""
    if len(raw) > MAX_MANIFEST:
        raise BundleError(f"manifest larger than {MAX_MANIFEST // 1024} KiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise BundleError("manifest is not valid JSON (truncated?)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(f"manifest format {_get(data, 'format')!r} is not {FORMAT}")
    schema = data.get("schema_version")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise BundleError(f"manifest schema_version {schema!r} is not a number")
    if schema != SCHEMA_VERSION:
        newer = "newer" if schema > SCHEMA_VERSION else "older"
        raise BundleError(
            f"tables of schema {schema} ({newer} than the schema {SCHEMA_VERSION} this envcheck "
            "reads)" + ("; upgrade envcheck to use them" if schema > SCHEMA_VERSION else "")
        )
    as_of = data.get("as_of")
    if not isinstance(as_of, str) or not _DATE.match(as_of):
        raise BundleError(f"manifest as_of {as_of!r} is not a date (YYYY-MM-DD)")
    files = data.get("files")
    if not isinstance(files, dict) or sorted(files) != sorted(table_files()):
        raise BundleError(
            "manifest does not list exactly the table files " + ", ".join(table_files())
        )
    for name, entry in files.items():
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("sha256"), str)
            and _SHA256.match(entry["sha256"])
            and isinstance(entry.get("size"), int)
            and 0 < entry["size"] <= 16 * 1024 * 1024
        )
        if not ok:
            raise BundleError(f"manifest entry for {name} has no valid sha256 and size")
    return data


def verify_file(manifest: Mapping[str, Any], name: str, data: bytes) -> None:
    """The bytes fetched for ``name`` are the ones the manifest lists."""
    import hashlib

    entry = manifest["files"][name]
    if len(data) != entry["size"]:
        raise BundleError(
            f"{name}: {len(data)} bytes, the manifest says {entry['size']} (truncated?)"
        )
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise BundleError(f"{name}: checksum does not match the manifest")


def builtin_as_of(folder: Path) -> str:
    """The bundle date of a folder of tables without parsing them: each file's ``as_of`` is
    read from its first KiB (the tables keep it near the top), else from the whole file."""
    dates = []
    for name in BUNDLED_TABLES:
        path = folder / f"{name}.json"
        dates.append(head_as_of(path) or read_document(path, name)["as_of"])
    return max(dates)


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None
