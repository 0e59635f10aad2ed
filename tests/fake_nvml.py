"""A stand-in for the ``pynvml`` module, driven by a machine description.

This is the one place envcheck's tests fake anything: the NVML library, since
these machines have no GPU. The fake has pynvml's function names, signatures
and constants, and raises pynvml's real exception classes (``NVMLError(code)``
maps a code to its subclass), so the probe code under test is exactly the code
that runs against a driver.

A machine is a dict:
    {"init_error": code | None, "hang": seconds | None,
     "driver": "550.54.15", "cuda": 12040, "nvml_version": "12.550.54.15",
     "gpus": [ {gpu fields, "fail": {query: code}} ]}
where a GPU's "fail" maps a query name (as in pynvml: "name", "memory", ...) or
"*" (every query) to the NVML error code it raises. ``"bytes": True`` makes the string
queries return bytes, as pynvml before 11.5 (and some nvidia-ml-py builds) did.
``"log": path`` appends each GPU query's name to that file: envcheck calls NVML in a
child process, so ``state["calls"]`` fills in the child, not in the test.
"""

from __future__ import annotations

import copy
import json
import sys
import time
import types
from typing import Any, Dict, List, Optional, Tuple

import pynvml

GiB = 1024**3
MiB = 1024**2


class _Memory:
    def __init__(self, total: int, used: int) -> None:
        self.total, self.used, self.free = total, used, total - used


class _Pci:
    def __init__(self, bus_id: str) -> None:
        self.busId = bus_id


