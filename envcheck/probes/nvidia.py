"""NVIDIA driver and GPUs: kernel module files first, then NVML.

The driver version is read from ``/sys/module/nvidia/version`` or
``/proc/driver/nvidia/version`` when they exist: no library needed, and they
still answer when NVML itself is broken (the "Driver/library version mismatch"
after an upgrade without a reboot). NVML (``pynvml`` from nvidia-ml-py) then
gives the CUDA version the driver supports and every GPU.

NVML calls are C calls into the driver library, which can block on a wedged
GPU, and which can crash (a segfault in libnvidia-ml) or end the process (a
library that calls ``exit()``). So they never run in envcheck's own process: a
child asks NVML and prints its answer (``envcheck._proc``: a process group of
its own, a timeout, a watchdog, bounded output). On POSIX the child is a fork
of envcheck, which costs a ``fork()`` where a fresh interpreter would import
Python, envcheck and the binding again (see ``_proc._Forked`` for why a fork
is safe enough here); where there is no ``fork()`` it is a fresh interpreter
running the same function.

What the child did not answer becomes NVML's error, so that the check and the
healthcheck say it instead of reading it as "no GPU": ``timeout`` (a hang),
``crashed`` (a signal ended it: "libnvidia-ml crashed (SIGSEGV) in nvmlInit",
naming the NVML call it was in) and ``no_answer`` (it exited without an
answer). Every failure NVML reports itself is recorded under its NVML code
name (``library_not_found``, ``lib_rm_version_mismatch``, ...) with NVML's own
message; a query a GPU does not support is simply left None.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _proc
from ..facts import (
    FactsError,
    GpuFacts,
    GpuPairFacts,
    GpuStatus,
    NvidiaFacts,
    NvmlStatus,
    convert,
)
from ..facts_codec import to_plain
from ..values import ComputeCapability
from . import topology
from ._files import read_first_line, read_text

_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)*)")


def probe_nvidia(
    root: Path = Path("/"),
    nvml: Optional[ModuleType] = None,
    timeout: float = 10.0,
    show_ids: bool = False,
) -> NvidiaFacts:
    """Probe the driver and GPUs; ``nvml`` replaces ``pynvml`` (tests pass a fake)."""
    facts = NvidiaFacts()
    dev = root / "dev"
    try:
        facts.device_nodes = sorted(
            f"/dev/{p.name}" for p in dev.iterdir() if p.name.startswith("nvidia")
        )
    except OSError:
        facts.device_nodes = []
    _kernel_module(root, facts)

    if nvml is None and _FORK:  # imported before the fork: the child imports nothing
        try:
            import pynvml as nvml  # type: ignore[no-redef]  # the real module; tests pass a fake
        except Exception as exc:  # not installed, or a broken install
            facts.nvml = NvmlStatus(ok=False, error="bindings_missing", message=str(exc))
            return facts

    answer = _ask_nvml(nvml, timeout, show_ids)
    facts.nvml = answer.nvml
    facts.gpus = answer.gpus
    facts.pairs = answer.pairs
    if facts.gpus:  # the link, NUMA node, IOMMU and ACS that NVML does not report
        from .pcie import probe_pcie

        for gpu in facts.gpus:
            gpu.pcie = probe_pcie(root, gpu.pci_bus_id)
    facts.cuda_driver_version = answer.cuda_driver_version
    if facts.driver_version is None and answer.driver_version:
        facts.driver_version, facts.driver_version_source = answer.driver_version, "nvml"
    return facts


def _kernel_module(root: Path, facts: NvidiaFacts) -> None:
    version = read_first_line(root, "/sys/module/nvidia/version")
    if version:
        facts.driver_version, facts.driver_version_source = version, "sysfs"
    proc = read_text(root, "/proc/driver/nvidia/version")
    if proc:
        facts.kernel_module = "open" if "Open Kernel Module" in proc else "proprietary"
        match = _PROC_VERSION.search(proc)
        if match and facts.driver_version is None:
            facts.driver_version, facts.driver_version_source = match.group(1), "procfs"
    elif version:
        facts.kernel_module = "proprietary"  # refined by /proc when it is there


# --------------------------------------------------------------------------- NVML


_FORK = hasattr(os, "fork")  # else the child is a fresh interpreter (Windows)
# The child's lines on stdout: "step NAME" before each NVML call, then "answer {...}".
_MARK = "envcheck-nvml: "


def _ask_nvml(nvml: Optional[ModuleType], timeout: float, show_ids: bool) -> NvidiaFacts:
    """What NVML says (the nvml status, driver and CUDA versions, GPUs and pairs), asked
    in a child; what the child did not answer is NVML's error (see the module)."""
    if _FORK:
        assert nvml is not None
        bound = nvml  # for the closure: mypy and the reader both see it is set
        child = _proc.Child(
            ["<fork: NVML>"], timeout, marker=_MARK, target=lambda: _serve(bound, show_ids)
        )
    else:  # platforms without fork(); a stand-in NVML module needs a fork
        if nvml is not None:
            raise ValueError("a stand-in NVML module needs os.fork()")
        package_parent = str(Path(__file__).resolve().parents[2])
        code = (
            f"import sys; sys.path.insert(0, {package_parent!r}); "
            f"from envcheck.probes.nvidia import _serve_fresh; _serve_fresh({show_ids!r})"
        )
        child = _proc.Child([*_proc.python_argv(), "-c", code], timeout, marker=_MARK)
    return _read_answer(child.wait(), timeout)


