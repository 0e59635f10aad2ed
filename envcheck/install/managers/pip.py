"""pip: ``pip install`` with the pins and PyTorch's index, into the plan's interpreter."""

from __future__ import annotations

from typing import List, Optional

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import pip_args
from ..plan import Planned
from ._steps import shell_line


def install(
    plan: Planned, interpreter: Optional[str], uv_backends: UvBackends = NO_UV_BACKENDS
) -> List[str]:
    """``pip install ...``: by ``PATH -m pip`` when an interpreter is named, else a bare pip."""
    head = [interpreter, "-m", "pip"] if interpreter else ["pip"]
    return [*head, "install", *pip_args(plan)]


def make_venv(plan: Planned) -> List[str]:
    """The ``.venv`` an externally managed interpreter needs first."""
    return [plan.interpreter or "python3", "-m", "venv", ".venv"]


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    return shell_line(plan, install, make_venv, uv_backends)
