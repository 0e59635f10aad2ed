"""The CUDA toolkit used to build extensions: ``nvcc`` and ``CUDA_HOME``.

torch's own wheels carry their CUDA runtime; the toolkit matters when a package
compiles a CUDA extension (flash-attn, apex, a project's own kernels), where
torch's ``cpp_extension`` refuses an nvcc whose major differs from torch's CUDA.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Dict, Optional

from .. import _proc
from ..facts import ToolkitFacts

_RELEASE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_SHORT = re.compile(r"release (\d+\.\d+)")


def parse_nvcc_version(text: str) -> Optional[str]:
    """``Cuda compilation tools, release 12.4, V12.4.131`` -> ``12.4.131``."""
    match = _RELEASE.search(text)
    if match:
        return match.group(2)
    match = _SHORT.search(text)
    return match.group(1) if match else None


def probe_toolkit(environ: Optional[Dict[str, str]] = None, timeout: float = 10.0) -> ToolkitFacts:
    """nvcc and CUDA_HOME, then the rest of the toolchain (envcheck.probes.toolchain)."""
    from .toolchain import probe_toolchain

    env = dict(os.environ) if environ is None else environ
    return probe_toolchain(_nvcc(env, timeout), env, timeout)


def _nvcc(env: Dict[str, str], timeout: float) -> ToolkitFacts:
    facts = ToolkitFacts()
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            facts.cuda_home, facts.cuda_home_source = env[var], var
            break
    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if nvcc is None and facts.cuda_home:
        candidate = os.path.join(facts.cuda_home, "bin", "nvcc")
        nvcc = candidate if os.access(candidate, os.X_OK) else None
    if nvcc is None and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        nvcc = "/usr/local/cuda/bin/nvcc"  # where torch.utils.cpp_extension looks last
    if nvcc is None:
        return facts
    facts.nvcc_path = nvcc
    if facts.cuda_home is None:
        real = os.path.realpath(nvcc)
        facts.cuda_home = os.path.dirname(os.path.dirname(real))
        facts.cuda_home_source = "nvcc"
    facts.nvcc_version = _version_of(nvcc, env, timeout)
    explicit = facts.cuda_home_source in ("CUDA_HOME", "CUDA_PATH") and facts.cuda_home
    if explicit:
        home_nvcc = os.path.join(facts.cuda_home or "", "bin", "nvcc")
        if os.access(home_nvcc, os.X_OK) and not _same_file(home_nvcc, nvcc):
            facts.cuda_home_nvcc = home_nvcc
            facts.cuda_home_nvcc_version = _version_of(home_nvcc, env, timeout)
    return facts


def _version_of(nvcc: str, env: Dict[str, str], timeout: float) -> Optional[str]:
    try:
        result = _proc.run([nvcc, "--version"], timeout=timeout, env=env)
    except OSError:
        return None
    return parse_nvcc_version(result.stdout)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(os.path.realpath(a), os.path.realpath(b))
    except OSError:
        return False