def _read_answer(result: _proc.ChildResult, timeout: float) -> NvidiaFacts:
    steps, answer = [], None
    for line in result.stdout.splitlines():
        if line.startswith(_MARK + "step "):
            steps.append(line[len(_MARK + "step ") :].strip())
        elif line.startswith(_MARK + "answer "):
            answer = line[len(_MARK + "answer ") :]
    where = f" in {steps[-1]}" if steps else " before its first NVML call"
    if result.timed_out:
        return _failed(
            "timeout", f"NVML did not answer within {timeout:g} s (a hung driver or GPU){where}"
        )
    if answer is not None:
        try:
            return convert(NvidiaFacts, json.loads(answer), "nvml answer")  # type: ignore[no-any-return]
        except (ValueError, FactsError) as exc:  # a broken line is no answer
            return _failed("no_answer", f"NVML's answer could not be read: {exc}")
    last = (result.stderr.strip().splitlines() or [""])[-1]
    said = f": {last}" if last else ""
    if result.signal:
        return _failed("crashed", f"libnvidia-ml crashed ({result.signal}){where}{said}")
    return _failed(
        "no_answer", f"NVML exited without answering (exit status {result.returncode}){where}{said}"
    )


def _failed(error: str, message: str) -> NvidiaFacts:
    return NvidiaFacts(nvml=NvmlStatus(ok=False, error=error, message=message))


def _serve(nvml: ModuleType, show_ids: bool) -> None:
    """The child's work: ask NVML, saying each call before it is made (the last one said
    is where a crash or a hang happened), then print the answer as one JSON line."""
    facts = _query_nvml(_Traced(nvml, lambda name: _say(f"{_MARK}step {name}\n")), show_ids)
    _say(f"{_MARK}answer {json.dumps(to_plain(facts))}\n")


def _serve_fresh(show_ids: bool) -> None:
    try:
        import pynvml
    except Exception as exc:
        failed = _failed("bindings_missing", str(exc))
        _say(f"{_MARK}answer {json.dumps(to_plain(failed))}\n")
        return
    _serve(pynvml, show_ids)


def _say(text: str) -> None:
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(1, data) :]


class _Traced:
    """``nvml`` with every ``nvml*`` function call announced first, by ``say(name)``."""

    def __init__(self, nvml: ModuleType, say: Callable[[str], None]) -> None:
        self._nvml, self._say = nvml, say

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nvml, name)
        if not (name.startswith("nvml") and callable(value)):
            return value

        def call(*args: Any) -> Any:
            self._say(name)
            return value(*args)

        return call

    def __dir__(self) -> List[str]:
        return dir(self._nvml)


