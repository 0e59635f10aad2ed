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


TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


def replace_cpu_build(torch_pin: str, variant: str) -> str:
    """The pip commands that swap a CPU-only torch for the ``variant`` build (``cu126``, or
    a placeholder such as ``cuXYZ``) where no plan can be made (a pasted report that leaves
    the platform open). pip keeps an installed torch whose version meets a pin without a
    local label (2.1.0+cpu meets torch==2.1.0), and a +cpu torchvision stays unless removed,
    so the family goes first; pip then takes the companions that match the pinned torch
    from the same index (tests/test_install_local_index.py runs it)."""
    from ..compat import INDEX_URL

    family = " ".join(TORCH_FAMILY)
    wanted = " ".join((f"torch{torch_pin}", *TORCH_FAMILY[1:]))
    return f"pip uninstall {family} -y, then pip install {wanted} --index-url {INDEX_URL}{variant}"
