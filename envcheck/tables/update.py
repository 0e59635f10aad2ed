"""``envcheck tables update``: fetch newer tables, check them, and put them in the cache.

The source is the project's published tables (``PUBLISHED_URL``, the one place it is
written), ``ENVCHECK_TABLES_URL``, or ``--from URL|FOLDER``; it holds ``manifest.json``
and the nine tables, either at its top or under ``v<schema>/`` (the publishing pipeline
writes each schema's tables to their own folder, so an older envcheck keeps finding the
ones it reads). A bundle is accepted only when, in this order:

1. its manifest names this envcheck's schema and every table file with size and sha256;
2. it is newer than the tables in use (its newest ``as_of``), unless ``force``;
3. every file arrives whole and matches the manifest;
4. the nine tables load and validate with this envcheck's own loader.

Any refusal raises UpdateFailed with one line and the exit code of its kind; the tables in
use are not touched until all four hold (cache.install swaps them in atomically).
"""

from __future__ import annotations

import enum
import hashlib
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from .. import exitcodes
from .._http import FetchError, fetch, redact
from .._record import record
from . import bundle, cache
from .bundle import MANIFEST, BundleError, Manifest
from .code_changes import load_changes
from .load import load_tables, table_path
from .model import Tables
from .reader import ON_DEMAND_TABLES, SCHEMA_VERSION, TableError, read_document

__all__ = ["ENV_URL", "PUBLISHED_URL", "Failure", "Outcome", "UpdateFailed", "source_of", "update"]

# Where the project's publishing workflow (.github/workflows/publish-tables.yml) puts the
# tables: one folder per schema version below it.
PUBLISHED_URL = "https://torch-envcheck.github.io/envcheck/tables/"
ENV_URL = "ENVCHECK_TABLES_URL"
TIMEOUT = 20.0  # seconds for each file, the whole answer


class Failure(enum.Enum):
    UNREACHABLE = exitcodes.UNREACHABLE  # offline, no answer in time, HTTP error, no folder
    REFUSED = exitcodes.REFUSED  # bad checksum, truncated, invalid, another schema
    NOT_NEWER = exitcodes.NOT_NEWER  # not newer than the tables in use


