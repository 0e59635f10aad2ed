"""Updated tables in the user's cache folder: where they lie, which are in use, how a new
bundle is put there without ever leaving a half-written one in use.

Layout (``ENVCHECK_CACHE_DIR`` replaces the folder; tests and shared machines use it)::

    ~/.cache/envcheck/tables/          (XDG; ~/Library/Caches on macOS; %LOCALAPPDATA% on Windows)
        current                        {"bundle": "2026-12-07-1a2b3c4d", "source": ..., ...}
        2026-12-07-1a2b3c4d/           the nine tables and manifest.json

A bundle is written into a fresh folder made by envcheck (``mkdtemp``), checked, renamed to
its final name, and only then named in ``current``, which is replaced in one ``os.replace``:
a reader sees the old bundle or the new one, never part of one. Nothing is opened through a
link: the tables folder, ``current`` and the bundle folder are refused when they are links
(a link planted there would point envcheck's reads, or its writes, elsewhere).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Mapping, Optional

from .._record import record
from .bundle import MANIFEST, BundleError, Manifest, read_manifest, table_files

__all__ = ["CacheError", "Installed", "cache_dir", "install", "installed", "remove"]

ENV_CACHE = "ENVCHECK_CACHE_DIR"
CURRENT = "current"
_BUNDLE = re.compile(r"^\d{4}-\d{2}-\d{2}-[0-9a-f]{8}$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class CacheError(OSError):
    """The cache folder cannot be used as it is (a link, not a folder, unreadable)."""


@record(frozen=True)
class Installed:
    """The updated tables named by ``current``."""

    folder: Path
    as_of: str  # the bundle's date: its newest table's as_of
    source: str  # where they were fetched from (no credentials)
    installed: str  # when, ISO 8601 UTC


def cache_dir(environ: Optional[Mapping[str, str]] = None) -> Path:
    """Where updated tables live: ENVCHECK_CACHE_DIR, else the platform's cache folder."""
    env = os.environ if environ is None else environ
    if env.get(ENV_CACHE):
        return Path(env[ENV_CACHE])
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if sys.platform == "darwin":
        base = home / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "envcheck" / "tables"


def installed(environ: Optional[Mapping[str, str]] = None) -> Optional[Installed]:
    """The updated tables, None when there are none; CacheError when ``current`` or its
    bundle cannot be used (say so: the built-in tables are used instead)."""
    root = cache_dir(environ)
    raw = _read_plain(root / CURRENT, 4096)
    if raw is None:
        return None
    try:
        pointer = json.loads(raw.decode("utf-8"))
        name = pointer["bundle"]
        if not isinstance(name, str) or not _BUNDLE.match(name):
            raise ValueError(name)
    except (ValueError, KeyError, TypeError):
        raise CacheError(f"{root / CURRENT}: not written by envcheck") from None
    folder = root / name
    _require_folder(folder)
    manifest = _manifest(folder)
    return Installed(
        folder, manifest["as_of"], str(pointer.get("source", "")), str(pointer.get("installed", ""))
    )


def install(
    files: Mapping[str, bytes],
    manifest: Manifest,
    source: str,
    when: str,
    environ: Optional[Mapping[str, str]] = None,
) -> Installed:
    """Write a checked bundle and make it the one in use, atomically; the bundles it replaces
    are removed. ``check`` has already been run on ``files`` by the caller."""
    root = _make_root(cache_dir(environ))
    import tempfile  # only an update writes

    incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=root))
    try:
        for name, data in files.items():
            _write_new(incoming / name, data)
        _write_new(
            incoming / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
        )
        name = f"{manifest['as_of']}-{manifest['files']['torch_releases.json']['sha256'][:8]}"
        final = root / name
        if os.path.lexists(final):
            _remove_tree(final)
        os.rename(incoming, final)
    except BaseException:
        _remove_tree(incoming)
        raise
    pointer = {"bundle": name, "source": source, "installed": when, "as_of": manifest["as_of"]}
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".current-", dir=root)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(pointer, fh)
    os.replace(tmp, root / CURRENT)  # replaces a link itself, never writes through it
    _remove_old(root, keep=name)
    return Installed(final, manifest["as_of"], source, when)


def remove(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Forget the updated tables (the built-in ones are used again); False when none."""
    root = cache_dir(environ)
    if not os.path.lexists(root / CURRENT):
        return False
    os.unlink(root / CURRENT)
    _remove_old(root, keep=None)
    return True


# --------------------------------------------------------------------------- files


def _read_plain(path: Path, limit: int) -> Optional[bytes]:
    """A regular file's bytes, opened without following a link; None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheError(f"{path}: cannot read ({exc.strerror or exc}; a link?)") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise CacheError(f"{path}: not a regular file")
        return fh.read(limit + 1)


def _require_folder(folder: Path) -> None:
    try:
        mode = os.lstat(folder).st_mode
    except OSError as exc:
        raise CacheError(f"{folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise CacheError(f"{folder}: not a folder envcheck made (a link?)")


def _manifest(folder: Path) -> Manifest:
    raw = _read_plain(folder / MANIFEST, 64 * 1024)
    if raw is None:
        raise CacheError(f"{folder}: no {MANIFEST}")
    try:
        manifest = read_manifest(raw)
    except BundleError as exc:
        raise CacheError(f"{folder}: {exc}") from None
    for name in table_files():
        mode = os.lstat(folder / name).st_mode if os.path.lexists(folder / name) else 0
        if not stat.S_ISREG(mode):
            raise CacheError(f"{folder / name}: missing or not a regular file")
    return manifest


def _make_root(root: Path) -> Path:
    os.makedirs(root.parent, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    _require_folder(root)
    return root


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _remove_tree(path: Path) -> None:
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        import shutil

        shutil.rmtree(path, ignore_errors=True)  # never follows a link inside


def _remove_old(root: Path, keep: Optional[str]) -> None:
    for entry in os.listdir(root):
        if entry != keep and (
            _BUNDLE.match(entry) or entry.startswith((".incoming-", ".current-"))
        ):
            _remove_tree(root / entry)