def error_names(nvml: ModuleType) -> Dict[int, str]:
    """NVML return code -> lower-case name, from the binding's own constants."""
    return {
        getattr(nvml, n): n[len("NVML_ERROR_") :].lower()
        for n in dir(nvml)
        if n.startswith("NVML_ERROR_") and isinstance(getattr(nvml, n), int)
    }


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def cuda_version_from_int(value: int) -> str:
    """NVML/CUDA encode versions as 1000*major + 10*minor: 12080 -> "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _describe(nvml: ModuleType, names: Dict[int, str], exc: BaseException) -> Tuple[str, str]:
    if isinstance(exc, nvml.NVMLError):
        code = getattr(exc, "value", None)
        return names.get(code, f"error_{code}") if isinstance(code, int) else "unknown", _text(exc)
    return "unknown", f"{type(exc).__name__}: {exc}"


def _query_nvml(nvml: Any, show_ids: bool) -> NvidiaFacts:
    """NVML's part of the facts (run in the child)."""
    names = error_names(nvml)
    out = NvidiaFacts()
    try:
        nvml.nvmlInit()
    except Exception as exc:
        out.nvml.error, out.nvml.message = _describe(nvml, names, exc)
        return out
    try:
        out.nvml.ok = True
        out.driver_version = _system_call(nvml, nvml.nvmlSystemGetDriverVersion)
        out.nvml.version = _system_call(nvml, nvml.nvmlSystemGetNVMLVersion)
        cuda = _system_call(nvml, _cuda_driver_version_fn(nvml))
        if isinstance(cuda, int) and cuda > 0:
            out.cuda_driver_version = cuda_version_from_int(cuda)
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            out.nvml.ok = False
            out.nvml.error, out.nvml.message = _describe(nvml, names, exc)
            return out
        out.gpus = [_query_gpu(nvml, names, i, show_ids) for i in range(count)]
        out.pairs = _query_topology(nvml, out.gpus)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    return out


def _query_topology(nvml: ModuleType, gpus: List[GpuFacts]) -> List[GpuPairFacts]:
    """NVLinks and CPU affinity per GPU, then every pair's path and P2P status."""
    handles = []
    for gpu in gpus:
        if gpu.status == GpuStatus.LOST:
            continue
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(gpu.index)
        except Exception:
            continue
        topology.query_links(nvml, handle, gpu)
        handles.append((gpu, handle))
    return topology.query_pairs(nvml, handles) if len(handles) >= 2 else []


def _cuda_driver_version_fn(nvml: ModuleType) -> Callable[[], Any]:
    fn: Callable[[], Any] = (
        getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None)
        or nvml.nvmlSystemGetCudaDriverVersion
    )
    return fn


def _system_call(nvml: ModuleType, fn: Callable[[], Any]) -> Any:
    try:
        value = fn()
    except Exception:
        return None
    return _text(value) if isinstance(value, (bytes, str)) else value


class _Asker:
    """Asks NVML one query about one GPU: an unsupported query answers None, any other
    failure is recorded in ``gpu.errors`` and turns its status to lost or error."""

    def __init__(self, nvml: ModuleType, names: Dict[int, str], gpu: GpuFacts) -> None:
        self.nvml = nvml
        self.names = names
        self.gpu = gpu
        self.not_supported = getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", 3)
        self.lost = getattr(nvml, "NVML_ERROR_GPU_IS_LOST", 15)

    def __call__(self, query: str, fn: Callable[..., Any], *args: Any) -> Any:
        nvml, gpu = self.nvml, self.gpu
        try:
            return fn(*args)
        except Exception as exc:
            if isinstance(exc, nvml.NVMLError) and exc.value == self.not_supported:
                return None
            code, message = _describe(nvml, self.names, exc)
            gpu.errors[query] = f"{code}: {message}"
            if isinstance(exc, nvml.NVMLError) and exc.value == self.lost:
                gpu.status = GpuStatus.LOST
            elif gpu.status == GpuStatus.OK:
                gpu.status = GpuStatus.ERROR
            return None


