"""envcheck._record.record behaves as dataclasses.dataclass does for what envcheck uses:
equality, repr, hashing, field options, subclasses and methods a class defines itself."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, Dict, List, Optional

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
