"""Render a plan as the command or project snippet for one package manager: the one place
that turns a ``Planned`` into text or argument lists, through the registry (managers/)."""

from __future__ import annotations

from typing import List, Optional

from ..tables.uv_backends import NO_UV_BACKENDS, UvBackends
from .commands import planned
from .managers import NAMES, lookup
from .managers._steps import argv, steps
from .plan import InstallPlan

MANAGERS = NAMES


def plan_argv(
    plan: InstallPlan,
    manager: str,
    uv_backends: UvBackends = NO_UV_BACKENDS,
    python: Optional[str] = None,
) -> List[str]:
    """The pip or uv command as an argument list (empty for project files and conda).

    It installs into ``python`` when given (``--run``: the interpreter envcheck checked),
    else into the plan's (managers._steps.argv)."""
    install = lookup(manager).install
    return argv(planned(plan), install, uv_backends, python) if install is not None else []


def plan_steps(
    plan: InstallPlan, manager: str, uv_backends: UvBackends = NO_UV_BACKENDS
) -> List[List[str]]:
    """The pip or uv commands to run in order, each an argument list: the install, after
    the venv an externally managed interpreter needs first. Empty for conda and files."""
    found = lookup(manager)
    if found.install is None or found.make_venv is None:
        return []
    return steps(planned(plan), found.install, found.make_venv, uv_backends)


def render(plan: InstallPlan, manager: str, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    """The command or snippet for ``manager``; ``uv_backends`` from the installers table."""
    solution = planned(plan)
    return lookup(manager).render(solution, uv_backends)
