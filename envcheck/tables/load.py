"""Load and validate compat_tables/*.json.

A table that does not validate is refused with the file, the record and the
field named (``torch_releases.json: releases[12] (2.5): python.min: 'x' is not a
version``); envcheck never runs on half-read knowledge. A directory given with
``--tables`` or ``ENVCHECK_TABLES`` may hold only some of the files: the others
come from the built-in tables, and ``Tables.files`` says which is which.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import bundle, cache
from .model import (
    LinkTable,
    MessageCatalogue,
    MessageRule,
    PackageBuilds,
    TableFile,
    Tables,
)
from .origin import TablesKind, TablesOrigin
from .read_conda import read_conda_pytorch, read_installers
from .read_drivers import (
    read_bundled_cuda,
    read_cuda_driver,
    read_first_drivers,
    read_forward_compat,
)
from .read_gpus import read_gpu_arches
from .read_jetpack import read_jetpack
from .read_messages import read_messages
from .read_package_builds import read_package_builds
from .read_releases import read_torch_releases
from .reader import SCHEMA_VERSION, TABLE_NAMES, Reader, TableError, read_document

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "TABLE_NAMES",
    "TableError",
    "builtin_dir",
    "in_use",
    "load_package_builds",
    "load_tables",
    "read_conda_pytorch",
    "read_cuda_driver",
    "read_first_drivers",
    "read_gpu_arches",
    "read_installers",
    "read_messages",
    "read_torch_releases",
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


def _links(data: Dict[str, Any], path: str) -> LinkTable:
    """links.json: NVLink GB/s per link per direction by generation, PCIe per lane by rate."""
    read = Reader(path, Reader("links", {}).strings(data.get("sources"), "sources"))
    nvlink: Dict[int, float] = {}
    for i, raw in enumerate(read.get(data, "nvlink", "nvlink", list)):
        where = f"nvlink[{i}]"
        version = read.get(raw, "version", where, int)
        rate = read.get(raw, "gb_per_s_per_link_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        nvlink[version] = rate
    pcie: List[Tuple[float, int, float]] = []
    for i, raw in enumerate(read.get(data, "pcie", "pcie", list)):
        where = f"pcie[{i}]"
        gts = read.get(raw, "gt_per_s", where, float)
        generation = read.get(raw, "generation", where, int)
        per_lane = read.get(raw, "gb_per_s_per_lane_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        pcie.append((gts, generation, per_lane))
    shm = read.get(data, "nccl_shm", "nccl_shm", dict)
    read.provenance(shm, "nccl_shm", list(shm))
    per_arch = read.get(shm, "bytes_per_connection", "nccl_shm", dict)
    sizes = {
        str(arch): read.get(per_arch, arch, "nccl_shm.bytes_per_connection", int)
        for arch in per_arch
    }
    channels = read.get(shm, "min_channels", "nccl_shm", int)
    return LinkTable(data["as_of"], nvlink, tuple(pcie), sizes, channels)


def _days(data: Dict[str, Any], path: Path) -> Optional[int]:
    """torch_releases.json's ``refresh_after_days``: past this age, the report says so."""
    days = data.get("refresh_after_days")
    if days is not None and (not isinstance(days, int) or isinstance(days, bool) or days < 1):
        raise TableError(f"{path}: refresh_after_days {days!r} is not a number of days")
    return days


def _messages(data: Dict[str, Any], file: TableFile) -> Sequence[MessageRule]:
    """The built-in catalogue, read when first used (the test suite validates it); a user's,
    read and validated now, so that a bad pattern is refused before envcheck runs on it."""
    if file.builtin:
        return MessageCatalogue(lambda: read_messages(data, str(file.path)))
    return read_messages(data, str(file.path))


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
    directory: Optional[os.PathLike[str]] = None, environ: Optional[Mapping[str, str]] = None
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


def _load(origin: TablesOrigin) -> Tables:
    builtin = builtin_dir()
    user = origin.folder
    if user is not None and not user.is_dir():
        raise TableError(f"{user}: not a folder of compatibility tables")
    docs: Dict[str, Dict[str, Any]] = {}
    files: Dict[str, TableFile] = {}
    for name in TABLE_NAMES:
        path = builtin / f"{name}.json"
        if user is not None and (user / f"{name}.json").is_file():
            path = user / f"{name}.json"
        data = read_document(path, name)
        docs[name] = data
        files[name] = TableFile(
            name, path, data["schema_version"], data["as_of"], path.parent == builtin
        )
    releases, sources = read_torch_releases(
        docs["torch_releases"], str(files["torch_releases"].path)
    )
    toolkits, compat, caveats, branches = read_cuda_driver(
        docs["cuda_driver"], str(files["cuda_driver"].path)
    )
    families, rules, gpus = read_gpu_arches(docs["gpu_arches"], str(files["gpu_arches"].path))
    uv_backends = read_installers(docs["installers"], str(files["installers"].path))
    messages = _messages(docs["messages"], files["messages"])
    return Tables(
        files=files,
        releases=releases,
        toolkits=toolkits,
        minor_compat=compat,
        caveats=caveats,
        driver_branches=branches,
        families=families,
        sass_rules=rules,
        gpus=gpus,
        sources=sources,
        uv_torch_backends=uv_backends,
        messages=messages,
        first_drivers=read_first_drivers(docs["cuda_driver"], str(files["cuda_driver"].path)),
        bundled_cuda=read_bundled_cuda(docs["cuda_driver"], str(files["cuda_driver"].path)),
        forward_compat=read_forward_compat(docs["cuda_driver"], str(files["cuda_driver"].path)),
        conda=read_conda_pytorch(docs["conda_pytorch"], str(files["conda_pytorch"].path)),
        links=_links(docs["links"], str(files["links"].path)),
        jetpacks=read_jetpack(docs["jetpack"], str(files["jetpack"].path)),
        package_builds=read_package_builds(
            docs["package_builds"], str(files["package_builds"].path)
        ),
        origin=origin,
        refresh_after_days=_days(docs["torch_releases"], files["torch_releases"].path),
    )
