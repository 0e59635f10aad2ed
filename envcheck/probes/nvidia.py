"""NVIDIA driver and GPUs: kernel module files first, then NVML.

The driver version is read from ``/sys/module/nvidia/version`` or
``/proc/driver/nvidia/version`` when they exist: no library needed, and they
still answer when NVML itself is broken (the "Driver/library version mismatch"
after an upgrade without a reboot). NVML (``pynvml`` from nvidia-ml-py) then
gives the CUDA version the driver supports and every GPU.

NVML calls are C calls into the driver, which can block on a wedged GPU. They
run in a daemon thread joined with a timeout: a hang becomes ``nvml.error ==
"timeout"`` and envcheck carries on. Every NVML failure is recorded under its
NVML code name (``library_not_found``, ``lib_rm_version_mismatch``, ...) with
NVML's own message; a query a GPU does not support is simply left None.
"""

from __future__ import annotations

import contextlib
import re
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional

from ..facts import GpuFacts, GpuPairFacts, NvidiaFacts, NvmlStatus
from . import topology
from ._files import read_first_line, read_text
from .pcie import probe_pcie

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

    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[no-redef]  # the real module; tests pass a fake
        except Exception as exc:  # not installed, or a broken install
            facts.nvml = NvmlStatus(ok=False, error="bindings_missing", message=str(exc))
            return facts

    box: Dict[str, Any] = {}
    worker = threading.Thread(target=_nvml_worker, args=(nvml, box, show_ids), daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        facts.nvml = NvmlStatus(
            ok=False,
            error="timeout",
            message=f"NVML did not answer within {timeout:g} s (a hung driver or GPU)",
        )
        return facts
    result: Optional[_NvmlResult] = box.get("result")
    if result is None:  # the worker itself failed: an envcheck bug, recorded not raised
        facts.nvml = NvmlStatus(ok=False, error="unknown", message=box.get("crash", "no result"))
        return facts
    facts.nvml = result.status
    facts.gpus = result.gpus
    facts.pairs = result.pairs
    for gpu in facts.gpus:  # the link, NUMA node, IOMMU and ACS that NVML does not report
        gpu.pcie = probe_pcie(root, gpu.pci_bus_id)
    facts.cuda_driver_version = result.cuda_driver_version
    if facts.driver_version is None and result.driver_version:
        facts.driver_version, facts.driver_version_source = result.driver_version, "nvml"
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


class _NvmlResult:
    def __init__(self) -> None:
        self.status = NvmlStatus()
        self.driver_version: Optional[str] = None
        self.cuda_driver_version: Optional[str] = None
        self.gpus: List[GpuFacts] = []
        self.pairs: List[GpuPairFacts] = []


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


def _nvml_worker(nvml: ModuleType, box: Dict[str, Any], show_ids: bool) -> None:
    try:
        box["result"] = _query_nvml(nvml, show_ids)
    except BaseException as exc:
        box["crash"] = f"{type(exc).__name__}: {exc}"


def _describe(nvml: ModuleType, names: Dict[int, str], exc: BaseException) -> tuple:
    if isinstance(exc, nvml.NVMLError):
        code = getattr(exc, "value", None)
        return names.get(code, f"error_{code}") if isinstance(code, int) else "unknown", _text(exc)
    return "unknown", f"{type(exc).__name__}: {exc}"


def _query_nvml(nvml: ModuleType, show_ids: bool) -> _NvmlResult:
    names = error_names(nvml)
    out = _NvmlResult()
    try:
        nvml.nvmlInit()
    except Exception as exc:
        out.status.error, out.status.message = _describe(nvml, names, exc)
        return out
    try:
        out.status.ok = True
        out.driver_version = _system_call(nvml, nvml.nvmlSystemGetDriverVersion)
        out.status.version = _system_call(nvml, nvml.nvmlSystemGetNVMLVersion)
        cuda = _system_call(nvml, _cuda_driver_version_fn(nvml))
        if isinstance(cuda, int) and cuda > 0:
            out.cuda_driver_version = cuda_version_from_int(cuda)
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            out.status.ok = False
            out.status.error, out.status.message = _describe(nvml, names, exc)
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
        if gpu.status == "lost":
            continue
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(gpu.index)
        except Exception:
            continue
        topology.query_links(nvml, handle, gpu)
        handles.append((gpu, handle))
    return topology.query_pairs(nvml, handles) if len(handles) >= 2 else []


def _cuda_driver_version_fn(nvml: ModuleType) -> Callable[[], Any]:
    return (
        getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None)
        or nvml.nvmlSystemGetCudaDriverVersion
    )


def _system_call(nvml: ModuleType, fn: Callable[[], Any]) -> Any:
    try:
        value = fn()
    except Exception:
        return None
    return _text(value) if isinstance(value, (bytes, str)) else value


def _query_gpu(nvml: ModuleType, names: Dict[int, str], index: int, show_ids: bool) -> GpuFacts:
    gpu = GpuFacts(index=index)
    not_supported = getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", 3)
    lost = getattr(nvml, "NVML_ERROR_GPU_IS_LOST", 15)

    def ask(query: str, fn: Callable, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            if isinstance(exc, nvml.NVMLError) and exc.value == not_supported:
                return None
            code, message = _describe(nvml, names, exc)
            gpu.errors[query] = f"{code}: {message}"
            if isinstance(exc, nvml.NVMLError) and exc.value == lost:
                gpu.status = "lost"
            elif gpu.status == "ok":
                gpu.status = "error"
            return None

    handle = ask("handle", nvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return gpu
    name = ask("name", nvml.nvmlDeviceGetName, handle)
    gpu.name = _text(name) if name is not None else None
    if gpu.status == "lost":  # every later query would say the same
        return gpu
    uuid = ask("uuid", nvml.nvmlDeviceGetUUID, handle)
    if uuid is not None:
        gpu.uuid = _text(uuid) if show_ids else f"GPU-redacted-{index}"
    pci_fn = getattr(nvml, "nvmlDeviceGetPciInfo_v3", None) or nvml.nvmlDeviceGetPciInfo
    pci = ask("pci", pci_fn, handle)
    if pci is not None:
        gpu.pci_bus_id = _text(getattr(pci, "busId", "")) or None
    cc = ask("compute_capability", nvml.nvmlDeviceGetCudaComputeCapability, handle)
    if cc is not None:
        gpu.compute_capability = f"{cc[0]}.{cc[1]}"
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
    return gpu


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
