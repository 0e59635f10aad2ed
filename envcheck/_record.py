"""``@record``: a dataclass made without ``dataclasses``, so that making one costs almost nothing.

``dataclasses`` compiles the source of ``__init__``, ``__repr__``, ``__eq__`` (and a frozen
class's ``__setattr__``/``__delattr__``) for every class, and even told to make none of them it
inspects each field at some length: about 0.25 ms a class on a 2-core machine, and importing it
imports ``inspect`` (``ast``, ``dis``, ``tokenize``): 10 ms. envcheck's static check makes about
100 records before it has done anything, and a healthcheck, which runs every few seconds for a
container's life, makes the Facts records. So a record's fields are read here from the class's
annotations, and every method is a closure over them or a function shared by all records:

- ``__init__`` takes the init fields positionally or by keyword, fills defaults and factories,
  sets the non-init fields that have one, then calls ``__post_init__``; a frozen record sets
  through ``object.__setattr__``. Its errors are Python's own words for a wrong call;
- a frozen record's ``__setattr__``/``__delattr__`` raise dataclasses' ``FrozenInstanceError``;
- ``__eq__``, ``__repr__`` and ``__hash__`` do the same for every class, with dataclasses'
  semantics: equal when the other is of the very same class and every compared field is equal;
  a repr of the fields with ``repr=True``; a frozen record hashes its compared fields (``hash=``
  honoured), a mutable one is unhashable. A method the class defines itself is kept. Fields
  compare as one tuple, as dataclasses did up to Python 3.12, on every Python: a record holding
  a NaN equals itself (3.13's field-by-field ``__eq__`` says it does not), which keeps ``==``
  reflexive and in step with ``__hash__``.

A record is still a dataclass to everything that asks: ``__dataclass_fields__`` (so
``dataclasses.fields``, ``asdict``, ``replace`` and ``is_dataclass`` work, as hypothesis's
``from_type`` uses them) and ``__signature__`` (what ``inspect.signature(cls)`` reads) are made
on first use, which imports ``dataclasses`` and ``inspect`` then and only then. What envcheck
itself needs of a record's fields (:func:`fields`, :func:`replace`) never imports them. The
class-creation rules dataclasses enforces are kept: ``ClassVar`` annotations are not fields, a
mutable default is refused, a field without a default may not follow one with a default, and
a subclass's fields follow its base's.

For mypy, ``record``, ``field`` and ``replace`` *are* dataclasses' (see the TYPE_CHECKING
branch), so its dataclass plugin checks every call.
"""

from __future__ import annotations

import sys

__all__ = ["Field", "field", "fields", "is_record", "record", "replace"]


class _Sentinel:
    __slots__ = ("_shown",)

    def __init__(self, shown: str) -> None:
        self._shown = shown

    def __repr__(self) -> str:
        return self._shown


MISSING: Any = _Sentinel("MISSING")
# What a field with a factory shows as its default in the signature, as dataclasses' "<factory>";
# passed back to __init__ (hypothesis's from_type does), it calls the factory.
_FACTORY: Any = _Sentinel("<factory>")


class Field:
    """One field of a record: what ``dataclasses.Field`` says of it."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "metadata",
        "name",
        "repr",
        "type",
    )

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        hash: Optional[bool] = None,
        compare: bool = True,
        metadata: Optional[Mapping[Any, Any]] = None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.metadata: Mapping[Any, Any] = metadata if metadata is not None else {}

    def named(self, name: str, annotation: Any) -> Field:
        self.name, self.type = name, annotation
        return self

    def __repr__(self) -> str:
        return f"Field(name={self.name!r},type={self.type!r},default={self.default!r})"


def _field(**options: Any) -> Any:
    """``dataclasses.field``'s options, for a record."""
    return Field(**options)


