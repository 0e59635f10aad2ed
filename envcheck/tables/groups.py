"""Each table file's fields of :class:`Tables`, read from its document; and built-in tables
that read a file's fields the first time one of them is used.

A static check on a machine without an NVIDIA GPU asks the torch releases, the package
builds and the links, and nothing of the GPU models, the drivers, conda or JetPack: reading
and checking those would be two thirds of loading the tables (about 15 ms). The built-in tables
are checked by the test suite before envcheck is released, so they are read on first use
(:class:`OnUse`); a folder given with ``--tables`` and updated tables in the cache are checked
when they are loaded, so that a bad one is refused before envcheck runs on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Tuple

from .model import Tables

if TYPE_CHECKING:
    from .model import TableFile

Read = Callable[[Dict[str, Any], str], Tuple[Any, ...]]


def _releases(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_releases import read_torch_releases

    return read_torch_releases(data, path)


def _drivers(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from . import read_drivers as read

    return (
        *read.read_cuda_driver(data, path),
        read.read_first_drivers(data, path),
        read.read_bundled_cuda(data, path),
        read.read_forward_compat(data, path),
    )


def _gpus(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_gpus import read_gpu_arches

    return read_gpu_arches(data, path)


def _installers(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_conda import read_installers

    return (read_installers(data, path),)


def _conda(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_conda import read_conda_pytorch

    return (read_conda_pytorch(data, path),)


def _links(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_links import read_links

    return (read_links(data, path),)


def _jetpack(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_jetpack import read_jetpack

    return (read_jetpack(data, path),)


def _package_builds(data: Dict[str, Any], path: str) -> Tuple[Any, ...]:
    from .read_package_builds import read_package_builds

    return (read_package_builds(data, path),)


# table file -> the Tables fields it holds, and what reads them (in that order). messages.json
# is not here: its catalogue is read on first use already (MessageCatalogue, in load.py).
GROUPS: Dict[str, Tuple[Tuple[str, ...], Read]] = {
    "torch_releases": (("releases", "sources"), _releases),
    "cuda_driver": (
        (
            "toolkits",
            "minor_compat",
            "caveats",
            "driver_branches",
            "first_drivers",
            "bundled_cuda",
            "forward_compat",
        ),
        _drivers,
    ),
    "gpu_arches": (("families", "sass_rules", "gpus"), _gpus),
    "installers": (("uv_torch_backends",), _installers),
    "conda_pytorch": (("conda",), _conda),
    "links": (("links",), _links),
    "jetpack": (("jetpacks",), _jetpack),
    "package_builds": (("package_builds",), _package_builds),
}


def read_group(table: str, data: Dict[str, Any], path: str) -> Dict[str, Any]:
    """One table file's fields, read and checked."""
    names, read = GROUPS[table]
    values = read(data, path)
    assert len(values) == len(names), table  # a reader and its names kept in step
    return dict(zip(names, values))


def read_all(docs: Mapping[str, Dict[str, Any]], files: Mapping[str, TableFile]) -> Dict[str, Any]:
    """Every file's fields, read and checked now."""
    fields: Dict[str, Any] = {}
    for table in GROUPS:
        fields.update(read_group(table, docs[table], str(files[table].path)))
    return fields


class _Field:
    """A field of :class:`OnUse` that reads its file's fields the first time it is used and
    leaves them in the instance, where every later use finds them (a non-data descriptor:
    the instance's own value wins)."""

    def __init__(self, table: str, name: str) -> None:
        self.table, self.name = table, name

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        pending: Dict[str, Tuple[Dict[str, Any], str]] = obj.__dict__["_pending"]
        waiting = pending.get(self.table)
        if waiting is not None:  # else another thread has just read them
            for name, value in read_group(self.table, *waiting).items():
                object.__setattr__(obj, name, value)  # frozen: set as its __init__ sets
            pending.pop(self.table, None)
        return obj.__dict__[self.name]


class OnUse(Tables):
    """Built-in :class:`Tables` whose files' fields are read the first time one is used.
    Everything else is a Tables: equality, repr and ``replace`` read every field."""

    @classmethod
    def of(
        cls,
        docs: Mapping[str, Dict[str, Any]],
        files: Mapping[str, TableFile],
        **known: Any,
    ) -> Tables:
        made = cls.__new__(cls)
        pending = {name: (docs[name], str(files[name].path)) for name in GROUPS}
        object.__setattr__(made, "_pending", pending)
        object.__setattr__(made, "files", files)
        for name, value in known.items():
            object.__setattr__(made, name, value)
        return made


for _table, (_names, _) in GROUPS.items():
    for _name in _names:
        setattr(OnUse, _name, _Field(_table, _name))
