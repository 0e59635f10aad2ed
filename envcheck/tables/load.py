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

from .model import (
    LinkTable,
    MessageCatalogue,
    MessageRule,
    PackageBuilds,
    TableFile,
    Tables,
)
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
from .reader import SCHEMA_VERSION, Reader, TableError, read_document

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "TABLE_NAMES",
    "TableError",
    "builtin_dir",
    "load_package_builds",
    "load_tables",
    "read_conda_pytorch",
    "read_cuda_driver",
    "read_first_drivers",
    "read_gpu_arches",
    "read_installers",
    "read_messages",
    "read_torch_releases",
    "tables_dir_from_env",
]

TABLE_NAMES = (
    "torch_releases",
    "cuda_driver",
    "gpu_arches",
    "installers",
    "messages",
    "conda_pytorch",
    "links",
    "jetpack",
    "package_builds",
)
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


def _messages(data: Dict[str, Any], file: TableFile) -> Sequence[MessageRule]:
    """The built-in catalogue, read when first used (the test suite validates it); a user's,
    read and validated now, so that a bad pattern is refused before envcheck runs on it."""
    if file.builtin:
        return MessageCatalogue(lambda: read_messages(data, str(file.path)))
    return read_messages(data, str(file.path))


def load_package_builds(directory: Optional[str] = None) -> PackageBuilds:
    """package_builds.json alone, as load_tables reads it (``directory`` or ENVCHECK_TABLES
    replace the built-in file): the static probe asks it which packages to keep and which
    build-record files to read, without loading every table."""
    folder = directory or tables_dir_from_env()
    path = builtin_dir() / "package_builds.json"
    if folder and (Path(folder) / "package_builds.json").is_file():
        path = Path(folder) / "package_builds.json"
    return read_package_builds(read_document(path, "package_builds"), str(path))


def load_tables(directory: Optional[os.PathLike[str]] = None) -> Tables:
    """Load every table; ``directory`` files replace the built-in ones they name."""
    builtin = builtin_dir()
    user = Path(directory) if directory else None
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
    )
