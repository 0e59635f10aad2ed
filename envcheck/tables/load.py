"""Load and validate compat_tables/*.json.

A table that does not validate is refused with the file, the record and the
field named (``torch_releases.json: releases[12] (2.5): python.min: 'x' is not a
version``); envcheck never runs on half-read knowledge. A directory given with
``--tables`` or ``ENVCHECK_TABLES`` may hold only some of the files: the others
come from the built-in tables, and ``Tables.files`` says which is which.

A file from such a folder, or from updated tables in the cache, is read and checked when the
tables load. A built-in file, checked by the test suite before a release, is read the first time
one of its fields is used (``tables.groups``): a machine without a GPU never reads the GPU
models, and a check that quotes no pasted message never compiles the message catalogue.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

from . import bundle, cache
from .groups import OnUse
from .model import PackageBuilds, TableFile, Tables
from .origin import TablesKind, TablesOrigin
from .read_package_builds import read_package_builds
from .reader import SCHEMA_VERSION, TABLE_NAMES, TableError, head_as_of, read_document

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "TABLE_NAMES",
    "TableError",
    "builtin_dir",
    "in_use",
    "load_package_builds",
    "load_tables",
    "load_tables_of_env",
    "table_path",
    "tables_dir_from_env",
]

ENV_VAR = "ENVCHECK_TABLES"


def builtin_dir() -> Path:
    """compat_tables/ inside the installed package, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "compat_tables"
    return shipped if shipped.is_dir() else package.parent / "compat_tables"


# --------------------------------------------------------------------------- entry point


def tables_dir_from_env(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    env = os.environ if environ is None else environ
    return env.get(ENV_VAR) or None


def _days(data: Dict[str, Any], path: Path) -> Optional[int]:
    """torch_releases.json's ``refresh_after_days``: past this age, the report says so."""
    days = data.get("refresh_after_days")
    if days is not None and (not isinstance(days, int) or isinstance(days, bool) or days < 1):
        raise TableError(f"{path}: refresh_after_days {days!r} is not a number of days")
    return days


def table_path(name: str, directory: Optional[str] = None) -> Path:
    """The file one table is read from, as load_tables chooses it: ``directory`` (or
    ENVCHECK_TABLES) when it holds the file, else the updated tables when they are in use,
    else the built-in file. For readers of one table (the static probe, the smoke's links)."""
    folder = directory or tables_dir_from_env()
    origin = TablesOrigin(TablesKind.FOLDER, Path(folder)) if folder else in_use()
    if origin.folder is not None and (origin.folder / f"{name}.json").is_file():
        return origin.folder / f"{name}.json"
    return builtin_dir() / f"{name}.json"


def load_package_builds(directory: Optional[str] = None) -> PackageBuilds:
    """package_builds.json alone, as load_tables reads it: the static probe asks it which
    packages to keep and which build-record files to read, without loading every table."""
    path = table_path("package_builds", directory)
    try:
        return read_package_builds(read_document(path, "package_builds"), str(path))
    except TableError:
        if directory or tables_dir_from_env() or path.parent == builtin_dir():
            raise
        path = builtin_dir() / "package_builds.json"  # updated tables this envcheck refuses
        return read_package_builds(read_document(path, "package_builds"), str(path))


def in_use(environ: Optional[Mapping[str, str]] = None) -> TablesOrigin:
    """The updated tables when the cache holds some newer than the built-in ones, else the
    built-in tables (with why updated ones were not used, where there are some)."""
    try:
        found = cache.installed(environ)
    except cache.CacheError as exc:
        return TablesOrigin(unused=str(exc))
    if found is None:
        return TablesOrigin()
    builtin = bundle.builtin_as_of(builtin_dir())
    if found.as_of <= builtin:  # envcheck was upgraded since: its own tables are as new
        return TablesOrigin()
    return TablesOrigin(TablesKind.UPDATED, found.folder, found.source, found.installed)


def load_tables(
    directory: Union[str, os.PathLike[str], None] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> Tables:
    """Load every table. Files in ``directory`` replace the built-in ones they name; without
    one, the updated tables are used when newer (and loadable), else the built-in ones."""
    if directory:
        return _load(TablesOrigin(TablesKind.FOLDER, Path(directory)))
    origin = in_use(environ)
    if origin.kind is not TablesKind.UPDATED:
        return _load(origin)
    try:
        return _load(origin)
    except TableError as exc:  # written by another envcheck, whose tables this one refuses
        return _load(TablesOrigin(unused=str(exc)))


def load_tables_of_env(environ: Optional[Mapping[str, str]] = None) -> Tables:
    """The tables of a process that has no envcheck command line to name them (torchrun's
    ranks, a script): ENVCHECK_TABLES's folder where it is set, as ``--tables`` takes it,
    else those in use."""
    folder = tables_dir_from_env(environ)
    return load_tables(Path(folder) if folder else None, environ)


def _load(origin: TablesOrigin) -> Tables:
    """Every table of ``origin``. A built-in file is parsed the first time one of its fields
    is used (tables.groups.OnUse): a static check asks three or five of the nine, and
    parsing the others (the message catalogue alone is a quarter MiB) cost it 4 ms. Its
    date is read from its head here; torch_releases.json, which every run asks, is parsed
    now. A file from elsewhere is parsed and checked now."""
    builtin = builtin_dir()
    user = origin.folder
    if user is not None and not user.is_dir():
        raise TableError(f"{user}: not a folder of compatibility tables")
    docs: Dict[str, Optional[Dict[str, Any]]] = {}
    files: Dict[str, TableFile] = {}
    for name in TABLE_NAMES:
        path = builtin / f"{name}.json"
        if user is not None and (user / f"{name}.json").is_file():
            path = user / f"{name}.json"
        on_use = path.parent == builtin and name != "torch_releases"
        data, as_of = None, head_as_of(path) if on_use else None
        if as_of is None:
            data = read_document(path, name)  # it checks the schema version and the date
            as_of = data["as_of"]
        docs[name] = data
        files[name] = TableFile(name, path, SCHEMA_VERSION, as_of, path.parent == builtin)
    releases = files["torch_releases"].path
    days = _days(docs["torch_releases"] or {}, releases)  # parsed above, as every run asks it
    return OnUse.of(docs, files=files, origin=origin, refresh_after_days=days)
