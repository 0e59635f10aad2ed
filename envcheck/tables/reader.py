"""Typed access to one compat_tables/*.json document: every table reader reports a bad
value with the file, the record and the field named, through ``Reader.fail``."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from packaging.version import Version

from .._text import one_line
from ..values import ComputeCapability, Gfx, Variant
from .model import (
    DriverVersion,
    Provenance,
)

SCHEMA_VERSION = 1
# The table files, one per name (``torch_releases.json``), in the order the loader reads them.
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
# Tables read only by the command that needs them (the code scan), never by load_tables: a
# bundle of updated tables carries them too.
ON_DEMAND_TABLES = ("code_changes",)
BUNDLED_TABLES = TABLE_NAMES + ON_DEMAND_TABLES
MAX_TABLE = 16 * 1024 * 1024  # bytes; the largest shipped table is ~100 KiB


class TableError(ValueError):
    """A compatibility table that cannot be used; the message (one line: a key that holds a
    newline is escaped) names file, record, field."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def plain_gfx(text: str) -> bool:
    """A gfx target without target features (gfx942), as the tables name GPUs."""
    parsed = Gfx.maybe(text)
    return parsed is not None and not parsed.features


class Reader:
    """Typed access to one JSON document that reports where a bad value sits."""

    def __init__(self, file: str, sources: Mapping[str, str]) -> None:
        self.file = file
        self.sources = sources

    def fail(self, where: str, message: str) -> TableError:
        return TableError(f"{self.file}: {where}: {message}")

    def get(
        self, obj: Mapping[str, Any], key: str, where: str, kind: type, optional: bool = False
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {type(obj).__name__}")
        if key not in obj or obj[key] is None:
            if optional:
                return None
            raise self.fail(where, f"missing field {key!r}")
        value = obj[key]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.fail(f"{where}.{key}", f"expected {kind.__name__}, got {value!r}")
        return value

    def strings(self, value: Any, where: str) -> Dict[str, str]:
        """An object whose values are all strings (sources, notes, bundled libraries)."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {value!r}")
        for key, text in value.items():
            if not isinstance(text, str):
                raise self.fail(f"{where}.{key}", f"expected a string, got {text!r}")
        return dict(value)

    def capability(self, value: Any, where: str) -> ComputeCapability:
        parsed = ComputeCapability.maybe(value) if isinstance(value, str) else None
        if parsed is None:
            raise self.fail(where, f"{value!r} is not a compute capability")
        return parsed

    def capabilities(self, value: Any, where: str) -> Tuple[ComputeCapability, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of compute capabilities, got {value!r}")
        return tuple(self.capability(c, where) for c in value)

    def version(self, text: Any, where: str) -> Version:
        if not isinstance(text, str):
            raise self.fail(where, f"expected a version string, got {text!r}")
        try:
            return Version(text)
        except ValueError:  # InvalidVersion, or a number of 4300+ digits
            raise self.fail(where, f"{text!r} is not a version") from None

    def opt_version(self, text: Any, where: str) -> Optional[Version]:
        return None if text is None else self.version(text, where)

    def opt_driver(self, text: Any, where: str) -> Optional[DriverVersion]:
        if text is None:
            return None
        self.version(text, where)
        return DriverVersion(text)

    def provenance(self, raw: Mapping[str, Any], where: str, fields: List[str]) -> Provenance:
        sources = self.get(raw, "sources", where, list)
        if not sources:
            raise self.fail(where, "a record needs at least one source")
        for s in sources:
            if not isinstance(s, str) or not (s in self.sources or "://" in s or " " in s):
                raise self.fail(f"{where}.sources", f"{s!r} is neither a known key nor a reference")
        inferred = self.get(raw, "inferred", where, list, optional=True) or []
        for name in inferred:
            if not isinstance(name, str) or name.split(".")[0] not in fields:
                raise self.fail(f"{where}.inferred", f"{name!r} names no field of this record")
        notes = self.get(raw, "notes", where, dict, optional=True) or {}
        return Provenance(tuple(sources), tuple(inferred), self.strings(notes, f"{where}.notes"))


_HEAD_AS_OF = re.compile(rb'"as_of"\s*:\s*"(\d{4}-\d{2}-\d{2})"')


def head_as_of(path: Path) -> Optional[str]:
    """A table file's ``as_of`` read from its first KiB, where the tables keep it, without
    parsing the file; None where it is not there (then read the document)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror or exc}") from None
    found = _HEAD_AS_OF.search(head)
    return found.group(1).decode() if found else None


def read_document(path: Path, name: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TABLE + 1)
        if len(raw) > MAX_TABLE:
            raise TableError(f"{path}: larger than {MAX_TABLE // 2**20} MiB; not a table")
        data = json.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except RecursionError:
        raise TableError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a >4300-digit integer
        raise TableError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TableError(f"{path}: expected a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise TableError(
            f"{path}: schema_version {version!r} is not {SCHEMA_VERSION}, "
            "the one this envcheck reads"
        )
    if data.get("table") != name:
        raise TableError(f"{path}: 'table' is {data.get('table')!r}, expected {name!r}")
    as_of = data.get("as_of")
    try:
        if not isinstance(as_of, str):
            raise ValueError(as_of)
        datetime.date.fromisoformat(as_of)
    except ValueError:
        raise TableError(f"{path}: as_of {as_of!r} is not a date (YYYY-MM-DD)") from None
    return data


MINOR = re.compile(r"^\d+\.\d+$")  # a torch release: 2.8


def variant(r: Reader, value: Any, where: str) -> Variant:
    """One wheel variant of a table, parsed once: code downstream holds the value."""
    parsed = Variant.maybe(value) if isinstance(value, str) else None
    if parsed is None:
        raise r.fail(where, f"{value!r} is not a wheel variant (cpu, cuXYZ, rocmX.Y, xpu)")
    return parsed


def variants(r: Reader, values: Any, where: str) -> Optional[Tuple[Variant, ...]]:
    """A list of wheel variants, in the table's order; None where the table leaves it out."""
    if values is None:
        return None
    if not isinstance(values, list):
        raise r.fail(where, f"expected a list, got {values!r}")
    return tuple(variant(r, v, where) for v in values)
