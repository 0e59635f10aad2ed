"""``@record``: a dataclass whose methods are made without compiling code for each class.

``dataclasses`` writes the source of ``__init__``, ``__repr__``, ``__eq__`` (and a frozen
class's ``__setattr__`` and ``__delattr__``) for every class and compiles it at import: about
0.4 ms a class on a 2-core machine, and envcheck's static check imports about 100 of them before
it has done anything (35 ms, a sixth of its run; a healthcheck, which runs every few seconds for
a container's life, pays it for its Facts classes). Here ``dataclasses`` only collects the
fields; every method is a closure over them or a function shared by all classes:

- ``__init__`` takes the init fields positionally or by keyword, fills defaults and factories,
  sets the non-init fields that have one, then calls ``__post_init__``; a frozen record sets
  through ``object.__setattr__``. Its errors are Python's own words for a wrong call. It costs
  about 1-2 us more per instance than a compiled one: a static check makes about 2,000;
- a frozen record's ``__setattr__``/``__delattr__`` raise ``FrozenInstanceError`` as
  dataclasses' do;
- ``__eq__``, ``__repr__`` and ``__hash__`` run rarely (tests, logs, dict keys of a few values)
  and do the same for every class, so one function each serves them all, with dataclasses'
  semantics:
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
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple

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


_MISSING: Any = dataclasses.MISSING
# What dataclasses' own __init__ signature shows for a field with a factory ("<factory>").
_FACTORY_DEFAULT: Any = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", "<factory>")


class _Fields:
    """What a generated ``__init__`` needs of a class's fields, worked out once."""

    def __init__(self, cls: type) -> None:
        fields = dataclasses.fields(cls)
        self.taken: List[Tuple[str, Any, Any]] = [
            (f.name, f.default, f.default_factory) for f in fields if f.init
        ]
        self.later: List[Tuple[str, Any, Any]] = [
            (f.name, f.default, f.default_factory)
            for f in fields
            if not f.init and (f.default is not _MISSING or f.default_factory is not _MISSING)
        ]
        self.index = {name: i for i, (name, _, _) in enumerate(self.taken)}
        self.required = [n for n, default, factory in self.taken if default is factory is _MISSING]
        self.say = f"{cls.__qualname__}.__init__()"
        self.signature = _signature(fields)

    def refuse(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        """Raise Python's own words for a call that does not fit the fields."""
        most, say = len(self.taken) + 1, self.say
        if len(args) >= most:
            least = len(self.required) + 1
            takes = f"{most}" if least == most else f"from {least} to {most}"
            raise TypeError(
                f"{say} takes {takes} positional arguments but {len(args) + 1} were given"
            )
        for name in kwargs:
            at = self.index.get(name)
            if at is None:
                raise TypeError(f"{say} got an unexpected keyword argument '{name}'")
            if at < len(args):
                raise TypeError(f"{say} got multiple values for argument '{name}'")
        quoted = [f"'{n}'" for n in self.required[len(args) :] if n not in kwargs]
        listed = " and ".join(quoted[-2:])  # Python's words: 'a', 'b', and 'c'
        if len(quoted) > 2:
            listed = ", ".join(quoted[:-1]) + ", and " + quoted[-1]
        plural = "argument" if len(quoted) == 1 else "arguments"
        raise TypeError(f"{say} missing {len(quoted)} required positional {plural}: {listed}")


def _signature(fields: Tuple[dataclasses.Field, ...]) -> Any:  # type: ignore[type-arg]
    """The signature dataclasses' compiled ``__init__`` has, for what reads it (inspect,
    hypothesis's ``from_type``): the init fields, a factory's default shown as such."""
    import inspect  # dataclasses imported it already: free

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter("self", kind)]
    for f in fields:
        if f.init:
            default = f.default if f.default_factory is _MISSING else _FACTORY_DEFAULT
            default = inspect.Parameter.empty if default is _MISSING else default
            params.append(inspect.Parameter(f.name, kind, default=default, annotation=f.type))
    return inspect.Signature(params, return_annotation=None, __validate_parameters__=False)


def _init_for(cls: type, frozen: bool) -> Callable[..., None]:
    """The ``__init__`` of ``cls``'s fields, as dataclasses would compile it."""
    spec = _Fields(cls)
    taken, later, index = spec.taken, spec.later, spec.index
    post = hasattr(cls, "__post_init__")
    put: Callable[[Any, str, Any], None] = object.__setattr__ if frozen else setattr

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = len(args)
        if given > len(taken) or any(index.get(k, -1) < given for k in kwargs):
            spec.refuse(args, kwargs)
        for at, (name, default, factory) in enumerate(taken):
            if at < given:
                value = args[at]
            elif name in kwargs:
                value = kwargs[name]
            elif default is not _MISSING:
                value = default
            elif factory is not _MISSING:
                value = factory()
            else:
                spec.refuse(args, kwargs)
            if value is _FACTORY_DEFAULT and factory is not _MISSING:
                value = factory()  # the signature's "<factory>" passed back, as dataclasses take it
            put(self, name, value)
        for name, default, factory in later:
            put(self, name, default if factory is _MISSING else factory())
        if post:
            self.__post_init__()

    __init__.__signature__ = spec.signature  # type: ignore[attr-defined]
    return __init__


def _frozen_for(cls: type) -> Tuple[Callable[..., None], Callable[..., None]]:
    """``__setattr__`` and ``__delattr__`` of a frozen ``cls``, as dataclasses' raise."""
    names = frozenset(f.name for f in dataclasses.fields(cls))
    owner: Any = cls

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    return __setattr__, __delattr__


def _record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    def wrap(cls: type) -> Any:
        own = set(cls.__dict__)
        made: Any = dataclasses.dataclass(cls, init=False, eq=False, repr=False)
        if "__init__" not in own:
            made.__init__ = _init_for(made, frozen)
        if frozen:
            made.__setattr__, made.__delattr__ = _frozen_for(made)
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
