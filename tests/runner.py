"""Run envcheck the way a user does: a real `python -m envcheck` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

# A folder that holds no updated tables (never written: a test that updates makes its own),
# and the day the suite's outputs are dated (2026-12-07, UTC noon).
NO_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "no_updated_tables")
TODAY_EPOCH = "1796644800"


def envcheck(
    *args: str, env: Optional[dict] = None, timeout: float = 300, cwd: Optional[Path] = None
) -> subprocess.CompletedProcess:
    """envcheck with a clean slate: no ENVCHECK_* overrides or colour settings leak in."""
    return subprocess.run(
        [sys.executable, "-m", "envcheck", *args],
        capture_output=True,
        text=True,
        env=user_env(env),
        timeout=timeout,
        cwd=cwd,
    )


def titles_of(python: Path, code: str, cwd: Path) -> List[str]:
    """The titles of ``code``'s findings in `envcheck check --no-deep` of another
    interpreter (a test's venv), run from ``cwd`` (no project of the suite's around)."""
    run = envcheck("check", "--no-deep", "--format", "json", "--python", str(python), cwd=cwd)
    assert run.returncode in (0, 1), run.stderr
    return [f["title"] for f in json.loads(run.stdout)["findings"] if f["code"] == code]


def user_env(env: Optional[dict] = None) -> dict:
    """The environment of a user who runs envcheck from the test interpreter's activated
    environment, plus ``env``: every test that starts envcheck its own way takes it too, so
    that what envcheck describes does not depend on where the suite was started (a .venv in
    the current folder is another environment)."""
    full_env = dict(os.environ)
    for name in list(full_env):
        if name.startswith("ENVCHECK_") or name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
            del full_env[name]
    # As a user runs it: with the test interpreter's environment activated (its bin first
    # on PATH, VIRTUAL_ENV set), so envcheck describes it and a bare `pip` reaches it.
    full_env.pop("CONDA_PREFIX", None)
    full_env.pop("COLUMNS", None)  # the width of the terminal the tests run in is no input
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", "")
    if sys.prefix != sys.base_prefix:
        full_env["VIRTUAL_ENV"] = sys.prefix
    else:
        full_env.pop("VIRTUAL_ENV", None)
    # No updated tables of the user's cache folder, and one date for the tables' age: what
    # envcheck prints does not depend on what this machine fetched or on the day it runs.
    full_env["ENVCHECK_CACHE_DIR"] = NO_CACHE
    full_env["SOURCE_DATE_EPOCH"] = TODAY_EPOCH
    full_env.update(env or {})
    return full_env