def _query_gpu(nvml: ModuleType, names: Dict[int, str], index: int, show_ids: bool) -> GpuFacts:
    gpu = GpuFacts(index=index)
    ask = _Asker(nvml, names, gpu)
    handle = ask("handle", nvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return gpu
    name = ask("name", nvml.nvmlDeviceGetName, handle)
    gpu.name = _text(name) if name is not None else None
    if gpu.status == GpuStatus.LOST:  # every later query would say the same
        return gpu
    _query_identity(ask, handle, show_ids)
    _query_memory(ask, handle)
    _query_health(ask, handle)
    return gpu


def _query_identity(ask: _Asker, handle: Any, show_ids: bool) -> None:
    """UUID, PCI bus id and compute capability."""
    nvml, gpu = ask.nvml, ask.gpu
    uuid = ask("uuid", nvml.nvmlDeviceGetUUID, handle)
    if uuid is not None:
        gpu.uuid = _text(uuid) if show_ids else f"GPU-redacted-{gpu.index}"
    pci_fn = getattr(nvml, "nvmlDeviceGetPciInfo_v3", None) or nvml.nvmlDeviceGetPciInfo
    pci = ask("pci", pci_fn, handle)
    if pci is not None:
        gpu.pci_bus_id = _text(getattr(pci, "busId", "")) or None
    cc = ask("compute_capability", nvml.nvmlDeviceGetCudaComputeCapability, handle)
    if cc is not None:
        gpu.compute_capability = ComputeCapability(int(cc[0]), int(cc[1]))


def _query_memory(ask: _Asker, handle: Any) -> None:
    """Memory, MIG mode and ECC mode with its uncorrected errors."""
    nvml, gpu = ask.nvml, ask.gpu
    mem = ask("memory", nvml.nvmlDeviceGetMemoryInfo, handle)
    if mem is not None:
        gpu.memory_total, gpu.memory_used = int(mem.total), int(mem.used)
    mig = ask("mig_mode", nvml.nvmlDeviceGetMigMode, handle)
    if mig is not None:
        gpu.mig_mode = bool(mig[0])
        if gpu.mig_mode:
            gpu.mig_devices = _count_mig_devices(nvml, handle)
    ecc = ask("ecc_mode", nvml.nvmlDeviceGetEccMode, handle)
    if ecc is not None:
        gpu.ecc_mode = bool(ecc[0])
        if gpu.ecc_mode:
            gpu.ecc_uncorrected_volatile = ask(
                "ecc_errors",
                nvml.nvmlDeviceGetTotalEccErrors,
                handle,
                nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                nvml.NVML_VOLATILE_ECC,
            )


def _query_health(ask: _Asker, handle: Any) -> None:
    """Pending page retirement and row remaps, temperatures, persistence mode."""
    nvml, gpu = ask.nvml, ask.gpu
    pending = ask("retired_pages", nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    if pending is not None:
        gpu.retired_pages_pending = bool(pending)
    remap = ask("row_remap", nvml.nvmlDeviceGetRemappedRows, handle)
    if remap is not None:
        gpu.row_remap_pending, gpu.row_remap_failure = bool(remap[2]), bool(remap[3])
    gpu.temperature_c = ask(
        "temperature", nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU
    )
    gpu.temperature_slowdown_c = ask(
        "temperature_threshold",
        nvml.nvmlDeviceGetTemperatureThreshold,
        handle,
        nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
    )
    persistence = ask("persistence_mode", nvml.nvmlDeviceGetPersistenceMode, handle)
    if persistence is not None:
        gpu.persistence_mode = persistence == nvml.NVML_FEATURE_ENABLED


def _count_mig_devices(nvml: ModuleType, handle: Any) -> Optional[int]:
    try:
        slots = int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))
    except Exception:
        return None
    count = 0
    for i in range(slots):
        try:
            nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, i)
        except Exception:  # NOT_FOUND for an empty slot
            continue
        count += 1
    return count
