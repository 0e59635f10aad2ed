"""The registry of package managers a plan renders for: one module per manager, each with a
``render(plan, uv_backends) -> str``; pip and uv also build their commands as argument
lists (``install``, ``make_venv``) for ``--run`` and the JSON document.

``NAMES`` is the list the CLI's ``--manager`` choices come from.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

from ..._record import record
from ...tables.uv_backends import UvBackends
from ..manager import Manager
from ..plan import Planned
from . import conda, pip, poetry, requirements, uv, uv_project
from ._steps import Install, MakeVenv


@record(frozen=True)
class Renderer:
    """How one manager turns a plan into its command or project snippet."""

    render: Callable[[Planned, UvBackends], str]
    install: Optional[Install] = None  # pip, uv: the install as an argument list
    make_venv: Optional[MakeVenv] = None  # pip, uv: the venv an externally managed one needs


REGISTRY: Dict[Manager, Renderer] = {
    Manager.PIP: Renderer(pip.render, pip.install, pip.make_venv),
    Manager.UV: Renderer(uv.render, uv.install, uv.make_venv),
    Manager.CONDA: Renderer(conda.render),
    Manager.REQUIREMENTS: Renderer(requirements.render),
    Manager.UV_PROJECT: Renderer(uv_project.render),
    Manager.POETRY: Renderer(poetry.render),
}

NAMES: Tuple[str, ...] = tuple(str(m) for m in REGISTRY)


def lookup(manager: str) -> Renderer:
    """The renderer of a manager by its name; ValueError for one not in the registry."""
    try:
        return REGISTRY[Manager(manager)]
    except ValueError:
        raise ValueError(f"unknown manager {manager!r}") from None
