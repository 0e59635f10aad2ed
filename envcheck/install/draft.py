"""The plan while the resolver writes it: the one mutable step between the wish and the
frozen answer. Each step of ``resolve`` adds what it decided (a package, a note, a conflict);
``Draft.planned`` and ``Draft.no_plan`` freeze it into what ``resolve`` returns."""

from __future__ import annotations

from typing import List, Optional, Tuple

from .._record import field, record
from ..values import Variant
from .plan import CondaCommand, NoPlan, OtherIndex, Package, Planned
from .reasons import Blocker
from .wish import Wish


@record
class Draft:
    platform: Optional[str]
    python: Optional[str]
    wish: Wish
    torch: Optional[str] = None
    variant: Optional[Variant] = None
    default_index: bool = False
    packages: List[Package] = field(default_factory=list)
    reasons: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    conflicts: List[str] = field(default_factory=list)
    ways_out: List[str] = field(default_factory=list)
    changes: List[str] = field(default_factory=list)
    replaces_build: bool = False
    index_base: Optional[str] = None
    other_index: Optional[OtherIndex] = None
    unverified: List[str] = field(default_factory=list)
    passed_over: List[Tuple[str, str]] = field(default_factory=list)
    conda: Optional[CondaCommand] = None
    interpreter: Optional[str] = None
    externally_managed: bool = False

    def planned(self) -> Planned:
        assert self.torch is not None and self.variant is not None
        return Planned(
            platform=self.platform,
            python=self.python,
            wish=self.wish,
            notes=tuple(self.notes),
            unverified=tuple(self.unverified),
            passed_over=tuple(self.passed_over),
            interpreter=self.interpreter,
            externally_managed=self.externally_managed,
            torch=self.torch,
            variant=self.variant,
            packages=tuple(self.packages),
            reasons=tuple(self.reasons),
            changes=tuple(self.changes),
            default_index=self.default_index,
            replaces_build=self.replaces_build,
            index_base=self.index_base,
            other_index=self.other_index,
            conda=self.conda,
        )

    def no_plan(self, blocker: Blocker) -> NoPlan:
        return NoPlan(
            platform=self.platform,
            python=self.python,
            wish=self.wish,
            notes=tuple(self.notes),
            unverified=tuple(self.unverified),
            passed_over=tuple(self.passed_over),
            interpreter=self.interpreter,
            externally_managed=self.externally_managed,
            blocker=blocker,
            conflicts=tuple(self.conflicts),
            ways_out=tuple(self.ways_out),
        )

    @property
    def installs(self) -> str:
        """What ``Planned.installs`` will say (the changes name it before the plan is frozen)."""
        return self.planned().installs
