"""envcheck._record.record behaves as dataclasses.dataclass does for what envcheck uses:
equality, repr, hashing, field options, subclasses and methods a class defines itself."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, ClassVar, Dict, List, Optional

import pytest

from envcheck._record import record


def pair(frozen: bool) -> Any:
    """The same class, once as a dataclass and once as a record."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=frozen), record(frozen=frozen)):

        @decorate
        class Point:
            x: int
            y: Optional[float] = None
            tags: List[str] = field(default_factory=list)
            note: str = field(default="", compare=False)
            secret: str = field(default="", repr=False)
            weight: int = field(default=0, hash=False)

        made.append(Point)
    return made


VALUES = [
    dict(x=1),
    dict(x=1, y=2.5, tags=["a"]),
    dict(x=1, note="other"),
    dict(x=1, secret="s3"),
    dict(x=1, weight=9),
    dict(x=2, y=float("nan")),
]


def same_in_every_python(a: dict, b: dict) -> bool:
    """Python 3.13's dataclasses compare field by field, so a field holding the very same NaN
    makes two instances unequal there and equal in 3.9-3.12, which compare tuples."""
    return not any(isinstance(v, float) and v != v for v in (*a.values(), *b.values()))


@pytest.mark.parametrize("frozen", [False, True])
def test_equality_and_repr_are_dataclasses(frozen: bool) -> None:
    plain, ours = pair(frozen)
    for a in VALUES:
        assert repr(ours(**a)).replace("Point", "P") == repr(plain(**a)).replace("Point", "P")
        for b in filter(lambda b: same_in_every_python(a, b), VALUES):
            assert (ours(**a) == ours(**b)) == (plain(**a) == plain(**b)), (a, b)
            assert (ours(**a) != ours(**b)) == (plain(**a) != plain(**b)), (a, b)
    nan = float("nan")  # the same object: equal in a tuple, as dataclasses compared up to 3.12
    assert ours(x=1, y=nan) == ours(x=1, y=nan) and ours(x=1, y=nan) != ours(x=1, y=float("nan"))
    assert ours(x=1) != plain(x=1) and ours(x=1) != (1,)


def hashed(value: Any) -> Any:
    try:
        return hash(value)
    except TypeError as exc:
        return type(exc)


def test_a_frozen_record_hashes_as_a_dataclass_and_a_mutable_one_does_not_hash() -> None:
    plain, ours = pair(True)
    for a in VALUES:
        for tags in ((), ("a", "b")):  # a tuple hashes; the default list does not, in either
            b = dict(a, tags=tags)
            assert hashed(ours(**b)) == hashed(plain(**b)), b
        assert hashed(ours(**a)) is hashed(plain(**a)) is TypeError
    points = {ours(x=1, tags=()), ours(x=1, tags=(), note="n"), ours(x=1, tags=(), weight=3)}
    assert len(points) == 2  # note is not compared; weight is compared, not hashed
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours(x=1).x = 2  # type: ignore[misc]
    plain, ours = pair(False)
    with pytest.raises(TypeError):
        hash(ours(x=1))
    with pytest.raises(TypeError):
        hash(plain(x=1))


def test_a_subclass_is_not_equal_to_its_parent_and_own_methods_are_kept() -> None:
    @record
    class Base:
        a: int = 0

    @record
    class Child(Base):
        b: int = 0

    @record(frozen=True)
    class Own:
        a: int = 0

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    assert Base(1) != Child(1) and Child(1, 2) == Child(1, 2) and Child(1, 2) != Child(1, 3)
    assert repr(Child(1, 2)).endswith("Child(a=1, b=2)")
    assert Own(1) == Own(2) and hash(Own(3)) == 7 and repr(Own()) == "own"
    assert dataclasses.is_dataclass(Child) and [f.name for f in dataclasses.fields(Child)] == [
        "a",
        "b",
    ]


def test_envcheck_values_keep_their_round_trips() -> None:
    """The classes that use it: Facts equal after a JSON round trip, and differ on a field."""
    from envcheck.facts import Facts, GpuFacts

    facts = Facts()
    facts.nvidia.gpus = [GpuFacts(index=0, name="NVIDIA H100")]
    again = Facts.from_dict(facts.to_dict())
    assert again == facts
    again.nvidia.gpus[0].name = "NVIDIA A100"
    assert again != facts
    shown: Dict[str, Any] = {"repr": repr(facts.nvidia.gpus[0])}
    assert shown["repr"].startswith("GpuFacts(index=0, name='NVIDIA H100'")


