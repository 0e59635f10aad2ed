"""`envcheck healthcheck`: a Docker HEALTHCHECK / Kubernetes exec probe.

Runs every few seconds for the life of a container, so it is small and bounded:
NVML only (no torch unless --deep), every probe under a timeout so a wedged
driver makes the check fail instead of hang, one short output line, and exit
0 (healthy) or 1 (unhealthy) only: Docker reserves 2, so even a bad option is 1.

Unhealthy when: fewer GPUs are visible than expected (--gpus N, else the count
in NVIDIA_VISIBLE_DEVICES), a GPU is lost or NVML says "Unknown Error" (the
container lost its devices), uncorrectable ECC errors appeared since the first
run (a small state file keeps the baseline), a GPU is at its slowdown
temperature, or (with --deep) a tiny matmul in a child process fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Dict, List, Mapping, Optional, Tuple

HEALTHY, UNHEALTHY = 0, 1


def expected_gpus(environ: Mapping[str, str]) -> Optional[int]:
    """The GPUs the container was given, when NVIDIA_VISIBLE_DEVICES lists them."""
    value = environ.get("NVIDIA_VISIBLE_DEVICES", "").strip()
    if value in ("none", "void"):
        return 0
    if not value or value == "all":
        return None
    return len([v for v in value.split(",") if v.strip()])


def default_state_file() -> str:
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(base, f"envcheck-health-{uid}.json")


def _ecc_baseline(path: str, current: Dict[str, int]) -> Dict[str, int]:
    """The counts at the first run; written then, read afterwards. Never raises."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if isinstance(data, dict):
            return {str(k): int(v) for k, v in data.items()}
    except (OSError, ValueError, TypeError):
        pass
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(current, fh)
    except OSError:
        pass
    return dict(current)


def check(
    gpus: Optional[int] = None,
    deep: bool = False,
    timeout: float = 10.0,
    state: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    root: Path = Path("/"),
    nvml: Optional[ModuleType] = None,
) -> Tuple[int, str]:
    """(exit code, one line)."""
    from .probes.nvidia import probe_nvidia

    env = os.environ if environ is None else environ
    expected = gpus if gpus is not None else expected_gpus(env)
    nv = probe_nvidia(root, nvml, timeout=timeout)
    if not nv.nvml.ok:
        if (
            expected in (None, 0)
            and not nv.device_nodes
            and nv.nvml.error in ("library_not_found", "driver_not_loaded")
        ):
            failures = _deep([], timeout) if deep else []
            if failures:
                return UNHEALTHY, "unhealthy: " + "; ".join(failures)
            suffix = ", matmul ok" if deep else ""
            return HEALTHY, "healthy: no NVIDIA GPU here, none expected" + suffix
        return UNHEALTHY, f"unhealthy: NVML {nv.nvml.error}: {nv.nvml.message}"
    problems: List[str] = []
    if expected is not None and len(nv.gpus) < expected:
        problems.append(f"{len(nv.gpus)} of {expected} GPUs visible")
    for gpu in nv.gpus:
        if gpu.status == "lost":
            problems.append(f"GPU {gpu.index} is lost")
        elif gpu.status == "error":
            problems.append(f"GPU {gpu.index}: " + "; ".join(gpu.errors.values()))
    counts = {(g.pci_bus_id or str(g.index)): g.ecc_uncorrected_volatile or 0 for g in nv.gpus}
    baseline = _ecc_baseline(state or default_state_file(), counts)
    for gpu in nv.gpus:
        key = gpu.pci_bus_id or str(gpu.index)
        new = counts[key] - baseline.get(key, counts[key])
        if new > 0:
            problems.append(f"GPU {gpu.index}: {new} new uncorrectable ECC errors")
        if (
            gpu.temperature_c is not None
            and gpu.temperature_slowdown_c
            and gpu.temperature_c >= gpu.temperature_slowdown_c
        ):
            problems.append(
                f"GPU {gpu.index} at {gpu.temperature_c} C (slowdown {gpu.temperature_slowdown_c} C)"
            )
    if not problems and deep:
        problems += _deep(nv.gpus, timeout)
    if problems:
        return UNHEALTHY, "unhealthy: " + "; ".join(problems)
    temps = [g.temperature_c for g in nv.gpus if g.temperature_c is not None]
    heat = f", {min(temps)}-{max(temps)} C" if temps else ""
    return HEALTHY, f"healthy: {len(nv.gpus)} GPU(s){heat}" + (", matmul ok" if deep else "")


def _deep(gpus, timeout: float) -> List[str]:
    """A tiny matmul in a child, judged by the core like every smoke result."""
    from .core import check as core_check
    from .facts import Facts
    from .smoke.runner import run_one

    device = "cuda:0" if gpus else "cpu"
    result = run_one("health", device, timeout)
    report = core_check(facts=Facts(), smoke=[result], requirements=False, observed=())
    return [
        f"matmul on {device} {result.status}: {(result.error or '').splitlines()[0] if result.error else ''}"
        for f in report.findings
        if f.code in ("SMK001", "SMK002")
    ]


class _BadOption(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """One line for a bad option, not argparse's usage block and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _BadOption(message)


def main(argv: Optional[List[str]] = None) -> int:
    parser = _Parser(prog="envcheck healthcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, default=None, help="GPUs that must be visible")
    parser.add_argument(
        "--deep", action="store_true", help="also run a tiny matmul in a child process"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds each probe may take")
    parser.add_argument("--state", default=None, help="file for the ECC baseline")
    try:
        args = parser.parse_args(argv)
    except _BadOption as exc:  # argparse would exit 2, which Docker reserves
        print(f"unhealthy: {exc}")
        return UNHEALTHY
    except SystemExit as exc:  # --help
        return HEALTHY if exc.code in (0, None) else UNHEALTHY
    try:
        code, line = check(args.gpus, args.deep, args.timeout, args.state)
    except Exception as exc:  # a bug must read as unhealthy, never as a traceback
        code, line = UNHEALTHY, f"unhealthy: envcheck failed: {type(exc).__name__}: {exc}"
    print(line)
    return code


if __name__ == "__main__":
    sys.exit(main())
