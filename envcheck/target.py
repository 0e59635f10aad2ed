"""Which interpreter's environment the user means when they type ``envcheck``.

envcheck is often installed as a tool of its own (``pipx install``, ``uvx --from``, a
system package), in an environment that will never hold the user's torch. Checking
that environment answers a question nobody asked ("torch is not installed", and an
install command for envcheck's own venv). So the console script checks, in this
order: ``--python``; the activated virtual environment (``VIRTUAL_ENV``); the activated
conda environment (``CONDA_PREFIX``); a ``.venv`` at the root of the project the
current folder is in; else envcheck's own interpreter. The choice and its reason go
into Facts (``python.chosen_because``) and the report's header. A library call
(``envcheck.check()``) keeps describing its own interpreter: a script checks itself.
"""

from __future__ import annotations

import os
import sys
from typing import Iterator, Mapping, Optional, Sequence

from ._cwd import current
from ._record import record

OWN = "envcheck's own interpreter"
# Files that mark a project's root: the .venv search stops there (uv looks the same way).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


@record(frozen=True)
class Target:
    python: Optional[str]  # the interpreter to describe; None: envcheck's own
    reason: str  # why, as the header says it


def interpreter_in(prefix: str) -> Optional[str]:
    """The Python of the environment at ``prefix`` (a venv or a conda env), or None."""
    for rel in (("bin", "python"), ("bin", "python3"), ("Scripts", "python.exe"), ("python.exe",)):
        path = os.path.join(prefix, *rel)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _same(a: str, b: str) -> bool:
    """The same folder. Paths are compared as written first: every venv's python links to
    one base interpreter, so only where the environment lives tells them apart."""
    if os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _upwards(start: str) -> Iterator[str]:
    """``start`` and every folder above it, to the root."""
    folder = os.path.abspath(start)
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _marks_project(folder: str) -> bool:
    return any(os.path.lexists(os.path.join(folder, m)) for m in PROJECT_MARKERS)


def project_root(start: str) -> Optional[str]:
    """The project folder ``start`` is in: the nearest folder, upwards, holding a project
    marker (pyproject.toml, setup.py, setup.cfg, .git); None outside any project."""
    return next((f for f in _upwards(start) if _marks_project(f)), None)


def project_venv(cwd: Optional[str]) -> Optional[str]:
    """The ``.venv`` of the project ``cwd`` is in: the nearest folder upwards with a .venv
    holding a Python, not looking past the first folder that marks a project root."""
    if not cwd:
        return None
    for folder in _upwards(cwd):
        venv = os.path.join(folder, ".venv")
        if os.path.isdir(venv) and interpreter_in(venv):
            return venv
        if _marks_project(folder):
            return None
    return None


def chosen(python: Optional[str]) -> Target:
    """What the console script describes, run here: ``--python``'s value, this process's
    environment and current folder (see the module)."""
    return choose(python, os.environ, current())


def choose(
    python: Optional[str],
    environ: Mapping[str, str],
    cwd: Optional[str],
    own_prefixes: Sequence[str] = (sys.prefix,),
) -> Target:
    """The interpreter the console script describes (see the module)."""
    if python:
        return Target(python, "--python")
    skipped = []
    for variable, what in (
        ("VIRTUAL_ENV", "the activated virtual environment"),
        ("CONDA_PREFIX", "the activated conda environment"),
    ):
        prefix = environ.get(variable, "").strip()
        if not prefix:
            continue
        if any(_same(prefix, own) for own in own_prefixes):
            return Target(None, f"{what} ({variable})")
        exe = interpreter_in(prefix)
        if exe:
            return Target(exe, f"{what} ({variable})")
        skipped.append(f"{variable}={prefix} holds no Python")
    venv = project_venv(cwd)
    if venv and not any(_same(venv, own) for own in own_prefixes):
        return Target(interpreter_in(venv), f"the project's .venv ({venv})")
    if venv:
        return Target(None, f"the project's .venv ({venv})")
    return Target(None, OWN + (f" ({'; '.join(skipped)})" if skipped else ""))