def outcome(make: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return repr(make(*args, **kwargs)).split("(", 1)[1]
    except TypeError as exc:
        return (TypeError, str(exc).split("__init__()", 1)[1])


@pytest.mark.parametrize("frozen", [False, True])
def test_init_takes_what_a_dataclass_takes_and_refuses_what_it_refuses(frozen: bool) -> None:
    """__init__ is a closure, not compiled code: the same calls succeed with the same values
    and fail with Python's own words, __post_init__ runs and non-init fields get theirs."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=frozen), record(frozen=frozen)):

        @decorate
        class Job:
            name: str
            size: int = 1
            tags: List[str] = field(default_factory=list)
            seen: List[str] = field(default_factory=lambda: ["made"], init=False)
            fixed: int = field(default=5, init=False)

            def __post_init__(self) -> None:
                object.__setattr__(self, "size", self.size * 10)

        made.append(Job)
    plain, ours = made
    calls: List[Any] = [
        ((), {}),
        (("a",), {}),
        (("a", 2), {"tags": ["t"]}),
        ((), {"name": "b", "size": 3}),
        (("a", 2, ["t"], "extra"), {}),
        (("a",), {"name": "again"}),
        (("a",), {"colour": "red"}),
        (("a",), {"seen": ["no"]}),
    ]
    for args, kwargs in calls:
        assert outcome(ours, *args, **kwargs) == outcome(plain, *args, **kwargs), (args, kwargs)
    job = ours("a")
    assert (job.seen, job.fixed, job.size) == (["made"], 5, 10)
    assert ours("a").tags is not ours("a").tags  # a fresh list for each instance
    if frozen:
        for change in (lambda: setattr(job, "name", "b"), lambda: delattr(job, "name")):
            with pytest.raises(dataclasses.FrozenInstanceError):
                change()
    else:
        job.name = "b"
        del job.tags
        assert job.name == "b" and not hasattr(job, "tags")


def test_a_call_missing_several_fields_names_them_all() -> None:
    made = []
    for decorate in (dataclasses.dataclass, record):

        @decorate
        class Span:
            start: int
            end: int
            label: str
            unit: str = "s"

        made.append(Span)
    plain, ours = made
    for args in ((), (1,), (1, 2)):
        assert outcome(ours, *args) == outcome(plain, *args), args
    assert outcome(ours, 1, 2, "x", "ms", 9) == outcome(plain, 1, 2, "x", "ms", 9)


def test_init_has_the_signature_of_a_dataclass() -> None:
    """inspect and hypothesis's from_type read the fields from it, as from a dataclass's."""
    import inspect

    plain, ours = pair(False)
    assert str(inspect.signature(ours)) == str(inspect.signature(plain))
    assert list(inspect.signature(ours).parameters) == [
        "x",
        "y",
        "tags",
        "note",
        "secret",
        "weight",
    ]


def test_the_factory_marker_of_the_signature_passed_back_makes_a_fresh_value() -> None:
    """hypothesis's from_type passes a parameter's shown default (dataclasses' "<factory>")
    back to the class; a dataclass's __init__ then calls the factory, and so does a record's."""
    import inspect

    for made in pair(False):
        marker = inspect.signature(made).parameters["tags"].default
        assert made(x=1, tags=marker).tags == []


def made_by(decorate: Any, body: str) -> Any:
    """A class whose body is ``body``, made by ``decorate``: the outcome or the error."""
    space: Dict[str, Any] = {
        "field": field,
        "ClassVar": ClassVar,
        "List": List,
        "__name__": __name__,
    }
    try:
        exec(f"class Made:\n{body}", space)
        return decorate(space["Made"])
    except (TypeError, ValueError) as exc:
        return type(exc)


@pytest.mark.parametrize(
    "body",
    [
        "    x: int = 0\n    y: int\n",  # a field without a default after one with
        "    x: List[int] = []\n",  # a mutable default
        "    x: int = field(default=1, default_factory=int)\n",  # both
        "    x: int = 0\n    y: ClassVar[int] = 1\n    z: 'ClassVar[int]' = 2\n",  # not fields
        "    x: int = field(default=3)\n    y: List[int] = field(default_factory=list)\n",
    ],
)
def test_a_class_is_refused_or_made_as_a_dataclass_is(body: str) -> None:
    """The rules dataclasses enforces when it makes a class, and the class attributes it
    leaves (a field(default=) becomes the default, a factory's field no attribute)."""
    plain, ours = made_by(dataclasses.dataclass, body), made_by(record, body)
    if isinstance(plain, type) and issubclass(plain, Exception):
        assert ours is plain
        return
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(plain)]
    for name in ("x", "y", "z"):
        assert getattr(ours, name, "absent") == getattr(plain, name, "absent"), name
    assert outcome(ours) == outcome(plain)


def described(f: Any) -> Any:
    return (f.name, f.type, f.default, f.default_factory, f.init, f.compare, f.hash, f.repr)


@pytest.mark.parametrize("frozen", [False, True])
def test_dataclasses_functions_take_a_record_as_a_dataclass(frozen: bool) -> None:
    """What is made on first use (``__dataclass_fields__``) serves dataclasses' own
    functions; envcheck's own ``fields`` and ``replace`` answer the same without them."""
    from envcheck import _record

    plain, ours = pair(frozen)
    a, b = ours(x=1, tags=["t"], note="n"), plain(x=1, tags=["t"], note="n")
    assert dataclasses.is_dataclass(a) and dataclasses.is_dataclass(ours)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert dataclasses.astuple(a) == dataclasses.astuple(b)
    assert list(map(described, dataclasses.fields(ours))) == list(
        map(described, dataclasses.fields(plain))
    )
    assert [f.name for f in _record.fields(a)] == [f.name for f in dataclasses.fields(b)]
    changed = dataclasses.replace(a, y=2.0)
    assert changed == _record.replace(a, y=2.0) and changed.y == 2.0 and changed.tags == ["t"]
    assert repr(dataclasses.replace(b, y=2.0)).split("(", 1)[1] == repr(changed).split("(", 1)[1]
    with pytest.raises(TypeError):
        _record.fields(1)


def test_making_records_imports_neither_dataclasses_nor_inspect() -> None:
    """The point of the module: a healthcheck's Facts cost no ``dataclasses``/``inspect``
    import, until something asks for a record as a dataclass."""
    import json
    import subprocess
    import sys

    from envcheck._record import fields
    from envcheck.facts import Facts

    code = (
        "import sys\n"
        "from envcheck.facts import Facts\n"
        "f = Facts.from_dict(Facts().to_dict())\n"
        "before = {m for m in ('dataclasses', 'inspect') if m in sys.modules}\n"
        "import dataclasses\n"
        "import json\n"
        "print(json.dumps([sorted(before), [x.name for x in dataclasses.fields(f)]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, names = json.loads(out.stdout)
    assert before == []  # nothing imported before it was asked for
    assert names == [f.name for f in fields(Facts)] and len(names) > 5
