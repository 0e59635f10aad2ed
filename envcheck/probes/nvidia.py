"""NVIDIA driver and GPUs: kernel module files first, then NVML.

The driver version is read from ``/sys/module/nvidia/version`` or
``/proc/driver/nvidia/version`` when they exist: no library needed, and they
still answer when NVML itself is broken (the "Driver/library version mismatch"
after an upgrade without a reboot). NVML (``pynvml`` from nvidia-ml-py) then
gives the CUDA version the driver supports and every GPU.

NVML is asked in a child process (envcheck.probes.nvml_child: why, and how a hang, a
crash or an exit in libnvidia-ml becomes NVML's error instead of "no GPU"); this module
makes its answer facts, and holds the queries the child makes once NVML has started. A
query a GPU does not support is simply left None.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

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
from ..nvml_errors import describe, text
from ..values import ComputeCapability
from . import nvml_child, topology
from ._files import read_first_line, read_text

if TYPE_CHECKING:
    from ._files import Root

_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)*)")


def probe_nvidia(
    root: Path = Path("/"),
    nvml: Optional[ModuleType] = None,
    timeout: float = 10.0,
    show_ids: bool = False,
) -> NvidiaFacts:
    """Probe the driver and GPUs; ``nvml`` replaces ``pynvml`` (tests pass a fake)."""
    answer = nvml_child.ask(nvml, timeout, show_ids, query_nvml)
    return nvidia_facts(root, nvml_child.device_nodes(root), answer)


def nvidia_facts(root: Root, device_nodes: List[str], answer: Dict[str, Any]) -> NvidiaFacts:
    """The facts of the driver files under ``root``, its device nodes and NVML's ``answer``
    (envcheck.probes.nvml_child.ask): the healthcheck asks NVML itself, then calls this."""
    facts = NvidiaFacts()
    facts.device_nodes = device_nodes
    _kernel_module(root, facts)
    try:
        got: NvidiaFacts = convert(NvidiaFacts, answer, "nvml answer")
    except FactsError as exc:  # a broken answer is no answer
        got = NvidiaFacts(
            nvml=NvmlStatus(
                ok=False, error="no_answer", message=f"NVML's answer could not be read: {exc}"
            )
        )
    facts.nvml = got.nvml
    facts.gpus = got.gpus
    facts.pairs = got.pairs
    if facts.gpus:  # the link, NUMA node, IOMMU and ACS that NVML does not report
        from .pcie import probe_pcie

        for gpu in facts.gpus:
            gpu.pcie = probe_pcie(Path(root), gpu.pci_bus_id)
    facts.cuda_driver_version = got.cuda_driver_version
    if facts.driver_version is None and got.driver_version:
        facts.driver_version, facts.driver_version_source = got.driver_version, "nvml"
    return facts


def _kernel_module(root: Root, facts: NvidiaFacts) -> None:
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


def _serve_fresh(show_ids: bool) -> None:
    """The fresh interpreter's work where there is no fork() (Windows): nvml_child.FRESH."""
    try:
        import pynvml
    except Exception as exc:
        answer = json.dumps(nvml_child.failed("bindings_missing", str(exc)))
        nvml_child.say(f"{nvml_child.MARK}answer {answer}\n")
        return
    nvml_child.serve(pynvml, show_ids, query_nvml)


def cuda_version_from_int(value: int) -> str:
    """NVML/CUDA encode versions as 1000*major + 10*minor: 12080 -> "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def query_nvml(nvml: Any, names: Dict[int, str], show_ids: bool) -> Dict[str, Any]:
    """NVML's part of the facts, in their plain form (run in the child, once nvmlInit()
    has worked; envcheck.probes.nvml_child shuts NVML down after it)."""
    out = NvidiaFacts()
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
        out.nvml.error, out.nvml.message = describe(nvml, names, exc)
        return to_plain(out)  # type: ignore[no-any-return]
    out.gpus = [_query_gpu(nvml, names, i, show_ids) for i in range(count)]
    out.pairs = _query_topology(nvml, out.gpus)
    return to_plain(out)  # type: ignore[no-any-return]


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
    return text(value) if isinstance(value, (bytes, str)) else value


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
            code, message = describe(nvml, self.names, exc)
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
    gpu.name = text(name) if name is not None else None
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
        gpu.uuid = text(uuid) if show_ids else f"GPU-redacted-{gpu.index}"
    pci_fn = getattr(nvml, "nvmlDeviceGetPciInfo_v3", None) or nvml.nvmlDeviceGetPciInfo
    pci = ask("pci", pci_fn, handle)
    if pci is not None:
        gpu.pci_bus_id = text(getattr(pci, "busId", "")) or None
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
