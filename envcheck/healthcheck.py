"""`envcheck healthcheck`: a Docker HEALTHCHECK / Kubernetes exec probe.

Runs every few seconds for the life of a container, so it is small and bounded:
NVML only (no torch unless --deep), every probe under a timeout so a wedged
driver makes the check fail instead of hang, one short output line, and exit
0 (healthy) or 1 (unhealthy) only: Docker reserves 2, so even a bad option is 1.

A GPU's health (lost, uncorrectable ECC errors) is judged by envcheck.checks.health, the
checks `envcheck check` reports (GPU001, GPU002), not again here.

Unhealthy when: fewer GPUs are visible than expected (--gpus N, else the count
in NVIDIA_VISIBLE_DEVICES), a GPU is lost or NVML reports a fault on it
("Unknown Error": the container lost its devices; a reset required; ...), a GPU
has had uncorrectable ECC errors since the driver loaded, a GPU is at its
slowdown temperature, or (with --deep) a tiny matmul in a child process fails.

A query NVML refuses or does not support on this GPU or driver (NoPermission,
NotSupported, FunctionNotFound on persistence mode, the temperature threshold,
...) is noted in the line, not fatal: `envcheck check` calls it a warning
(GPU007), and it says nothing about the GPU's health. Failing to get a GPU's
handle at all, or any other NVML error code, is a fault.

Cheap where it runs most: on a machine or container without a driver (no /dev/nvidia*,
NVML does not start) NVML's plain answer (envcheck.probes.nvml_child) decides, and the
facts model, the value types, pathlib and typing are never loaded (no module this path
imports uses typing at run time: ``TYPE_CHECKING = False`` stands in for typing's). Where
there are device nodes the model is loaded before NVML's child is forked, so the child,
which describes the GPUs with it, inherits it.

No state, by design. Earlier versions kept the ECC counts of the first run in a
file (``$XDG_RUNTIME_DIR``/``$TMPDIR``/``/tmp``/envcheck-health-<uid>.json) and
reported only errors "since the first run". That baseline was both dangerous
and wrong:

- the counter read is NVML's volatile one (``NVML_VOLATILE_ECC``), which the
  driver resets when it loads (or the GPU is reset). A count above 0 already
  means "uncorrectable errors since the driver loaded": the GPU needs draining
  and a reset, which is what `envcheck check` says (GPU002, an error). No
  baseline is needed to tell old from new: the driver keeps it;
- a baseline lived in the container's own filesystem, so when an orchestrator
  replaced an unhealthy container the new one took the errors as its baseline
  and reported healthy on the same bad GPU; a container started on a GPU that
  already had errors never reported them;
- a file at a predictable name in a shared, sticky directory can be planted by
  another user: a symlink made root overwrite its target, a baseline with huge
  counts hid new errors, and an unwritable location silently stopped ECC
  detection.

So the healthcheck writes and reads no file. Any volatile uncorrectable ECC
error is unhealthy until the GPU is reset or the driver reloaded: for a probe
whose answer decides whether a container should be replaced, that persistence
is the point (a container on that GPU should not be trusted). ``--state`` is
still accepted, and ignored, so existing HEALTHCHECK lines keep parsing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from types import ModuleType

from .probes import nvml_child
from .verdict import Verdict, decide

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:  # the facts model is loaded only where there is a GPU to judge (below)
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

    from .facts import Facts, GpuFacts, NvidiaFacts
    from .probes._files import Root
    from .probes.overrides import Override

HEALTHY, UNHEALTHY = 0, 1

# NVML codes that refuse a query (permissions, an older driver, a GPU without the
# feature) rather than report on the GPU: noted on a secondary query, never fatal.
REFUSED = frozenset(
    {
        "no_permission",
        "not_supported",
        "function_not_found",
        "argument_version_mismatch",
        "deprecated",
    }
)
# Without a handle there is no GPU to check: any failure to get one is a fault.
ESSENTIAL_QUERIES = frozenset({"handle"})
MAX_TIMEOUT = 24 * 3600.0  # a probe bounded by more than a day is not bounded
OVERRIDES = "ENVCHECK_"  # what every override variable starts with (probes.overrides)
DEFAULT_TIMEOUT = 10.0  # seconds for each probe (the click option's default too)


def expected_gpus(environ: Mapping[str, str]) -> Optional[int]:
    """The GPUs the container was given, when NVIDIA_VISIBLE_DEVICES lists them."""
    value = environ.get("NVIDIA_VISIBLE_DEVICES", "").strip()
    if value in ("none", "void"):
        return 0
    if not value or value == "all":
        return None
    return len([v for v in value.split(",") if v.strip()])


def bad_timeout(timeout: float) -> Optional[str]:
    """Why ``timeout`` is no bound on a probe, or None when it is one."""
    if not 0 < timeout <= MAX_TIMEOUT:  # also NaN
        return f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds, not {timeout:g}"
    return None


def bad_gpus(gpus: Optional[int]) -> Optional[str]:
    if gpus is not None and gpus < 0:
        return f"must be 0 or more, not {gpus}"
    return None


def check(
    gpus: Optional[int] = None,
    deep: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    state: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    root: Root = "/",
    nvml: Optional[ModuleType] = None,
) -> Tuple[int, str]:
    """(exit code, one line). ``state`` is ignored: no state is kept (see the module)."""
    del state  # accepted so that callers of the old signature keep working
    for option, why in (("--timeout", bad_timeout(timeout)), ("--gpus", bad_gpus(gpus))):
        if why:
            return UNHEALTHY, f"unhealthy: {option} {why}"
    env = os.environ if environ is None else environ
    overrides, bad = _overrides(env)  # the simulation overrides every command honours
    if bad:
        return UNHEALTHY, f"unhealthy: {bad}"
    expected = gpus if gpus is not None else expected_gpus(env)
    nodes = nvml_child.device_nodes(root)
    answer = _ask(nvml, timeout, load_model=bool(nodes or overrides))
    without = nvml_child.failure(answer)
    if without is not None and not overrides:  # the plain answer decides: no model loaded
        from .probes.container import detect_container

        container = detect_container(root, env) if gpus != 0 else None
        absent = _absent(nodes, without)
        return _without_nvml(absent, without, container, env, gpus, expected, deep, timeout)
    facts, simulated = _observe(env, root, nodes, answer, overrides)
    nv = facts.nvidia
    if not nv.nvml.ok and not simulated:
        status = {"error": nv.nvml.error, "message": nv.nvml.message}
        absent = _absent(nv.device_nodes, status)
        container = facts.system.container
        return _without_nvml(absent, status, container, env, gpus, expected, deep, timeout)
    return _judge(nv, expected, deep, timeout)


def _judge(nv: NvidiaFacts, expected: Optional[int], deep: bool, timeout: float) -> Tuple[int, str]:
    """The verdict on the GPUs NVML answered for."""
    problems, refused = _gpu_problems(nv, expected)
    if not problems and deep:
        problems += _deep(nv.gpus, timeout)
    noted = ""
    if refused:
        noted = "; noted: " + ", ".join(
            f"{query} {code} on GPU {','.join(indices)}"
            for (query, code), indices in refused.items()
        )
    verdict = decide(failures=problems)
    if verdict is not Verdict.READY:
        return verdict.exit_code, "unhealthy: " + "; ".join(problems) + noted
    temps = [g.temperature_c for g in nv.gpus if g.temperature_c is not None]
    low, high = (min(temps), max(temps)) if temps else (None, None)
    heat = "" if low is None else f", {low} C" if low == high else f", {low}-{high} C"
    matmul = ", matmul ok" if deep else ""
    return verdict.exit_code, f"healthy: {len(nv.gpus)} GPU(s){heat}{matmul}{noted}"


def _overrides(env: Mapping[str, str]) -> Tuple[List[Override], Optional[str]]:
    """The ENVCHECK_* overrides of NVML's and the system's facts, or why they are refused;
    parsed only where such a variable is set (the parser's import would be a tenth of a
    healthcheck's own work)."""
    if not any(name.startswith(OVERRIDES) for name in env):
        return [], None
    from .probes.overrides import OverrideError, parse_overrides

    try:
        return [o for o in parse_overrides(env) if o.section in ("nvidia", "system")], None
    except OverrideError as exc:
        return [], str(exc)


def _ask(nvml: Optional[ModuleType], timeout: float, load_model: bool) -> Dict[str, Any]:
    """NVML's plain answer, asked in a child (envcheck.probes.nvml_child). Where there are
    NVIDIA device nodes (or overrides to apply) the facts model is loaded first, so that
    the forked child, which needs it to describe the GPUs, inherits it instead of loading
    it again; elsewhere NVML nearly always fails to start and the model is never needed."""
    query: nvml_child.Query = _query
    if load_model:
        from .probes import nvidia

        query = nvidia.query_nvml
    return nvml_child.ask(nvml, timeout, False, query)


def _query(nvml: Any, names: Dict[int, str], show_ids: bool) -> Dict[str, Any]:
    """The GPUs' query, in the child once NVML has started (envcheck.probes.nvidia's)."""
    from .probes.nvidia import query_nvml

    return query_nvml(nvml, names, show_ids)


def _observe(
    env: Mapping[str, str],
    root: Root,
    nodes: List[str],
    answer: Dict[str, Any],
    overrides: List[Override],
) -> Tuple[Facts, bool]:
    """NVML's facts and the container's, with the overrides applied; and whether NVML is
    simulated."""
    from .facts import Facts
    from .probes.container import detect_container
    from .probes.nvidia import nvidia_facts

    facts = Facts()
    facts.nvidia = nvidia_facts(root, nodes, answer)
    facts.system.container = detect_container(root, env)
    if overrides:
        from .probes.overrides import apply_overrides

        apply_overrides(facts, overrides)
    return facts, any(o.section == "nvidia" and o.name != "nvml" for o in overrides)


def _absent(nodes: Sequence[str], status: Mapping[str, Any]) -> bool:
    """No NVIDIA driver here: no device node, and NVML says there is no library or module."""
    from .nvml_errors import NVML_NO_DRIVER

    return not nodes and status.get("error") in NVML_NO_DRIVER


def _without_nvml(
    absent: bool,
    status: Mapping[str, Any],
    container: Optional[str],
    env: Mapping[str, str],
    gpus: Optional[int],
    expected: Optional[int],
    deep: bool,
    timeout: float,
) -> Tuple[int, str]:
    """NVML did not answer (``status``: its error and message): healthy only where there is
    no driver (``absent``) and no GPU is expected (by ``--gpus``, or by the ``container``)."""
    from .containers import SHORT_FIX, gpus_expected

    container_wants = gpus_expected(env, container) if gpus != 0 else None
    if absent and container_wants and expected != 0:
        return UNHEALTHY, (
            f"unhealthy: a GPU container without GPUs ({container_wants}, no /dev/nvidia*, "
            f"no NVML): {SHORT_FIX}"
        )
    if expected in (None, 0) and absent:
        failures = _deep([], timeout) if deep else []
        verdict = decide(failures=failures)
        if verdict is not Verdict.READY:
            return verdict.exit_code, "unhealthy: " + "; ".join(failures)
        suffix = ", matmul ok" if deep else ""
        return verdict.exit_code, "healthy: no NVIDIA GPU here, none expected" + suffix
    return UNHEALTHY, f"unhealthy: NVML {status.get('error')}: {status.get('message')}"


def _gpu_problems(
    nv: NvidiaFacts, expected: Optional[int]
) -> Tuple[List[str], Dict[Tuple[str, str], List[str]]]:
    """What makes the GPUs unhealthy (too few, lost, an NVML fault, uncorrectable ECC errors,
    at the slowdown temperature), and the queries NVML refused: (query, code) -> indices."""
    problems: List[str] = []
    refused: Dict[Tuple[str, str], List[str]] = {}
    if expected is not None and len(nv.gpus) < expected:
        problems.append(f"{len(nv.gpus)} of {expected} GPUs visible")
    for gpu in nv.gpus:
        judged = _health_codes(gpu)
        if "GPU001" in judged:  # fallen off the bus
            problems.append(f"GPU {gpu.index} is lost")
            continue
        faults = []
        for query, error in gpu.errors.items():
            code = error.split(":", 1)[0].strip()
            if code in REFUSED and query not in ESSENTIAL_QUERIES:
                refused.setdefault((query, code), []).append(str(gpu.index))
            else:
                faults.append(error)
        if faults:
            problems.append(f"GPU {gpu.index}: " + "; ".join(faults))
        if "GPU002" in judged:  # uncorrectable ECC errors since the driver loaded
            problems.append(
                f"GPU {gpu.index}: {gpu.ecc_uncorrected_volatile} uncorrectable ECC errors "
                "since the driver loaded"
            )
        if (
            gpu.temperature_c is not None
            and gpu.temperature_slowdown_c
            and gpu.temperature_c >= gpu.temperature_slowdown_c
        ):
            problems.append(
                f"GPU {gpu.index} at {gpu.temperature_c} C (slowdown {gpu.temperature_slowdown_c} C)"
            )
    return problems, refused


def _health_codes(gpu: GpuFacts) -> Set[str]:
    """The codes envcheck.checks.health (the one judgement of a GPU's health, which `envcheck
    check` reports) finds on this GPU: GPU001 lost, GPU002 uncorrectable ECC errors, ...

    Imported only when there is a GPU to judge; it loads that one check, never the catalogue
    of checks or the tables (a probe that runs every few seconds)."""
    from .checks.health import check as gpu_health
    from .facts import Facts

    one = Facts()
    one.nvidia.gpus = [gpu]
    return {f.code for f in gpu_health(one)}


def _deep(gpus: Sequence[GpuFacts], timeout: float) -> List[str]:
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


# --------------------------------------------------------------------------- command line


def run(gpus: Optional[int] = None, deep: bool = False, timeout: float = DEFAULT_TIMEOUT) -> int:
    """The command's body: the verdict's one line on stdout, and its exit code."""
    try:
        code, line = check(gpus, deep, timeout)
    except Exception as exc:  # a bug must read as unhealthy, never as a traceback
        code, line = UNHEALTHY, f"unhealthy: envcheck failed: {type(exc).__name__}: {exc}"
    say(line)
    return code


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run` for a command line click would read the same way, or None.

    A container runs its healthcheck every few seconds, nearly always as ``envcheck
    healthcheck`` with at most ``--gpus N``, ``--timeout S``, ``--deep`` or ``--state F``;
    importing click to read that costs a fifth of the whole run. So a command line of those
    options, each once, with a value that is plainly valid (digits; a state that is not an
    option) runs without click (envcheck._plain_args). Anything else (``--help``, a bad or
    repeated option, an unusual number such as ``1e3``) returns None, and the click command
    (envcheck.healthcheck_command) reads it and says what is wrong, as before: one parser
    decides."""
    from ._plain_args import decimal, read, whole

    def timeout(text: str) -> Optional[float]:
        value = decimal(text)
        return None if value is None or bad_timeout(value) else value

    options = read(
        args,
        flags={"--deep": ("deep", True)},
        values={
            "--gpus": ("gpus", whole),
            "--timeout": ("timeout", timeout),
            "--state": ("state", str),
        },
    )
    if options is not None:
        options.pop("state", None)  # accepted and ignored (see the module's docstring)
    return options


def flush_stdout() -> None:
    """Flush stdout; a reader that has gone (`envcheck healthcheck | true`) is no error.

    Python's own recipe: point the stdout descriptor at devnull so that the
    flush at exit does not raise again, and let the verdict's exit code stand.
    """
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no descriptor behind stdout
            pass


def say(line: str) -> None:
    # Unbuffered, the write itself fails; buffered, the flush does (and then moves the
    # line still in the buffer to devnull, so the flush at exit does not fail again).
    with contextlib.suppress(BrokenPipeError):
        print(line)
    flush_stdout()
