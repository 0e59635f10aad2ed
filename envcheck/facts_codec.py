"""The JSON form of Facts: plain data out, checked values in.

Facts' fields hold values (``ComputeCapability``, ``Arch``, str enums such as
``GpuStatus``); their JSON form is the strings those values print, so the document and
its schema stay what they were. Reading a document checks every type and parses every
value once, naming the field of a bad one; the deep probe's records and the
``ENVCHECK_FACT_*`` overrides come in through the same ``convert``.
"""

from __future__ import annotations

import enum
import sys
import typing
from typing import Any, Dict

from ._record import fields, is_record
from .values import Arch, ComputeCapability, Gfx, Platform, Variant

# The value types a Facts field may hold, each with its one parser (``parse``).
VALUES = (Arch, ComputeCapability, Gfx, Platform, Variant)


class FactsError(ValueError):
    """A Facts document that cannot be read: not JSON, wrong shape, or wrong types."""


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


def kind_of(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def to_plain(value: Any) -> Any:
    """A record as JSON data: nested records as dicts, values as their strings."""
    if is_record(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, VALUES):
        return str(value)
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


def build(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise FactsError(f"{path or 'document'}: expected an object, got {kind_of(data)}")
    hints = _hints(cls)
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            where = f"{path}.{f.name}" if path else f.name
            kwargs[f.name] = convert(hints[f.name], data[f.name], where)
    return cls(**kwargs)


def _union(tp: Any, value: Any, path: str) -> Any:
    """Optional[X], or a union of value types (an arch list entry: Arch or Gfx)."""
    if value is None and type(None) in typing.get_args(tp):
        return None
    kinds = [a for a in typing.get_args(tp) if a is not type(None)]
    if len(kinds) == 1:
        return convert(kinds[0], value, path)
    errors = []
    for kind in kinds:
        try:
            return convert(kind, value, path)
        except FactsError as exc:
            errors.append(str(exc))
    raise FactsError(errors[0])


def _value(tp: Any, value: Any, path: str) -> Any:
    """A str enum or a value type, from its string."""
    if not isinstance(value, str):
        raise FactsError(f"{path}: expected a string, got {kind_of(value)}")
    try:
        return tp(value) if issubclass(tp, enum.Enum) else tp.parse(value)
    except ValueError as exc:
        if issubclass(tp, enum.Enum):
            allowed = ", ".join(m.value for m in tp)
            raise FactsError(f"{path}: {value!r} is not one of {allowed}") from None
        raise FactsError(f"{path}: {exc}") from None


def _scalar(tp: Any, value: Any, path: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise FactsError(f"{path}: expected true or false, got {kind_of(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FactsError(f"{path}: expected an integer, got {kind_of(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FactsError(f"{path}: expected a number, got {kind_of(value)}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise FactsError(f"{path}: expected a string, got {kind_of(value)}")
        return value
    raise TypeError(f"unsupported field type {tp!r} at {path}")  # a bug in Facts


def convert(tp: Any, value: Any, path: str) -> Any:
    """Check and convert a JSON value to the declared field type ``tp``."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        return _union(tp, value, path)
    if origin is list:
        if not isinstance(value, list):
            raise FactsError(f"{path}: expected a list, got {kind_of(value)}")
        (item,) = typing.get_args(tp)
        return [convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise FactsError(f"{path}: expected an object, got {kind_of(value)}")
        _, item = typing.get_args(tp)
        return {str(k): convert(item, v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and is_record(tp):
        return build(tp, value, path)
    if isinstance(tp, type) and (issubclass(tp, enum.Enum) or tp in VALUES):
        return _value(tp, value, path)
    return _scalar(tp, value, path)


def field_type(section: type, name: str) -> Any:
    """The declared type of ``section.name`` (used by overrides to coerce values)."""
    return _hints(section)[name]