def make_nvml(machine: Dict[str, Any]) -> types.ModuleType:
    """Build a module object that behaves like pynvml on ``machine``."""
    m = copy.deepcopy(machine)
    mod = types.ModuleType("fake_pynvml")
    for name in dir(pynvml):
        if name.startswith("NVML_"):
            setattr(mod, name, getattr(pynvml, name))
    mod.NVMLError = pynvml.NVMLError
    state = {"initialised": False, "calls": []}
    mod.state = state
    gpus: List[Dict[str, Any]] = m.get("gpus", [])

    def err(code: int) -> pynvml.NVMLError:
        return pynvml.NVMLError(code)

    def need_init() -> None:
        if not state["initialised"]:
            raise err(pynvml.NVML_ERROR_UNINITIALIZED)

    def gpu_call(query: str, handle: Dict[str, Any]) -> Dict[str, Any]:
        need_init()
        state["calls"].append(query)
        if m.get("log"):  # NVML runs in a child process: the parent reads its calls here
            with open(m["log"], "a") as log:
                log.write(query + "\n")
        fail = handle.get("fail", {})
        code: Optional[int] = fail.get(query, fail.get("*"))
        if code is not None:
            raise err(code)
        return handle

    def nvmlInit() -> None:
        if m.get("hang"):
            time.sleep(m["hang"])
        if m.get("init_error") is not None:
            raise err(m["init_error"])
        state["initialised"] = True

    def nvmlShutdown() -> None:
        need_init()
        state["initialised"] = False

    def text(value: Any) -> Any:
        return value.encode() if m.get("bytes") and isinstance(value, str) else value

    def nvmlSystemGetDriverVersion() -> str:
        need_init()
        return text(m["driver"])

    def nvmlSystemGetNVMLVersion() -> str:
        need_init()
        return text(m.get("nvml_version", "12." + m["driver"]))

    def nvmlSystemGetCudaDriverVersion_v2() -> int:
        need_init()
        return m["cuda"]

    def nvmlDeviceGetCount() -> int:
        need_init()
        if m.get("count_error") is not None:
            raise err(m["count_error"])
        return len(gpus)

    def nvmlDeviceGetHandleByIndex(index: int) -> Dict[str, Any]:
        need_init()
        if index >= len(gpus):
            raise err(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return gpu_call("handle", gpus[index])

    def simple(query: str, key: str):
        def fn(handle: Dict[str, Any]) -> Any:
            g = gpu_call(query, handle)
            if g.get(key) is None:
                raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
            return text(g[key])

        fn.__name__ = query
        return fn

    mod.nvmlInit = nvmlInit
    mod.nvmlShutdown = nvmlShutdown
    mod.nvmlSystemGetDriverVersion = nvmlSystemGetDriverVersion
    mod.nvmlSystemGetNVMLVersion = nvmlSystemGetNVMLVersion
    mod.nvmlSystemGetCudaDriverVersion_v2 = nvmlSystemGetCudaDriverVersion_v2
    mod.nvmlSystemGetCudaDriverVersion = nvmlSystemGetCudaDriverVersion_v2
    mod.nvmlDeviceGetCount = nvmlDeviceGetCount
    mod.nvmlDeviceGetHandleByIndex = nvmlDeviceGetHandleByIndex
    mod.nvmlDeviceGetName = simple("name", "name")
    mod.nvmlDeviceGetUUID = simple("uuid", "uuid")
    mod.nvmlDeviceGetPciInfo_v3 = lambda h: _Pci(gpu_call("pci", h)["pci"])
    mod.nvmlDeviceGetPciInfo = mod.nvmlDeviceGetPciInfo_v3
    mod.nvmlDeviceGetCudaComputeCapability = simple("compute_capability", "cc")
    mod.nvmlDeviceGetMemoryInfo = lambda h: _Memory(*gpu_call("memory", h)["memory"])
    mod.nvmlDeviceGetMigMode = simple("mig_mode", "mig")
    mod.nvmlDeviceGetEccMode = simple("ecc_mode", "ecc")
    mod.nvmlDeviceGetRetiredPagesPendingStatus = simple("retired_pages", "retired_pending")
    mod.nvmlDeviceGetRemappedRows = simple("row_remap", "remap")
    mod.nvmlDeviceGetPersistenceMode = simple("persistence_mode", "persistence")

    def nvmlDeviceGetTotalEccErrors(handle: Dict[str, Any], error_type: int, counter: int) -> int:
        g = gpu_call("ecc_errors", handle)
        assert error_type == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        assert counter == pynvml.NVML_VOLATILE_ECC
        return g.get("ecc_uncorrected", 0)

    def nvmlDeviceGetTemperature(handle: Dict[str, Any], sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        return simple("temperature", "temp")(handle)

    def nvmlDeviceGetTemperatureThreshold(handle: Dict[str, Any], kind: int) -> int:
        assert kind == pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
        return simple("temperature_threshold", "slowdown")(handle)

    def nvmlDeviceGetMaxMigDeviceCount(handle: Dict[str, Any]) -> int:
        return gpu_call("mig_count", handle).get("mig_slots", 0)

    def nvmlDeviceGetMigDeviceHandleByIndex(handle: Dict[str, Any], index: int) -> Dict:
        g = gpu_call("mig_handle", handle)
        if index >= g.get("mig_instances", 0):
            raise err(pynvml.NVML_ERROR_NOT_FOUND)
        return {"parent": g, "index": index}

    def links(handle: Dict[str, Any], link: int) -> tuple:
        g = gpu_call("nvlink", handle)
        if g.get("nvlinks") is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if link >= len(g["nvlinks"]):
            raise err(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return g["nvlinks"][link]

    def nvmlDeviceGetNvLinkState(handle: Dict[str, Any], link: int) -> int:
        active = links(handle, link)[0]
        return pynvml.NVML_FEATURE_ENABLED if active else pynvml.NVML_FEATURE_DISABLED

    def pair_key(h1: Dict[str, Any], h2: Dict[str, Any]) -> str:
        i, j = (next(k for k, g in enumerate(gpus) if g is h) for h in (h1, h2))
        return f"{min(i, j)}-{max(i, j)}"

    def nvmlDeviceGetTopologyCommonAncestor(h1: Dict[str, Any], h2: Dict[str, Any]) -> int:
        gpu_call("topology", h1)
        level = m.get("topology", {}).get(pair_key(h1, h2))
        if level is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return level

    def nvmlDeviceGetP2PStatus(h1: Dict[str, Any], h2: Dict[str, Any], index: int) -> int:
        gpu_call("p2p", h1)
        status = m.get("p2p", {}).get(pair_key(h1, h2))
        if status is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return status[index]

    def nvmlDeviceGetCpuAffinity(handle: Dict[str, Any], size: int) -> List[int]:
        g = gpu_call("cpu_affinity", handle)
        if g.get("affinity") is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return list(g["affinity"])[:size] + [0] * max(0, size - len(g["affinity"]))

    mod.nvmlDeviceGetNvLinkState = nvmlDeviceGetNvLinkState
    mod.nvmlDeviceGetNvLinkVersion = lambda h, link: links(h, link)[1]
    mod.nvmlDeviceGetNvLinkRemotePciInfo_v2 = lambda h, link: _Pci(links(h, link)[2])
    mod.nvmlDeviceGetTopologyCommonAncestor = nvmlDeviceGetTopologyCommonAncestor
    mod.nvmlDeviceGetP2PStatus = nvmlDeviceGetP2PStatus
    mod.nvmlDeviceGetCpuAffinity = nvmlDeviceGetCpuAffinity
    mod.nvmlDeviceGetTotalEccErrors = nvmlDeviceGetTotalEccErrors
    mod.nvmlDeviceGetTemperature = nvmlDeviceGetTemperature
    mod.nvmlDeviceGetTemperatureThreshold = nvmlDeviceGetTemperatureThreshold
    mod.nvmlDeviceGetMaxMigDeviceCount = nvmlDeviceGetMaxMigDeviceCount
    mod.nvmlDeviceGetMigDeviceHandleByIndex = nvmlDeviceGetMigDeviceHandleByIndex
    return mod


# --------------------------------------------------------------------------- machines

NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED


def h100_sxm(index: int) -> Dict[str, Any]:
    return {
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": f"GPU-5a1e0c7f-3b1d-4c2e-9f8a-00000000000{index}",
        "pci": f"00000000:{0x18 + 0x10 * index:02X}:00.0",
        "cc": (9, 0),
        "memory": (81559 * MiB, 1 * MiB),
        "mig": (0, 0),
        "ecc": (1, 1),
        "ecc_uncorrected": 0,
        "retired_pending": None,  # A100/H100 remap rows instead of retiring pages
        "remap": (0, 0, 0, 0),
        "temp": 31 + index,
        "slowdown": 87,
        "persistence": pynvml.NVML_FEATURE_ENABLED,
    }


MACHINES: Dict[str, Dict[str, Any]] = {
    "8xH100-SXM": {
        "driver": "550.54.15",
        "cuda": 12040,
        "gpus": [h100_sxm(i) for i in range(8)],
    },
    "laptop-RTX3060": {
        "driver": "470.82.01",
        "cuda": 11040,
        "gpus": [
            {
                "name": "NVIDIA GeForce RTX 3060 Laptop GPU",
                "uuid": "GPU-0b6c2a52-7d4e-4b0e-a1c2-9d3e4f5a6b7c",
                "pci": "00000000:01:00.0",
                "cc": (8, 6),
                "memory": (6144 * MiB, 512 * MiB),
                "mig": None,
                "ecc": None,
                "retired_pending": None,
                "remap": None,
                "temp": 48,
                "slowdown": 98,
                "persistence": pynvml.NVML_FEATURE_DISABLED,
            }
        ],
    },
    "A100-MIG": {
        "driver": "535.104.05",
        "cuda": 12020,
        "gpus": [
            {
                "name": "NVIDIA A100-SXM4-40GB",
                "uuid": "GPU-9e1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d",
                "pci": "00000000:07:00.0",
                "cc": (8, 0),
                "memory": (40960 * MiB, 30 * MiB),
                "mig": (1, 1),
                "mig_slots": 7,
                "mig_instances": 2,
                "ecc": (1, 1),
                "ecc_uncorrected": 0,
                "retired_pending": None,
                "remap": (0, 0, 0, 0),
                "temp": 35,
                "slowdown": 90,
                "persistence": pynvml.NVML_FEATURE_ENABLED,
            }
        ],
    },
    "lost-GPU": {
        "driver": "550.54.15",
        "cuda": 12040,
        "gpus": [h100_sxm(0), dict(h100_sxm(1), fail={"name": pynvml.NVML_ERROR_GPU_IS_LOST})],
    },
    "sick-H100": {  # ECC errors and a failed row remap on one GPU
        "driver": "550.54.15",
        "cuda": 12040,
        "gpus": [dict(h100_sxm(0), ecc_uncorrected=3, remap=(0, 2, 1, 1))],
    },
    "library-missing": {"init_error": pynvml.NVML_ERROR_LIBRARY_NOT_FOUND},
    "version-mismatch": {"init_error": pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH},
    "driver-not-loaded": {"init_error": pynvml.NVML_ERROR_DRIVER_NOT_LOADED},
    "no-permission": {"init_error": pynvml.NVML_ERROR_NO_PERMISSION},
    "unknown-error": {
        "driver": "535.104.05",
        "cuda": 12020,
        "gpus": [dict(h100_sxm(0), fail={"handle": pynvml.NVML_ERROR_UNKNOWN})],
    },
    "hung-driver": {"hang": 30, "driver": "550.54.15", "cuda": 12040, "gpus": []},
}


# --------------------------------------------------------------------------- topologies
# NVML's numbers: topology levels 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS; P2P status 0 ok,
# 1 chipset not supported, 4 disabled by regkey; NVLink version 4 = NVLink 3.0, 6 = 4.0.
OK3 = (0, 0, 0)  # read, write, nvlink
PCIE_OK = (0, 0, 5)  # P2P status 5: not supported (over NVLink)


def _pairs(n: int, value: Any) -> Dict[str, Any]:
    return {f"{i}-{j}": value(i, j) for i in range(n) for j in range(i + 1, n)}


def nvswitch_h100(index: int) -> Dict[str, Any]:
    """An HGX H100 GPU: 18 NVLink 4 links, every one to an NVSwitch (not a GPU)."""
    switch = [f"00000000:{0xC5 + k % 4:02X}:00.0" for k in range(18)]
    return dict(
        h100_sxm(index),
        nvlinks=[(True, 6, switch[k]) for k in range(18)],
        affinity=[0xFFFFFFFF if index < 4 else 0, 0 if index < 4 else 0xFFFFFFFF],
    )


def a100_direct(index: int, down: Tuple[int, ...] = ()) -> Dict[str, Any]:
    """An HGX A100 4-GPU board GPU: 12 NVLink 3 links, 4 straight to each other GPU."""
    peers = [p for p in range(4) if p != index]
    return {
        "name": "NVIDIA A100-SXM4-80GB",
        "uuid": f"GPU-a100-{index}",
        "pci": f"00000000:{0x07 + 0x40 * index:02X}:00.0",
        "cc": (8, 0),
        "memory": (81920 * MiB, 1 * MiB),
        "mig": (0, 0),
        "ecc": (1, 1),
        "ecc_uncorrected": 0,
        "retired_pending": None,
        "remap": (0, 0, 0, 0),
        "temp": 30,
        "slowdown": 90,
        "persistence": pynvml.NVML_FEATURE_ENABLED,
        "nvlinks": [
            (k not in down, 4, f"00000000:{0x07 + 0x40 * peers[k // 4]:02X}:00.0")
            for k in range(12)
        ],
    }


def geforce(index: int, name: str = "NVIDIA GeForce RTX 4090") -> Dict[str, Any]:
    return {
        "name": name,
        "uuid": f"GPU-geforce-{index}",
        "pci": f"00000000:{0x21 + index:02X}:00.0",
        "cc": (8, 9),
        "memory": (24564 * MiB, 300 * MiB),
        "mig": None,
        "ecc": None,
        "retired_pending": None,
        "remap": None,
        "temp": 40,
        "slowdown": 90,
        "persistence": pynvml.NVML_FEATURE_DISABLED,
    }


MACHINES.update(
    {
        "8xH100-NVSwitch": {
            "driver": "550.54.15",
            "cuda": 12040,
            "gpus": [nvswitch_h100(i) for i in range(8)],
            "topology": _pairs(8, lambda i, j: 40 if (i < 4) == (j < 4) else 50),
            "p2p": _pairs(8, lambda i, j: OK3),
        },
        "4xA100-link-down": {  # GPU 1's four links to GPU 2 are down: that pair goes by PCIe
            "driver": "535.104.05",
            "cuda": 12020,
            "gpus": [a100_direct(0), a100_direct(1, down=(4, 5, 6, 7)), *map(a100_direct, (2, 3))],
            "topology": _pairs(4, lambda i, j: 30),
            "p2p": _pairs(4, lambda i, j: PCIE_OK if (i, j) == (1, 2) else OK3),
        },
        "4xRTX4090": {  # GeForce, P2P over PCIe reported ok (drivers before P2P was refused)
            "driver": "525.89.02",
            "cuda": 12000,
            "gpus": [geforce(i) for i in range(4)],
            "topology": _pairs(4, lambda i, j: 30 if (i < 2) == (j < 2) else 50),
            "p2p": _pairs(4, lambda i, j: PCIE_OK),
        },
        "2xRTX3090-no-p2p": {  # across CPUs, the chipset does not route P2P
            "driver": "550.54.15",
            "cuda": 12040,
            "gpus": [dict(geforce(i, "NVIDIA GeForce RTX 3090"), cc=(8, 6)) for i in range(2)],
            "topology": {"0-1": 50},
            "p2p": {"0-1": (1, 1, 5)},
        },
        "2xL40S-regkey": {  # data-center GPUs whose P2P a driver setting disables
            "driver": "550.54.15",
            "cuda": 12040,
            "gpus": [dict(geforce(i, "NVIDIA L40S"), cc=(8, 9)) for i in range(2)],
            "topology": {"0-1": 10},
            "p2p": {"0-1": (4, 4, 5)},
        },
    }
)


# --------------------------------------------------------------------------- in a child process


def machine_from_arg(arg: str) -> Dict[str, Any]:
    """A name in MACHINES, or a machine as JSON (lists stand in for tuples)."""
    return json.loads(arg) if arg.lstrip().startswith("{") else MACHINES[arg]


def run_envcheck(machine: Dict[str, Any], args: List[str]) -> None:
    """The console script's entry point with the fake standing in for ``pynvml``.

    The fake replaces the module only, at the same boundary as ``make_nvml``:
    everything from ``import pynvml`` on is the code that runs against a driver.
    """
    sys.modules["pynvml"] = make_nvml(machine)
    from envcheck._entry import main

    main(args)


if __name__ == "__main__":
    # python -m tests.fake_nvml MACHINE [ARGS...]: `envcheck ARGS` on a fake machine, in a
    # real process (stdout, pipes, exit codes), from the repository root.
    run_envcheck(machine_from_arg(sys.argv[1]), sys.argv[2:])
