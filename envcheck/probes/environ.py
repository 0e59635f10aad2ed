"""Environment variables that change how torch and CUDA behave, minus secrets.

Only an allowlist is recorded, and within it any name that looks like it holds
a credential is dropped and any URL loses its user and password: a report is
meant to be pasted into an issue tracker.
"""

from __future__ import annotations

import re
from typing import Dict, Mapping

EXACT = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_ORDER",
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDA_MODULE_LOADING",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_CACHE_PATH",
        "CUDA_CACHE_DISABLE",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA_REQUIRE_CUDA",
        "NVIDIA_DISABLE_REQUIRE",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "HSA_OVERRIDE_GFX_VERSION",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "DYLD_LIBRARY_PATH",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "CONDA_OVERRIDE_CUDA",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "KMP_AFFINITY",
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GLOO_SOCKET_IFNAME",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_TORCH_BACKEND",
        "UV_CUDA_DRIVER_VERSION",
    }
)
PREFIXES = (
    "NCCL_",
    "TORCH_",
    "PYTORCH_",
    "TORCHINDUCTOR_",
    "TRITON_",
    "CUBLAS_",
    "CUDNN_",
    "ENVCHECK_",
)
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|PASSWD|CREDENTIAL|AUTH|API_?KEY|PRIVATE", re.I)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")


def wanted(name: str) -> bool:
    return name in EXACT or name.startswith(PREFIXES)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_value(value: str, show_ids: bool = False) -> str:
    """Drop credentials from URLs and, unless asked, GPU UUIDs from device lists."""
    value = _URL_USERINFO.sub(r"\g<scheme>***@", value)
    if not show_ids:
        value = _GPU_UUID.sub(r"\1-redacted", value)
    return value


def probe_environ(environ: Mapping[str, str], show_ids: bool = False) -> Dict[str, str]:
    return {
        name: redact_value(environ[name], show_ids)
        for name in sorted(environ)
        if wanted(name) and not is_secret_name(name)
    }
