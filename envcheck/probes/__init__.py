"""Probe this machine into a :class:`~envcheck.facts.Facts` record.

The order is chosen for speed: the target interpreter is described first (it
says where torch is), the deep probe's child is started at once, and the
static probes (system, NVIDIA, torch files, toolkit) run while the child spends
its second importing torch. Each step is guarded: an unexpected exception in
one step is recorded in ``Facts.probe_errors`` and the others still run.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from .._version import __version__
from .timeouts import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, Optional, TypeVar

    from ..facts import Facts, TorchRuntimeFacts
    from ..tables import Tables
    from .torch_deep import DeepProbe

    T = TypeVar("T")

# The probe modules are imported when probe() runs, not with this package: the
# healthcheck imports probes.nvidia alone and must not pay for the others (timeouts
# holds one number).

__all__ = ["InterpreterError", "OverrideError", "probe"]


def __getattr__(name: str) -> Any:
    if name == "OverrideError":
        from .overrides import OverrideError

        return OverrideError
    if name == "InterpreterError":
        from .python_env import InterpreterError

        return InterpreterError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def probe(
    *,
    deep: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    python: Optional[str] = None,
    show_ids: bool = False,
    environ: Optional[Dict[str, str]] = None,
    root: Optional[Path] = None,
    nvml: Optional[ModuleType] = None,
    chosen_because: Optional[str] = None,
    imported_torch: Optional[ModuleType] = None,
    progress: bool = False,
    tables: Optional[Tables] = None,
) -> Facts:
    """Observe this machine.

    deep: also import torch in a child process (bounded by ``timeout`` seconds).
    python: the interpreter whose environment to describe (default: this one).
    chosen_because: why that interpreter (envcheck.target), recorded in Facts.
    imported_torch: the torch this process has already imported (require() in a training
    script): its deep facts, with no child and no second import (only with ``python`` None).
    progress: show on a terminal's stderr that the deep probe is waiting for torch.
    show_ids: keep GPU UUIDs and the host name instead of redacting them.
    environ, root, nvml: the environment, filesystem root and NVML binding to read (tests
    and offline simulation; defaults are the real ones).
    tables: those the facts will be judged with: the packages and records to keep (_watched).

    Raises OverrideError (a malformed ENVCHECK_* override), InterpreterError (``python`` cannot
    be run), ValueError (a bad ``timeout``: _seconds); every other failure is recorded in Facts."""
    _seconds(timeout)
    # Only what starts the torch child is imported first; the rest loads while it imports torch
    from .overrides import apply_overrides, parse_overrides
    from .python_env import snapshot

    env = dict(os.environ) if environ is None else dict(environ)
    overrides = parse_overrides(env)  # fail on a bad override before any work
    snap = snapshot(python)
    target = snap.get("executable") or python or sys.executable

    deep_probe: Optional[DeepProbe] = None
    in_process = deep and imported_torch is not None and python is None
    if deep and snap.get("torch_origin") and not in_process:
        from .torch_deep import DeepProbe

        deep_probe = DeepProbe(target, timeout=timeout, env=env)

    guarded = _Guarded(_new_facts())
    facts = guarded.facts
    _static_steps(guarded, snap, env, _root(root), nvml, show_ids, tables)
    facts.python.chosen_because = chosen_because
    if in_process:
        from .torch_deep import describe_imported

        facts.torch_runtime = guarded(
            "torch_runtime", lambda: describe_imported(imported_torch), facts.torch_runtime
        )
    else:
        facts.torch_runtime = _runtime(guarded, deep, deep_probe, progress)
    apply_overrides(facts, overrides)
    return facts


def _new_facts() -> Facts:
    import datetime  # here, not at the top: the healthcheck imports this package, not probe()

    from ..facts import Facts

    return Facts(
        envcheck_version=__version__,
        collected_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        source="probe",
    )


class _Guarded:
    """Runs one probe step; an unexpected exception is recorded in ``probe_errors`` and
    the step's default kept, so a probe bug never hides the other facts."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def __call__(self, step: str, fn: Callable[[], T], default: T) -> T:
        from ..facts import ProbeError

        try:
            return fn()
        except Exception as exc:  # a probe bug must not hide the other facts
            self.facts.probe_errors.append(ProbeError(step, f"{type(exc).__name__}: {exc}"))
            return default


