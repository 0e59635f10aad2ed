"""Each table file's fields of :class:`Tables`, read from its document, and tables that read
a file's fields the first time one of them is used.

A static check on a machine without an NVIDIA GPU asks the torch releases, the package
builds and the links, and nothing of the GPU models, the drivers, conda, JetPack or the message
catalogue (compiling its few hundred patterns alone costs about 100 ms): reading the tables costs
it 10 ms instead of 18 and the catalogue's compile. A built-in file is checked by the test suite
before envcheck is released, so it is read on first use (:class:`OnUse`); a file from a folder
given with ``--tables`` or from updated tables in the cache is read and checked when the tables
load, so that a bad one is refused before envcheck runs on it. For the same reason the built-in
catalogue's wordings are compiled the first time a paste may hold one (the message_records
Wording), where a catalogue from elsewhere has each compiled when it is read.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Optional, Tuple

from .model import Tables

if TYPE_CHECKING:
    from .model import TableFile

# a file's reader: its document, its path, and whether it is the built-in file (which the
# test suite checked: the message catalogue's wordings are then compiled on first use)
Read = Callable[[Dict[str, Any], str, bool], Tuple[Any, ...]]


def _reader(module: str, function: str, whole: bool = False) -> Read:
    """A file's reader, ``module.function`` of this package, imported on its first read (a
    check imports only the readers of the files it asks): its one field, or with ``whole``
    every field of the file in order."""

    def read(data: Dict[str, Any], path: str, builtin: bool) -> Tuple[Any, ...]:
        got = getattr(importlib.import_module(f"{__package__}.{module}"), function)(data, path)
        return tuple(got) if whole else (got,)

    return read


def _drivers(data: Dict[str, Any], path: str, builtin: bool) -> Tuple[Any, ...]:
    from . import read_drivers as read

    return (
        *read.read_cuda_driver(data, path),
        read.read_first_drivers(data, path),
        read.read_bundled_cuda(data, path),
        read.read_forward_compat(data, path),
    )


def _messages(data: Dict[str, Any], path: str, builtin: bool) -> Tuple[Any, ...]:
    from .read_messages import read_messages

    return (read_messages(data, path, compile_now=not builtin),)


# table file -> the Tables fields it holds, and what reads them (in that order)
GROUPS: Dict[str, Tuple[Tuple[str, ...], Read]] = {
    "torch_releases": (
        ("releases", "sources"),
        _reader("read_releases", "read_torch_releases", True),
    ),
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
    "gpu_arches": (
        ("families", "sass_rules", "gpus"),
        _reader("read_gpus", "read_gpu_arches", True),
    ),
    "installers": (("uv_torch_backends",), _reader("read_conda", "read_installers")),
    "conda_pytorch": (("conda",), _reader("read_conda", "read_conda_pytorch")),
    "links": (("links",), _reader("read_links", "read_links")),
    "jetpack": (("jetpacks",), _reader("read_jetpack", "read_jetpack")),
    "package_builds": (("package_builds",), _reader("read_package_builds", "read_package_builds")),
    "messages": (("messages",), _messages),
}


def read_group(
    table: str, data: Dict[str, Any], path: str, builtin: bool = False
) -> Dict[str, Any]:
    """One table file's fields, read and checked (``builtin``: the test suite checked it)."""
    names, read = GROUPS[table]
    values = read(data, path, builtin)
    assert len(values) == len(names), table  # a reader and its names kept in step
    return dict(zip(names, values))


def _read_file(tables: Any, table: str) -> None:
    """Read ``table``'s fields into ``tables``, if they are not read yet: from its document,
    parsed now where the loader left it unparsed (a built-in file: envcheck.tables.load)."""
    pending: Dict[str, Tuple[Optional[Dict[str, Any]], str, bool]] = tables.__dict__["_pending"]
    waiting = pending.get(table)
    if waiting is not None:  # else read already (by another thread, maybe, just now)
        data, path, builtin = waiting
        if data is None:
            data = _parsed(tables.files[table], table)
        for name, value in read_group(table, data, path, builtin).items():
            object.__setattr__(tables, name, value)  # frozen: set as its __init__ sets
        pending.pop(table, None)


def _parsed(file: TableFile, table: str) -> Dict[str, Any]:
    """The document of a file the loader dated from its head, checked to hold that date."""
    from .reader import TableError, read_document

    data = read_document(file.path, table)
    if data["as_of"] != file.as_of:
        raise TableError(f"{file.path}: as_of {data['as_of']!r} is not {file.as_of!r}, its head's")
    return data


class _Field:
    """A field of :class:`OnUse` that reads its file's fields the first time it is used and
    leaves them in the instance, where every later use finds them (a non-data descriptor:
    the instance's own value wins)."""

    def __init__(self, table: str, name: str) -> None:
        self.table, self.name = table, name

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        _read_file(obj, self.table)
        return obj.__dict__[self.name]


class OnUse(Tables):
    """:class:`Tables` whose built-in files' fields are read the first time one is used, and
    whose other files' fields were read and checked when they loaded. Everything else is a
    Tables: equality, repr and ``replace`` read every field."""

    @classmethod
    def of(cls, docs: Mapping[str, Optional[Dict[str, Any]]], **known: Any) -> OnUse:
        """The tables of ``docs`` (each file's document by name, None for a built-in file
        parsed on first use); ``known`` holds ``files`` (which says where each came from) and
        the fields that are no file's own."""
        made = cls.__new__(cls)
        pending: Dict[str, Tuple[Optional[Dict[str, Any]], str, bool]] = {}
        object.__setattr__(made, "_pending", pending)
        for name, value in known.items():
            object.__setattr__(made, name, value)
        for table in GROUPS:
            file: TableFile = known["files"][table]
            pending[table] = (docs[table], str(file.path), file.builtin)
            if not file.builtin:  # read and checked now: refused before envcheck runs on it
                _read_file(made, table)
        return made

    @property
    def unread(self) -> FrozenSet[str]:
        """The table files whose fields have not been read yet."""
        return frozenset(self.__dict__.get("_pending", ()))


for _table, (_names, _) in GROUPS.items():  # each field of each file, read on first use
    for _name in _names:
        setattr(OnUse, _name, _Field(_table, _name))
