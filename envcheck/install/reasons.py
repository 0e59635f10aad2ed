"""Why a build does not fit, as values: a ``Blocker`` for the kind, and reason strings that
carry it (``Why``) or mark a fact the tables do not hold (``Unknown``).

The compatibility grid colours its cells by the blocker and scripts branch on it without
reading the sentences; the sentences stay plain ``str`` so every text prints as before.
"""

from __future__ import annotations

import enum
from typing import Any, Tuple


class Blocker(str, enum.Enum):
    """Why no build fits (``NoPlan.blocker``)."""

    NO_WHEEL = "no_wheel"  # not published for this platform, Python or variant
    DRIVER = "driver"  # the NVIDIA driver is too old: for the build's CUDA, or for the GPU
    KERNELS = "kernels"  # the build has no kernels for a GPU here
    UNKNOWN = "unknown"  # the tables cannot say

    def __str__(self) -> str:
        return self.value


NO_WHEEL = Blocker.NO_WHEEL
DRIVER = Blocker.DRIVER
KERNELS = Blocker.KERNELS
UNKNOWN = Blocker.UNKNOWN
BLOCKERS = tuple(Blocker)


class Unknown(str):
    """A reason that is a fact the tables do not hold: the plan is not verified on it."""


class UnknownKernels(Unknown):
    """The unknown that matters most: whether a build has kernels for the GPUs here (the
    tables lack its architecture or gfx list). A plan resting on it is never a fit."""


class Why(str):
    """A reason a build does not fit, carrying its blocker."""

    blocker: Blocker

    def __new__(cls, text: str, blocker: Blocker) -> Why:
        self = super().__new__(cls, text)
        self.blocker = blocker
        return self

    def __getnewargs__(self) -> Tuple[str, Blocker]:  # type: ignore[override]  # copy, deepcopy
        return (str(self), self.blocker)


def blocker_of(why: Any) -> Blocker:
    """The blocker a reason carries; UNKNOWN for what the tables do not hold (and for a
    reason nobody classified: never read as a known cause)."""
    return why.blocker if isinstance(why, Why) else Blocker.UNKNOWN


def has_unknown(why: Any) -> bool:
    """Whether a list of reasons holds a fact the tables do not (the build may fit)."""
    return isinstance(why, list) and any(isinstance(w, Unknown) for w in why)
