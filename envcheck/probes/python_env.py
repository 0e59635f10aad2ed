"""The target interpreter and the environment it lives in.

Install advice depends on it: a conda env wants conda-forge or pip-inside-conda
done carefully, a uv venv has no pip, a system Python marked externally managed
(PEP 668) refuses ``pip install`` outright.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any, Callable, Dict, Optional

from .. import _proc
from .._child import interpreter
from ..facts import PythonFacts
from ._files import parse_key_values
from .packages import scan


class InterpreterError(RuntimeError):
    """The interpreter given with --python could not be run or described."""


def snapshot(python: Optional[str] = None, timeout: float = 20.0) -> Dict[str, Any]:
    """Raw facts about ``python`` (default: this interpreter)."""
    # Compare paths, not their targets: every venv's python is a link to the same
    # base interpreter, and the venv is told apart only by where the link lives.
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        # the child script is typed loosely (it runs in interpreters as old as 3.6)
        describe: Callable[[], Dict[str, Any]] = interpreter.snapshot
        return describe()
    try:
        result = _proc.run([python, interpreter.__file__], timeout=timeout)
    except OSError as exc:
        raise InterpreterError(f"cannot run {python}: {exc.strerror or exc}") from None
    if not result.ok:
        raise InterpreterError(_why_not(python, result, timeout))
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise InterpreterError(f"{python} printed something that is not JSON") from None
    if not isinstance(data, dict):
        raise InterpreterError(f"{python} printed something that is not a JSON object")
    return data


# Works on any Python, 2.x included: what to say when the snapshot script cannot run there.
_VERSION = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"


def _why_not(python: str, result: _proc.ChildResult, timeout: float) -> str:
    """One line on why ``python`` could not describe itself: too old a Python, a hang,
    or the last line it wrote (never its whole traceback)."""
    if result.timed_out:
        return f"{python} could not describe itself: no answer within {timeout:g} s"
    version = _proc.run([python, "-c", _VERSION], timeout=min(timeout, 10.0))
    if version.ok and version.stdout.strip()[:2] in ("1.", "2."):
        return (
            f"{python} is Python {version.stdout.strip()}: "
            "torch and envcheck need Python 3 (point --python at a Python 3 interpreter)"
        )
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    last = lines[-1].strip()[:300] if lines else f"exit code {result.returncode}"
    return f"{python} could not describe itself: {last}"


def probe_python(snap: Dict[str, Any], environ: Optional[Dict[str, str]] = None) -> PythonFacts:
    env = dict(os.environ) if environ is None else environ
    prefix = snap.get("prefix") or ""
    facts = PythonFacts(
        version=snap.get("version", ""),
        implementation=snap.get("implementation", ""),
        executable=snap.get("executable", ""),
        bits=snap.get("bits"),
        platform_tag=snap.get("platform_tag"),
        prefix=prefix or None,
    )
    _environment_kind(facts, prefix, snap.get("base_prefix") or prefix, env)
    stdlib = snap.get("stdlib")
    facts.externally_managed = bool(
        facts.env_kind == "none"
        and stdlib
        and os.path.exists(os.path.join(stdlib, "EXTERNALLY-MANAGED"))
    )
    pips = scan(snap.get("sys_path", []), lambda n: n == "pip")
    facts.pip_version = pips[0].version if pips else None
    facts.on_path = first_on_path(facts.executable, env)
    include = snap.get("include")
    if isinstance(include, str) and include:
        facts.include_dir = include
        facts.python_h = os.path.isfile(os.path.join(include, "Python.h"))
    return facts


def first_on_path(executable: str, env: Dict[str, str]) -> Optional[bool]:
    """Whether ``executable`` is the ``python`` (or ``python3``) a shell finds first, by
    folder: a bare ``pip install`` then reaches it. None when there is no PATH to read."""
    if not executable or "PATH" not in env:
        return None
    folder = os.path.dirname(os.path.abspath(executable))
    for name in ("python", "python3"):
        found = shutil.which(name, path=env["PATH"])
        if found:
            return os.path.normcase(os.path.dirname(os.path.abspath(found))) == os.path.normcase(
                folder
            )
    return False


def _environment_kind(facts: PythonFacts, prefix: str, base: str, env: Dict[str, str]) -> None:
    cfg_path = os.path.join(prefix, "pyvenv.cfg")
    if prefix and os.path.isfile(cfg_path):
        try:
            with open(cfg_path, encoding="utf-8", errors="replace") as fh:
                cfg = parse_key_values(fh.read(16 * 1024))
        except OSError:
            cfg = {}
        keys = {k.strip().lower() for k in cfg}
        facts.env_kind = "uv" if "uv" in keys else "virtualenv" if "virtualenv" in keys else "venv"
        facts.env_name = os.path.basename(prefix.rstrip(os.sep)) or None
        return
    if prefix and os.path.isdir(os.path.join(prefix, "conda-meta")):
        facts.env_kind = "conda"
        active = env.get("CONDA_PREFIX")
        if active and os.path.realpath(active) == os.path.realpath(prefix):
            facts.env_name = env.get("CONDA_DEFAULT_ENV") or os.path.basename(prefix)
        else:
            facts.env_name = os.path.basename(prefix.rstrip(os.sep)) or None
        facts.env_tool = _conda_tool(env)
        return
    if prefix != base:  # a venv without pyvenv.cfg (very old virtualenv)
        facts.env_kind = "virtualenv"
        facts.env_name = os.path.basename(prefix.rstrip(os.sep)) or None


def _conda_tool(env: Dict[str, str]) -> str:
    """conda, mamba or micromamba: whichever executable the shell was set up with."""
    for var in ("MAMBA_EXE", "CONDA_EXE"):
        exe = os.path.basename(env.get(var, "")).lower()
        for tool in ("micromamba", "mamba", "conda"):
            if exe.startswith(tool):
                return tool
    return "conda"
