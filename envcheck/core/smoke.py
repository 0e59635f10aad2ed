"""Smoke results in the core: where the tests run (:func:`smoke_targets`), the busbw their
links allow (:func:`with_expected`), and the findings they become (:func:`smoke_findings`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .._record import record
from ..facts import Facts, RuntimeStatus
from ..findings import Finding
from ..rules import RULES
from ..values import SmokeStatus
from ..verdict import Verdict, decide

if TYPE_CHECKING:  # without importing these at run time: the static check stays fast
    from ..facts import TorchRuntimeFacts
    from ..smoke.runner import SmokeResult
    from ..tables import Tables


def smoke_findings(results: Sequence[SmokeResult]) -> List[Finding]:
    """SMK001 for a failed test (SMK003 for torch.compile), SMK002 for one that hung, SMK004
    for an all_reduce well below what its links allow (``with_expected`` put that in)."""
    out = []
    for r in results:
        if r.status == SmokeStatus.PASSED and r.name == "all_reduce":
            out += _busbw_findings(r)
        if r.status == SmokeStatus.FAILED and r.name == "compile":
            out.append(
                RULES["SMK003"](
                    f"torch.compile failed on {r.device} in the smoke test",
                    [r.error or ""],
                    "The toolchain finding it follows from (a compiler, Python.h, libcuda.so, "
                    "Triton, a cache folder) names the cause; with none, the error above is "
                    'Inductor\'s own: `backend="aot_eager"` works around it while it is reported.',
                )
            )
        elif r.status == SmokeStatus.FAILED:
            out.append(
                RULES["SMK001"](
                    f"smoke test {r.name} on {r.device} failed",
                    [r.error or ""],
                    "See the error; a kernel or library problem shows here first.",
                )
            )
        elif r.status == SmokeStatus.TIMED_OUT:
            out.append(
                RULES["SMK002"](
                    f"smoke test {r.name} on {r.device} hung",
                    [r.error or ""],
                    "Try: " + "; ".join(r.hints),
                )
            )
    return out


# SMK004's threshold: NCCL's ring reaches about 75-90% of the link on a healthy machine
# (nccl-tests' published NVLink and PCIe figures), and about a third of it when P2P is off and
# it copies through host memory; half the link separates the two with room for noise.
BUSBW_WARN_FRACTION = 0.5
# Below this size latency, not the link, sets busbw: a sweep stopped earlier is not judged.
BUSBW_JUDGED_BYTES = 64 * 2**20


def with_expected(
    result: SmokeResult, facts: Optional[Facts], tables: Optional[Tables] = None
) -> SmokeResult:
    """An all_reduce result with the busbw its topology should allow: ``expected_busbw_gbps``
    and ``expected_basis``, or ``expected_unknown`` (why there is no figure) in its figures."""
    f = result.figures
    if result.name != "all_reduce" or facts is None or not f.get("backend"):
        return result
    from .._record import replace
    from ..smoke.expected import expected_busbw

    try:
        table = tables.links if tables is not None else None
        exp = expected_busbw(facts, str(f["backend"]), int(f.get("world_size", 0)), table)
    except (ValueError, TypeError) as exc:  # a link table that does not validate: said
        exp_figures: Dict[str, Any] = {"expected_unknown": str(exc)}
    else:
        exp_figures = (
            {"expected_busbw_gbps": exp.busbw_gbps, "expected_basis": exp.basis}
            if exp.known
            else {"expected_unknown": exp.basis}
        )
    return replace(result, figures={**f, **exp_figures})


def _busbw_findings(r: SmokeResult) -> List[Finding]:
    f = r.figures
    expected, sizes = f.get("expected_busbw_gbps"), f.get("sizes") or []
    if not expected or not sizes or sizes[-1].get("bytes", 0) < BUSBW_JUDGED_BYTES:
        return []
    last = sizes[-1]
    measured = float(last["busbw_gbps"])
    if measured >= BUSBW_WARN_FRACTION * expected:
        return []
    return [
        RULES["SMK004"](
            f"all_reduce over {r.device} reached {measured:g} GB/s bus bandwidth at "
            f"{last['bytes'] / 2**20:g} MiB, {measured / expected:.0%} of the "
            f"{expected:g} GB/s its links allow",
            [
                f"expected {expected:g} GB/s: {f.get('expected_basis', '')}",
                f"measured busbw {measured:g} GB/s (algbw {last.get('algbw_gbps')} GB/s, "
                f"{last.get('time_us')} us) at {last['bytes']} bytes",
            ],
            "Likely causes: peer-to-peer disabled or blocked (PCIe ACS redirecting P2P through "
            "the root complex, an IOMMU translating it: `iommu=pt`, ACS off on the switches), "
            "a GPU link running below its width or speed (reseat the card, check the slot), or "
            "traffic crossing the host bridge or CPUs instead of a switch or NVLink. "
            "`nvidia-smi topo -m` and `nvidia-smi topo -p2p r` show the paths; rerun with "
            "NCCL_DEBUG=INFO to see the transport NCCL chose (P2P, SHM or NET).",
        )
    ]


@record(frozen=True)
class SmokeTargets:
    """Where the smoke tests run, and, when the machine has GPUs they do not run on, why:
    a pass on the CPU says nothing about a GPU that is there (``envcheck smoke --strict``
    fails on it)."""

    devices: Tuple[str, ...]
    gpus_not_exercised: Optional[str] = None  # None: no GPU here, or every test uses them

    def verdict(self, results: Sequence[SmokeResult], strict: bool = False) -> Verdict:
        """The smoke verdict (envcheck.verdict): every test passed and, with ``strict``, the
        GPUs were used."""
        return decide(
            failures=[r for r in results if r.failed],
            strict=strict,
            doubts=[self.gpus_not_exercised] if self.gpus_not_exercised else [],
        )

    def passed(self, results: Sequence[SmokeResult], strict: bool = False) -> bool:
        """Whether :meth:`verdict` is READY."""
        return self.verdict(results, strict) is Verdict.READY


def smoke_targets(facts: Optional[Facts], timeout: float) -> SmokeTargets:
    """The CUDA devices torch sees (from the deep probe, run now if it has not), else the CPU
    with the reason the machine's GPUs (``facts``: NVML and KFD, no torch) are left out.

    The smoke tests run in envcheck's own interpreter, which has envcheck's worker. Where the
    static facts show that interpreter's torch is a CPU build (torch/version.py names no CUDA
    and no HIP), torch can offer no GPU, and the deep probe, an import of torch as costly as
    the whole CPU suite's other work, is not run to learn that."""
    rt = facts.torch_runtime if facts is not None else None
    if (
        rt is None
        or rt.status != RuntimeStatus.OK
        or facts is None
        or facts.python.executable != sys.executable
    ):
        build = _cpu_build(facts)
        if build is not None:
            return SmokeTargets(
                ("cpu",), _gpus_not_exercised(facts, f"torch {build} is a CPU build")
            )
        from ..probes.torch_deep import probe_torch_deep

        rt = probe_torch_deep(sys.executable, timeout=timeout)
    if rt.status == RuntimeStatus.OK and rt.cuda_available and rt.device_count:
        return SmokeTargets(tuple(f"cuda:{i}" for i in range(rt.device_count)))
    return SmokeTargets(("cpu",), _gpus_not_exercised(facts, _why_no_gpu(rt)))