def _root(root: Optional[Path]) -> Path:
    from pathlib import Path  # here: the healthcheck imports this package, never pathlib

    return Path("/") if root is None else Path(root)


def _static_steps(
    guarded: _Guarded,
    snap: Dict[str, Any],
    env: Dict[str, str],
    root: Path,
    nvml: Optional[ModuleType],
    show_ids: bool,
    tables: Optional[Tables],
) -> None:
    """The probes that read files and libraries (no torch import): they run while the
    deep probe's child imports torch."""
    from .amd import probe_amd
    from .environ import probe_environ
    from .nvidia import probe_nvidia
    from .python_env import probe_python
    from .system import probe_system
    from .toolkit import probe_toolkit
    from .torch_static import probe_torch_static

    facts = guarded.facts
    facts.python = guarded("python", lambda: probe_python(snap, env), facts.python)
    disk_paths = [p for p in (_cwd(), facts.python.prefix or sys.prefix) if p]
    facts.system = guarded(
        "system",
        lambda: probe_system(root, env, disk_paths, show_hostname=show_ids),
        facts.system,
    )
    facts.nvidia = guarded(
        "nvidia", lambda: probe_nvidia(root, nvml, show_ids=show_ids), facts.nvidia
    )
    facts.amd = guarded("amd", lambda: probe_amd(root), facts.amd)
    none: Dict[str, Optional[str]] = {}  # tables that do not load: keep what METADATA says
    watched = guarded("package_builds", lambda: _watched(env, tables), none)
    facts.torch = guarded(
        "torch",
        lambda: probe_torch_static(
            snap.get("sys_path", []), snap.get("torch_origin"), snap.get("prefix"), watched
        ),
        facts.torch,
    )
    facts.toolkit = guarded("toolkit", lambda: probe_toolkit(env), facts.toolkit)
    facts.environment = guarded("environment", lambda: probe_environ(env, show_ids), {})


def _watched(env: Dict[str, str], tables: Optional[Tables] = None) -> Dict[str, Optional[str]]:
    """The packages package_builds.json knows as built for one torch or a range of it, each
    with the build-record file it ships (None: none): the static probe keeps them and reads
    those. From the tables the facts will be judged with, where given: a table read here
    and another judged with would keep one package and judge another by a record not read."""
    from ..tables.load import load_package_builds, tables_dir_from_env

    if tables is not None:
        builds = tables.package_builds
    else:
        builds = load_package_builds(tables_dir_from_env(env))
    out: Dict[str, Optional[str]] = {n: None for r in builds.torch_ranges for n in r.names}
    out.update({n: b.record.file if b.record else None for b in builds.labels for n in b.names})
    return out


def _seconds(timeout: float) -> None:
    """Refuse a deadline that is no number of seconds above 0: NaN or infinity left the deep
    probe not run while the report said nothing of it."""
    if not 0 < timeout < float("inf"):  # also NaN
        raise ValueError(f"timeout must be a finite number of seconds above 0, not {timeout!r}")


def _runtime(
    guarded: _Guarded, deep: bool, deep_probe: Optional[DeepProbe], progress: bool
) -> TorchRuntimeFacts:
    """The deep probe's result: waited for (shown on a terminal when ``progress``), or
    not_installed / skipped when no child was started."""
    from ..facts import RuntimeStatus, TorchRuntimeFacts

    current = guarded.facts.torch_runtime
    if deep_probe is None:
        return TorchRuntimeFacts(
            status=RuntimeStatus.NOT_INSTALLED if deep else RuntimeStatus.SKIPPED
        )
    if not progress:
        return guarded("torch_runtime", deep_probe.result, current)
    from .._progress import Ticker

    with Ticker("importing torch in a child process"):
        return guarded("torch_runtime", deep_probe.result, current)


def _cwd() -> Optional[str]:
    """The current folder, or None when it was deleted under us (its disk is then not
    a place the job will write to)."""
    from .._cwd import current

    return current()