class UpdateFailed(Exception):
    def __init__(self, kind: Failure, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@record(frozen=True)
class Outcome:
    updated: bool  # False: the source holds the tables already in use
    source: str
    before: str  # as_of of the tables in use before
    after: str
    changed: Tuple[str, ...] = ()  # "torch_releases.json: as of 2026-12-02 -> 2027-01-20"
    new_releases: Tuple[str, ...] = ()  # torch minors the new tables add


def source_of(option: Optional[str], environ: Mapping[str, str]) -> str:
    return option or environ.get(ENV_URL) or PUBLISHED_URL


def update(
    source: str,
    *,
    force: bool = False,
    timeout: float = TIMEOUT,
    environ: Optional[Mapping[str, str]] = None,
) -> Outcome:
    """Fetch, check and install the tables at ``source``; UpdateFailed when refused."""
    origin = _Source(source, timeout)
    manifest = _manifest(origin)
    current = load_tables(environ=environ)
    before = _as_of(current)
    in_use = _in_use(current)
    mine = {name: digest for name, (digest, _) in in_use.items()}
    theirs = {n: e["sha256"] for n, e in manifest["files"].items()}
    if theirs == mine:
        return Outcome(False, origin.shown, before, before)
    if manifest["as_of"] <= before and not force:
        raise UpdateFailed(
            Failure.NOT_NEWER,
            f"the tables at {origin.shown} are as of {manifest['as_of']}, not newer than the "
            f"ones in use (as of {before}); nothing changed (--force takes them anyway)",
        )
    files = {name: _file(origin, manifest, name) for name in bundle.table_files()}
    fresh = _validated(files)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    cache.install(files, manifest, origin.shown, when, environ)
    changed = tuple(
        f"{n}: as of {in_use[n][1]} -> {manifest['files'][n]['as_of']}"
        for n in bundle.table_files()
        if mine.get(n) != theirs[n]
    )
    added = {r.minor for r in fresh.releases} - {r.minor for r in current.releases}
    return Outcome(True, origin.shown, before, manifest["as_of"], changed, tuple(sorted(added)))


class _Source:
    """A URL or a folder holding a bundle, at its top or under v<schema>/."""

    def __init__(self, source: str, timeout: float) -> None:
        self.url = "://" in source
        self.base = source if not self.url or source.endswith("/") else source + "/"
        self.shown = redact(self.base) if self.url else str(Path(source))
        self.timeout = timeout
        if not self.url and not Path(source).is_dir():
            raise UpdateFailed(Failure.UNREACHABLE, f"{source}: no such folder")
        if self.url and urlsplit(source).scheme not in ("http", "https", "file"):
            raise UpdateFailed(Failure.UNREACHABLE, f"{self.shown}: not an http(s) URL")

    def get(self, name: str, limit: int) -> Optional[bytes]:
        """The file's bytes; None when the source has no such file (404, missing)."""
        if not self.url:
            path = Path(self.base) / name
            if not path.is_file():
                return None
            with open(path, "rb") as fh:
                return fh.read(limit + 1)
        try:
            return fetch(self.base + name, timeout=self.timeout, limit=limit)[0]
        except FetchError as exc:
            if exc.missing:
                return None
            raise UpdateFailed(Failure.UNREACHABLE, str(exc)) from None


def _manifest(origin: _Source) -> Manifest:
    raw = origin.get(MANIFEST, bundle.MAX_MANIFEST)
    if raw is None:
        raw = origin.get(f"v{SCHEMA_VERSION}/{MANIFEST}", bundle.MAX_MANIFEST)
        if raw is None:
            raise UpdateFailed(
                Failure.UNREACHABLE,
                f"{origin.shown}: no {MANIFEST} there or in v{SCHEMA_VERSION}/ "
                f"(no tables of schema {SCHEMA_VERSION}, the one this envcheck reads)",
            )
        origin.base += f"v{SCHEMA_VERSION}/"
    try:
        return bundle.read_manifest(raw)
    except BundleError as exc:
        raise UpdateFailed(Failure.REFUSED, f"{origin.shown}: {exc}") from None


def _file(origin: _Source, manifest: Manifest, name: str) -> bytes:
    data = origin.get(name, manifest["files"][name]["size"])
    if data is None:
        raise UpdateFailed(Failure.REFUSED, f"{origin.shown}: {name} is missing")
    try:
        bundle.verify_file(manifest, name, data)
    except BundleError as exc:
        raise UpdateFailed(Failure.REFUSED, f"{origin.shown}: {exc}") from None
    return data


def _validated(files: Mapping[str, bytes]) -> Tables:
    """The tables loaded by this envcheck's loader from a scratch folder: a table it cannot
    read is refused here, before anything in the cache changes."""
    with tempfile.TemporaryDirectory(prefix="envcheck-tables-") as scratch:
        for name, data in files.items():
            (Path(scratch) / name).write_bytes(data)
        try:
            load_changes(scratch)  # read only by the code scan, validated all the same
            return load_tables(Path(scratch))
        except TableError as exc:
            raise UpdateFailed(Failure.REFUSED, f"the tables do not validate: {exc}") from None


def _as_of(tables: Tables) -> str:
    return max(f.as_of for f in tables.files.values())


def _in_use(tables: Tables) -> Dict[str, Tuple[str, str]]:
    """Each bundled table in use, by file name: (sha256, as_of); the tables read on demand
    (code_changes.json) are found as their readers find them."""
    paths = {name: (file.path, file.as_of) for name, file in tables.files.items()}
    for name in ON_DEMAND_TABLES:
        path = table_path(name, str(tables.origin.folder) if tables.origin.folder else None)
        paths[name] = (path, read_document(path, name)["as_of"])
    return {
        f"{name}.json": (hashlib.sha256(path.read_bytes()).hexdigest(), as_of)
        for name, (path, as_of) in paths.items()
    }