def _cpu_build(facts: Optional[Facts]) -> Optional[str]:
    """The version of envcheck's own torch when its files say it is a CPU build: a version
    whose label and torch/version.py agree on no CUDA, no HIP (and no XPU); else None (not
    known without importing it: a CUDA or ROCm build, files of two installs mixed, another
    interpreter's facts, torch facts set by ENVCHECK_FACT_TORCH_* to simulate a machine)."""
    if facts is None or facts.python.executable != sys.executable or not facts.torch.installed:
        return None
    if any(name.startswith("torch.") for name in facts.overrides):
        return None
    torch = facts.torch
    if torch.cuda or torch.hip or torch.xpu or torch.dist_version != torch.version:
        return None
    variant = torch.variant
    return torch.version if variant is not None and variant.kind == "cpu" else None


def smoke_devices(facts: Optional[Facts], timeout: float) -> List[str]:
    """The devices the smoke tests run on (smoke_targets)."""
    return list(smoke_targets(facts, timeout).devices)


def _why_no_gpu(rt: TorchRuntimeFacts) -> str:
    """Why torch (``rt``, envcheck's interpreter) offers no GPU to the smoke tests."""
    if rt.status != RuntimeStatus.OK:
        first = (rt.error or rt.status or "").splitlines()[0] if (rt.error or rt.status) else ""
        return f"torch did not load ({first})"
    if not rt.cuda and not rt.hip:
        return f"torch {rt.version} is a CPU build"
    if not rt.cuda_available:
        return "torch.cuda.is_available() is False"
    return "torch sees no GPU (device_count is 0)"


def _gpus_not_exercised(facts: Optional[Facts], why: str) -> Optional[str]:
    """Why the GPUs in ``facts`` are not tested (``why`` torch offers none); None when
    there is no GPU to miss."""
    if facts is None:
        return None
    names = [g.name or "NVIDIA GPU" for g in facts.nvidia.gpus]
    names += [g.gfx or "AMD GPU" for g in facts.amd.gpus]
    if not names:
        return None
    gpus = f"{len(names)}x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    return (
        f"the GPU here ({gpus}) was not exercised: {why}, so the tests ran on the CPU; "
        "`envcheck check` says what to install"
    )


def run_smoke(
    facts: Facts, timeout: float, tests: Sequence[str], progress: Optional[Callable[..., None]]
) -> List[SmokeResult]:
    from ..smoke.runner import DEFAULT_TESTS, run_suite

    """Run the smoke ``tests`` (default: the suite) on the devices torch offers here."""
    chosen = tuple(tests) if tests else DEFAULT_TESTS
    devices = smoke_devices(facts, timeout)
    return run_suite(devices, timeout=timeout, progress=progress, tests=chosen)


__all__ = [
    "BUSBW_JUDGED_BYTES",
    "BUSBW_WARN_FRACTION",
    "SmokeTargets",
    "run_smoke",
    "smoke_devices",
    "smoke_findings",
    "smoke_targets",
    "with_expected",
]
