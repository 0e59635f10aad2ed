"""``@record``: a dataclass whose ``__eq__`` and ``__repr__`` (and a frozen one's ``__hash__``)
are shared functions instead of code compiled for each class.

``dataclasses`` writes the source of ``__init__``, ``__repr__`` and ``__eq__`` for every class
and compiles it at import: about 1 ms a class on a 2-core machine, and envcheck's static check
imports about 80 of them before it has done anything (a tenth of its run; a healthcheck, which
runs every few seconds for a container's life, pays 20 ms for its 23 Facts classes). ``__init__``
is still generated (it runs often, and its defaults and factories are the dataclass's);
``__eq__``, ``__repr__`` and ``__hash__`` run rarely (tests, logs, dict keys of a few values) and
do the same for every class, so one function each serves them all, with dataclasses' semantics:
equal when the other is of the very same class and every compared field is equal; a repr of the
fields with ``repr=True``; a frozen record hashes its compared fields (``hash=`` honoured), a
mutable one is unhashable. A method the class defines itself is kept. Fields compare as one
tuple, as dataclasses did up to Python 3.12, on every Python: a record holding a NaN equals
itself (3.13's field-by-field ``__eq__`` says it does not), which keeps ``==`` reflexive and in
step with ``__hash__``.

For mypy, ``record`` *is* ``dataclasses.dataclass`` (see the TYPE_CHECKING branch).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, Tuple

__all__ = ["record"]

_COMPARED: Dict[type, Tuple[str, ...]] = {}
_HASHED: Dict[type, Tuple[str, ...]] = {}
_SHOWN: Dict[type, Tuple[str, ...]] = {}


def _names(
    cache: Dict[type, Tuple[str, ...]], cls: type, keep: Callable[[Any], bool]
) -> Tuple[str, ...]:
    names = cache.get(cls)
    if names is None:
        names = cache[cls] = tuple(f.name for f in dataclasses.fields(cls) if keep(f))
    return names


def _values(self: Any, names: Tuple[str, ...]) -> Tuple[Any, ...]:
    return tuple(getattr(self, name) for name in names)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = _names(_COMPARED, self.__class__, lambda f: f.compare)
    return _values(self, names) == _values(other, names)


def _hash(self: Any) -> int:
    names = _names(_HASHED, self.__class__, lambda f: f.compare if f.hash is None else f.hash)
    return hash(_values(self, names))


def _repr(self: Any) -> str:
    names = _names(_SHOWN, self.__class__, lambda f: f.repr)
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
    return f"{self.__class__.__qualname__}({shown})"


def _record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    def wrap(cls: type) -> Any:
        own = set(cls.__dict__)
        made: Any = dataclasses.dataclass(cls, frozen=frozen, eq=False, repr=False)
        if "__eq__" not in own:
            made.__eq__ = _eq
        if "__repr__" not in own:
            made.__repr__ = _repr
        if "__hash__" not in own:
            made.__hash__ = _hash if frozen else None
        return made

    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:
    record = _record
