"""uv: ``uv pip install``, with ``--torch-backend`` where uv knows the variant."""

from __future__ import annotations

from typing import List, Optional

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import uv_args
from ..plan import Planned
from ._steps import shell_line


def install(
    plan: Planned, interpreter: Optional[str], uv_backends: UvBackends = NO_UV_BACKENDS
) -> List[str]:
    """``uv pip install ...``: ``--python PATH`` when an interpreter is named."""
    target = ["--python", interpreter] if interpreter else []
    return ["uv", "pip", "install", *target, *uv_args(plan, uv_backends)]


def make_venv(plan: Planned) -> List[str]:
    """The ``.venv`` an externally managed interpreter needs first."""
    return ["uv", "venv", ".venv", *(["--python", plan.interpreter] if plan.interpreter else [])]


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    return shell_line(plan, install, make_venv, uv_backends)
