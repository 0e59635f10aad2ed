"""What stops every build before any release is tried: a container started without its
GPUs, a driver that no longer runs a GPU here, a driver older than a GPU
here. Each guard is one small function; ``first_stop`` asks them in order, once."""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

from .._record import record
from ..compat import driver_drops, driver_predates
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release
from ..values import Platform
from .cuda import driver_predates_text, driver_upgrade
from .draft import Draft
from .plan import NoPlan
from .reasons import Blocker
from .wish import Wish

CPU_WAY_OUT = "use the CPU build (--variant cpu)"


@record(frozen=True)
class Stop:
    """Why no build can be planned here, whatever the release: the plan's one answer."""

    blocker: Blocker
    conflict: str
    ways_out: Tuple[str, ...]

    def into(self, plan: Draft) -> NoPlan:
        plan.conflicts.append(self.conflict)
        plan.ways_out.extend(self.ways_out)
        return plan.no_plan(self.blocker)


@record(frozen=True)
class Situation:
    """What the guards look at: the machine, the wish, and the newest release that matches."""

    facts: Facts
    tables: Tables
    wish: Wish
    target: Platform
    gpu: bool  # an NVIDIA GPU the plan is for (not on macOS)
    hidden: Optional[str]  # why the container's expected GPUs are not visible
    newest: Release  # the first usable release (the nearest, with --keep)


def _hidden_gpus(s: Situation) -> Optional[Stop]:
    """Planned from what is visible, a CUDA image would get the CPU wheel: no plan until its
    GPUs are there (SYS006 says how), or the build asked for, marked as unchecked."""
    if not s.hidden or s.wish.variant != "auto":
        return None
    from ..containers import SHORT_FIX

    return Stop(
        Blocker.UNKNOWN,
        f"this container expects NVIDIA GPUs ({s.hidden}) but was started without them: "
        "which build fits depends on its GPUs and driver, which are not visible",
        (
            f"{SHORT_FIX}, then ask again",
            "name the CUDA build the image is for (--variant cuXYZ): planned without its GPUs",
            "use the CPU build (--variant cpu) if it is meant to run without GPUs",
        ),
    )


def _driver_drops(s: Situation) -> Optional[Stop]:
    """The driver no longer runs a GPU here: no build can help until the driver changes."""
    dropped = driver_drops(s.facts, s.tables) if s.gpu else []
    if not dropped:
        return None
    conflict = "; ".join(
        f"driver {s.facts.nvidia.driver_version} no longer supports {name} ({family}): "
        f"R{branch} is the last driver branch for it"
        for _, name, _, family, branch in dropped
    )
    branch = min(b for *_, b in dropped)
    return Stop(
        Blocker.DRIVER, conflict, (f"install an R{branch} driver, then ask again", CPU_WAY_OUT)
    )


def _driver_predates(s: Situation) -> Optional[Stop]:
    """No release can help: said once, with the driver that sees the GPU first."""
    predates = driver_predates_text(s.facts, s.tables) if s.gpu else ""
    if not predates:
        return None
    need = driver_predates(s.facts, s.tables)[0][2]
    ways = [f"upgrade the NVIDIA driver to {need} or newer, then ask again"]
    needed = driver_upgrade(s.facts, s.tables, s.newest, s.target)
    if needed:
        ways.append(f"driver {needed[1]} or newer also runs {needed[0]} of torch {s.newest.newest}")
    ways.append(CPU_WAY_OUT)
    return Stop(Blocker.DRIVER, predates, tuple(ways))


# In order; the last three stop only a plan that may be a CUDA build (Wish.may_be_cuda).
_ANY_BUILD: Sequence[Callable[[Situation], Optional[Stop]]] = (_hidden_gpus,)
_CUDA_BUILDS: Sequence[Callable[[Situation], Optional[Stop]]] = (
    _driver_drops,
    _driver_predates,
)


def first_stop(s: Situation) -> Optional[Stop]:
    """The first guard that stops every build here, or None."""
    guards = [*_ANY_BUILD, *(_CUDA_BUILDS if s.wish.may_be_cuda else ())]
    return next((stop for stop in (g(s) for g in guards) if stop is not None), None)