def _from_dataclasses(made: Any) -> Optional[Field]:
    """A ``dataclasses.Field`` given as a record's default (or a dataclass base's field) as
    a :class:`Field`; None for anything else."""
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None or not isinstance(made, dataclasses.Field):
        return None
    missing = dataclasses.MISSING
    return Field(
        default=MISSING if made.default is missing else made.default,
        default_factory=MISSING if made.default_factory is missing else made.default_factory,
        init=made.init,
        repr=made.repr,
        hash=made.hash,
        compare=made.compare,
        metadata=dict(made.metadata),
    ).named(made.name, made.type)


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):  # `from __future__ import annotations`: as dataclasses reads it
        head = annotation.split("[", 1)[0].strip()
        return head in ("ClassVar", "typing.ClassVar", "t.ClassVar")
    import typing

    return (
        annotation is typing.ClassVar or getattr(annotation, "__origin__", None) is typing.ClassVar
    )


def _own_annotations(cls: type) -> Dict[str, Any]:
    """The annotations ``cls`` itself declares, never a base's."""
    if sys.version_info >= (3, 10):  # the class's own (lazily made from 3.14 on)
        return dict(cls.__annotations__)
    return dict(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063 - 3.9's only way


def _collect(cls: type) -> Tuple[Field, ...]:
    """The fields of ``cls``: its bases' first, then its own annotations in order (a field
    it redefines keeps its place); class attributes left as dataclasses leaves them."""
    found: Dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = base.__dict__.get("__record_fields__")
        if inherited is None and "__dataclass_fields__" in base.__dict__:  # a dataclass base
            inherited = [
                _from_dataclasses(f) for f in base.__dict__["__dataclass_fields__"].values()
            ]
        for f in inherited or ():
            if f is not None:
                found[f.name] = f
    for name, annotation in _own_annotations(cls).items():
        if _is_classvar(annotation):
            continue
        given = cls.__dict__.get(name, MISSING)
        made = given if isinstance(given, Field) else _from_dataclasses(given)
        if made is None:
            made = Field(default=given)
        else:  # field(...): the class keeps its default, or no attribute at all
            if made.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
        if made.default is not MISSING and type(made.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(made.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        found[name] = made.named(name, annotation)
    after_default = False
    for f in found.values():
        if not f.init:
            continue
        if f.default is MISSING and f.default_factory is MISSING:
            if after_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
        else:
            after_default = True
    return tuple(found.values())


def fields(of: Any) -> Tuple[Field, ...]:
    """The fields of a record class or instance, in order (``dataclasses.fields``)."""
    cls = of if isinstance(of, type) else type(of)
    made: Optional[Tuple[Field, ...]] = getattr(cls, "__record_fields__", None)
    if made is None:
        raise TypeError("must be called with a record type or instance")
    return made


def is_record(value: Any) -> bool:
    """Whether ``value`` is a record class or instance."""
    cls = value if isinstance(value, type) else type(value)
    return hasattr(cls, "__record_fields__")


def _replace(obj: Any, /, **changes: Any) -> Any:
    """A copy of record ``obj`` with ``changes`` (``dataclasses.replace``)."""
    for f in fields(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(
                    f"field {f.name} is declared with init=False, it cannot be specified with "
                    "replace()"
                )
        elif f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


# ------------------------------------------------------------------ the shared methods

_COMPARED: Dict[type, Tuple[str, ...]] = {}
_HASHED: Dict[type, Tuple[str, ...]] = {}
_SHOWN: Dict[type, Tuple[str, ...]] = {}


def _names(
    cache: Dict[type, Tuple[str, ...]], cls: type, keep: Callable[[Field], Any]
) -> Tuple[str, ...]:
    names = cache.get(cls)
    if names is None:
        names = cache[cls] = tuple(f.name for f in fields(cls) if keep(f))
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


# ------------------------------------------------------------------ made on first use


class _DataclassFields:
    """``__dataclass_fields__``, made (with ``dataclasses``) the first time something asks."""

    def __init__(self) -> None:
        self._made: Dict[type, Dict[str, Any]] = {}

    def __get__(self, obj: Any, owner: type) -> Dict[str, Any]:
        made = self._made.get(owner)
        if made is None:
            import dataclasses

            made = self._made[owner] = {}
            for f in fields(owner):
                options: Dict[str, Any] = dict(
                    init=f.init, repr=f.repr, hash=f.hash, compare=f.compare, metadata=f.metadata
                )
                if f.default is not MISSING:
                    options["default"] = f.default
                if f.default_factory is not MISSING:
                    options["default_factory"] = f.default_factory
                shown = dataclasses.field(**options)
                shown.name, shown.type = f.name, f.type
                shown._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # as _process_class sets it
                made[f.name] = shown
        return made


class _Signature:
    """``__signature__``: what ``inspect.signature(cls)`` shows, made on first use."""

    def __init__(self) -> None:
        self._made: Dict[type, Any] = {}

    def __get__(self, obj: Any, owner: type) -> Any:
        made = self._made.get(owner)
        if made is None:
            import inspect

            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            params = []
            for f in fields(owner):
                if f.init:
                    default = f.default if f.default_factory is MISSING else _FACTORY
                    default = inspect.Parameter.empty if default is MISSING else default
                    params.append(
                        inspect.Parameter(f.name, kind, default=default, annotation=f.type)
                    )
            made = self._made[owner] = inspect.Signature(
                params, return_annotation=None, __validate_parameters__=False
            )
        return made


_DATACLASS_FIELDS = _DataclassFields()
_SIGNATURE = _Signature()


# ------------------------------------------------------------------ the per-class methods


class _Init:
    """What a generated ``__init__`` needs of a class's fields, worked out once."""

    def __init__(self, cls: type, made: Tuple[Field, ...]) -> None:
        self.taken: List[Tuple[str, Any, Any]] = [
            (f.name, f.default, f.default_factory) for f in made if f.init
        ]
        self.later: List[Tuple[str, Any, Any]] = [
            (f.name, f.default, f.default_factory)
            for f in made
            if not f.init and (f.default is not MISSING or f.default_factory is not MISSING)
        ]
        self.index = {name: i for i, (name, _, _) in enumerate(self.taken)}
        self.required = [n for n, default, factory in self.taken if default is factory is MISSING]
        self.say = f"{cls.__qualname__}.__init__()"

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


def _init_for(cls: type, made: Tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """The ``__init__`` of ``cls``'s fields, as dataclasses would compile it."""
    spec = _Init(cls, made)
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
            elif default is not MISSING:
                value = default
            elif factory is not MISSING:
                value = factory()
            else:
                spec.refuse(args, kwargs)
            if value is _FACTORY and factory is not MISSING:
                value = factory()  # the signature's "<factory>" passed back, as dataclasses take it
            put(self, name, value)
        for name, default, factory in later:
            put(self, name, default if factory is MISSING else factory())
        if post:
            self.__post_init__()

    return __init__


def _frozen(error: str) -> Exception:
    import dataclasses  # the error callers catch is dataclasses' own

    return dataclasses.FrozenInstanceError(error)


def _frozen_for(
    cls: type, made: Tuple[Field, ...]
) -> Tuple[Callable[..., None], Callable[..., None]]:
    """``__setattr__`` and ``__delattr__`` of a frozen ``cls``, as dataclasses' raise."""
    names = frozenset(f.name for f in made)
    owner: Any = cls

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise _frozen(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise _frozen(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    return __setattr__, __delattr__


def _record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    def wrap(cls: Any) -> Any:
        own = set(cls.__dict__)
        made = _collect(cls)
        marks = {
            "__record_fields__": made,
            "__dataclass_fields__": _DATACLASS_FIELDS,  # made on first use
            "__signature__": _SIGNATURE,  # made on first use
            "__match_args__": tuple(f.name for f in made if f.init),
        }
        for name, value in marks.items():
            type.__setattr__(cls, name, value)
        if "__init__" not in own:
            cls.__init__ = _init_for(cls, made, frozen)
        if frozen:
            cls.__setattr__, cls.__delattr__ = _frozen_for(cls, made)
        if "__eq__" not in own:
            cls.__eq__ = _eq
        if "__repr__" not in own:
            cls.__repr__ = _repr
        if "__hash__" not in own:
            cls.__hash__ = _hash if frozen else None
        return cls

    return wrap if cls is None else wrap(cls)


TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from dataclasses import dataclass as record
    from dataclasses import field as field
    from dataclasses import replace as replace
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
else:
    record = _record
    field = _field
    replace = _replace
