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
        "CUDA_VERSION",  # set by NVIDIA's CUDA images, as NV_CUDA_LIB_VERSION is
        "NV_CUDA_LIB_VERSION",
        "NVIDIA_DISABLE_REQUIRE",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "HSA_OVERRIDE_GFX_VERSION",
        "LD_LIBRARY_PATH",
        "LIBRARY_PATH",  # where the linker looks (libcuda.so for Triton)
        "CC",
        "CXX",
        "NVCC_CCBIN",
        "CUDAHOSTCXX",
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
# Names of query parameters that carry a credential (?access_token=..., &sig=...).
_SECRET_KEY = re.compile(r"token|secret|passw|pwd|auth|key|sig|credential|session", re.I)
# Words after which the next word is a credential: "Bearer abc", "Basic dXNl...".
_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})
_SPACE = re.compile(r"(\s+)")
_AUTHORITY_END = re.compile(r"[/?#]")
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")


def wanted(name: str) -> bool:
    return name in EXACT or name.startswith(PREFIXES)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_value(value: str, show_ids: bool = False) -> str:
    """Drop credentials (URL userinfo, token-like query parameters, Authorization-style
    values) and, unless asked, GPU UUIDs from device lists.

    Word by word with plain string operations, so the time is linear in the length of
    the value (a regular expression searching for "scheme://" or "key=" at every
    position is quadratic on a long value without one)."""
    words = _SPACE.split(value)
    after_scheme = False
    for i in range(0, len(words), 2):  # even indexes are words, odd ones the spaces
        word = words[i]
        if not word:
            continue
        if after_scheme:
            words[i] = "***"
            after_scheme = False
            continue
        if word.rstrip(":,;").lower() in _AUTH_SCHEMES:
            after_scheme = True
        words[i] = _redact_query(_redact_userinfo(word))
    value = "".join(words)
    if not show_ids:
        value = _GPU_UUID.sub(r"\1-redacted", value)
    return value


def _redact_userinfo(word: str) -> str:
    """``scheme://user:pass@host`` -> ``scheme://***@host``; the userinfo runs to the
    last "@" before the path, query or fragment (a password may hold "@")."""
    out = []
    pos = 0
    while True:
        at = word.find("://", pos)
        if at < 0:
            break
        start = at + 3
        stop = _AUTHORITY_END.search(word, start)
        end = stop.start() if stop else len(word)
        userinfo_end = word.rfind("@", start, end)
        out.append(word[pos:start])
        if userinfo_end >= 0:
            out.append("***")
            pos = userinfo_end
        else:
            pos = start
    out.append(word[pos:])
    return "".join(out)


def _redact_query(word: str) -> str:
    """``?access_token=abc&x=1`` -> ``?access_token=***&x=1``."""
    q = word.find("?")
    if q < 0:
        return word
    head, query = word[: q + 1], word[q + 1 :]
    fragment = ""
    if "#" in query:
        query, fragment = query.split("#", 1)
        fragment = "#" + fragment
    parts = re.split(r"([&;])", query)
    for i in range(0, len(parts), 2):
        key, eq, _ = parts[i].partition("=")
        if eq and _SECRET_KEY.search(key):
            parts[i] = key + "=***"
    return head + "".join(parts) + fragment


def probe_environ(environ: Mapping[str, str], show_ids: bool = False) -> Dict[str, str]:
    return {
        name: redact_value(environ[name], show_ids)
        for name in sorted(environ)
        if wanted(name) and not is_secret_name(name)
    }
