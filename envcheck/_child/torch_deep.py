"""Import torch for real and report what it sees; run as a child process by path.

Each stage is announced before it starts and its findings printed as soon as
they are known, one ``@@envcheck@@ {json}`` line at a time, so that when torch
segfaults, aborts or hangs, the parent still knows how far it got and what it
had learnt. faulthandler writes a Python traceback to stderr on a fatal signal.
Standard library only until ``import torch``.
"""

import faulthandler
import functools
import json
import os
import re
import sys
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional

MARK = "@@envcheck@@"
LIBRARIES = re.compile(
    r"^lib(cuda|cudart|cudnn\w*|nccl|cublas|cublasLt|cufft\w*|curand|cusparse\w*|cusolver\w*"
    r"|nvrtc(?:-builtins)?|nvJitLink|nvToolsExt|cupti|cufile|nvidia-ml|amdhip64|MIOpen|rccl"
    r"|rocblas|hipblaslt|hsa-runtime64|torch_cuda|c10_cuda)[.-]"
)


def emit(**record: Any) -> None:
    sys.stdout.write("\n" + MARK + " " + json.dumps(record) + "\n")
    sys.stdout.flush()


def step(name: str, errors: Dict[str, str], fn: Callable[[], Any]) -> Any:
    """Run one query; a failure is recorded under its name, never fatal."""
    try:
        return fn()
    except Exception as exc:
        errors[name] = "%s: %s" % (type(exc).__name__, str(exc).strip()[:500])
        return None


def loaded_libraries() -> List[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    paths = set()
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            path = parts[5].strip()
            if LIBRARIES.match(os.path.basename(path)):
                paths.add(path)
    return sorted(paths)


def main() -> None:
    faulthandler.enable()
    emit(stage="import")
    try:
        import torch
    except BaseException as exc:  # ImportError, OSError from a missing .so, SystemExit
        lines = traceback.format_exception_only(type(exc), exc)
        emit(
            stage="import",
            status="import_failed",
            error="".join(lines).strip(),
            traceback="".join(traceback.format_exc()).strip()[-4000:],
        )
        return
    describe(torch, emit)


def describe(torch: Any, emit: Callable[..., None]) -> None:
    """What an imported torch sees, as records passed to ``emit``. The child calls it after
    its own import; envcheck.require() calls it in the training script's process when that
    process has already imported torch (no second import, no child)."""
    errors = {}  # type: Dict[str, str]
    emit(
        stage="cuda",
        version=getattr(torch, "__version__", None),
        file=getattr(torch, "__file__", None),
        cuda=getattr(torch.version, "cuda", None),
        hip=getattr(torch.version, "hip", None),
    )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = step("cuda_available", errors, torch.cuda.is_available)
    emit(
        stage="devices",
        cuda_available=available,
        cuda_warnings=[str(w.message) for w in caught][:10],
    )

    count = step("device_count", errors, torch.cuda.device_count) if available else 0
    record = {"device_count": count, "devices": devices(torch, errors, count or 0)}
    record.update(cuda_libraries(torch, errors, available))
    record.update(other_backends(torch, errors))
    record["num_threads"] = step("num_threads", errors, torch.get_num_threads)
    record["distributed_backends"] = distributed_backends(torch, errors)
    emit(stage="libraries", **record)
    emit(stage="done", loaded_libraries=loaded_libraries(), step_errors=errors)


def devices(torch: Any, errors: Dict[str, str], count: int) -> List[Dict[str, Any]]:
    """The properties of each of the ``count`` CUDA devices that could be read."""
    found = []
    for i in range(count):
        props = step(
            "device_%d" % i, errors, functools.partial(torch.cuda.get_device_properties, i)
        )
        if props is not None:
            found.append(
                {
                    "index": i,
                    "name": props.name,
                    "capability": "%d.%d" % (props.major, props.minor),
                    "memory_total": int(props.total_memory),
                    "multiprocessors": int(props.multi_processor_count),
                }
            )
    return found


def cuda_libraries(torch: Any, errors: Dict[str, str], available: Optional[bool]) -> Dict[str, Any]:
    """The GPU architectures the build holds, bf16, and the cuDNN and NCCL it loads."""
    record = {}  # type: Dict[str, Any]
    record["arch_list"] = step("arch_list", errors, torch.cuda.get_arch_list) or []
    if available:
        record["bf16_supported"] = step("bf16", errors, torch.cuda.is_bf16_supported)
    record["cudnn_version"] = step("cudnn", errors, torch.backends.cudnn.version)
    if torch.version.cuda and available:
        nccl = step("nccl", errors, torch.cuda.nccl.version)
        if isinstance(nccl, tuple):
            record["nccl_version"] = ".".join(str(p) for p in nccl)
        elif isinstance(nccl, int):  # torch < 1.13 returned 2708 for 2.7.8
            record["nccl_version"] = "%d.%d.%d" % (nccl // 1000, nccl % 1000 // 100, nccl % 100)
    return record


def other_backends(torch: Any, errors: Dict[str, str]) -> Dict[str, Any]:
    """MPS (Apple), XPU (Intel) and the CPU's vector capability, where the build has them."""
    record = {}  # type: Dict[str, Any]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None:
        record["mps_built"] = step("mps_built", errors, mps.is_built)
        record["mps_available"] = step("mps_available", errors, mps.is_available)
    xpu = getattr(torch, "xpu", None)
    if xpu is not None:
        record["xpu_available"] = step("xpu_available", errors, xpu.is_available)
    cpu = getattr(torch.backends, "cpu", None)
    if cpu is not None and hasattr(cpu, "get_cpu_capability"):
        record["cpu_capability"] = step("cpu_capability", errors, cpu.get_cpu_capability)
    return record


def distributed_backends(torch: Any, errors: Dict[str, str]) -> List[str]:
    """The torch.distributed backends this build can use."""
    backends = []
    dist = getattr(torch, "distributed", None)
    if dist is not None and step("distributed", errors, dist.is_available):
        for name in ("gloo", "nccl", "mpi", "ucc", "xccl"):
            check = getattr(dist, "is_%s_available" % name, None)
            if check is not None and step(name, errors, check):
                backends.append(name)
    return backends


if __name__ == "__main__":
    del sys.path[0]  # this script's folder, not part of the environment being probed
    main()
