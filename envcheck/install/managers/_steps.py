"""The commands pip and uv run in order: the install, after the venv an externally
managed interpreter needs first (PEP 668: pip refuses to install into it)."""

from __future__ import annotations

import shlex
from typing import Callable, List, Optional

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import venv_python
from ..plan import Planned

Install = Callable[[Planned, Optional[str], UvBackends], List[str]]
MakeVenv = Callable[[Planned], List[str]]


def argv(
    plan: Planned,
    install: Install,
    uv_backends: UvBackends = NO_UV_BACKENDS,
    python: Optional[str] = None,
) -> List[str]:
    """The install as an argument list. It installs into ``python`` when given (``--run``:
    the interpreter envcheck checked), else into the plan's: a bare ``pip`` when the
    ``python`` first on PATH is it, else the interpreter by path (``PATH -m pip``; uv:
    ``--python PATH``), and for an externally managed one the new venv made first."""
    interpreter = python or (venv_python(plan) if plan.externally_managed else plan.interpreter)
    return install(plan, interpreter, uv_backends)


def steps(
    plan: Planned, install: Install, make_venv: MakeVenv, uv_backends: UvBackends = NO_UV_BACKENDS
) -> List[List[str]]:
    """The commands to run in order, each an argument list."""
    command = argv(plan, install, uv_backends)
    return [make_venv(plan), command] if plan.externally_managed else [command]


def shell_line(
    plan: Planned, install: Install, make_venv: MakeVenv, uv_backends: UvBackends = NO_UV_BACKENDS
) -> str:
    """The display string: the steps, joined as a shell would run them."""
    return " && ".join(
        " ".join(shlex.quote(a) for a in step)
        for step in steps(plan, install, make_venv, uv_backends)
    )
