"""Readers for the small fragments users paste instead of a whole collect_env: `nvcc -V`,
`pip list` / `pip freeze` / `conda list` lines, what `python -c "import torch;
print(torch.__version__, torch.version.cuda)"` prints, `uname -a` or `/proc/version`
(which tell WSL apart), and `sw_vers`.

Each reader takes facts from any line it recognises, wherever it stands (the text is
already cleaned of markdown, quotes and Windows line endings), never overwrites a fact a
fuller reader (collect_env, nvidia-smi) set, and says in the reading's notes when the
text contradicts itself. Every pattern is anchored and linear in a line's length.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from .._patterns import compile_on_use
from ..facts import PackageFacts
from ..probes.nvidia import cuda_version_from_int
from ..probes.toolkit import parse_nvcc_version
from .reading import Reading, lines_holding, lines_of, note_conflict, set_python, set_torch

_NVCC = compile_on_use(r"^\s*Cuda compilation tools, release \d+\.\d+, V\d+\.\d+\.\d+\s*$")
# a build running one toolkit's nvcc or compiling against its headers: "/usr/local/cuda-9.0/
# bin/nvcc", "/usr/local/cuda-9.0/include/crt/host_config.h" (a library path says less)
_TOOLKIT_PATH = compile_on_use(r"/usr/local/cuda-(\d{1,2}\.\d)/(?:bin/nvcc|include/)")
_TORCH_PRINT = compile_on_use(
    r"^\s*(\d{1,3}\.\d{1,3}\.\d{1,3}(?:\.?[a-z]+\d*)?\+(cu\d{2,3}|cpu|rocm\d+(?:\.\d+){0,2}|xpu))"
    r"(?:\s+(\d{1,2}\.\d{1,2}|None))?\s*$"
)
_PACKAGES = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton")
# "torch==2.1.0", "torch    2.1.0+cu121" (pip list), and what reporters type: "torch: 2.3.0",
# "- torch   2.1.2"
_PIP_LINE = compile_on_use(
    r"^\s*(?:[-*]\s+)?(torch|torchvision|torchaudio|triton|pytorch-triton)"
    r"(?:\s*==\s*|\s*:\s*|\s{2,}|\s*(?=\d))"
    r"(\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:\.?[a-z]+\d*)?(?:\+[a-z0-9.]+)?)\s*$"
)
_PYTHON_LINE = compile_on_use(
    r"^\s*(?:[-*]\s+)?python\s*[:=]?\s*(3\.\d{1,2}(?:\.\d{1,2})?)(?:[+\w.-]{0,10})?\s*$",
    re.IGNORECASE,
)
_CONDA_LINE = compile_on_use(
    r"^\s*(pytorch|torchvision|torchaudio)\s+(\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)\s+(\S+)(?:\s+(\S+))?\s*$"
)
# the CUDA and Python of a conda build string: "py3.11_cuda12.1_cudnn8_0" (pytorch's channel),
# "cuda118_py312h3690e1b_301" (conda-forge's, no dot)
_CONDA_CUDA = compile_on_use(r"cuda(\d{1,2}\.\d|1\d{2}(?=_|$))")
_CONDA_PY = compile_on_use(r"(?:^|_)py(3\.?\d{1,2})(?=_|h[0-9a-f]|$)")
_UNAME = compile_on_use(
    r"^\s*(?:Linux version (\S+)|Linux \S+ (\S+) .*?\s(x86_64|aarch64|arm64|ppc64le|s390x)(?: \S+)?\s*$)"
)
_SW_VERS = compile_on_use(r"^\s*ProductVersion:\s*(\d+(?:\.\d+){0,2})\s*$")
_SW_NAME = compile_on_use(r"^\s*ProductName:\s*(macOS|Mac OS X)\s*$")


def read_fragments(text: str, reading: Reading) -> None:
    lines = lines_of(text)
    _nvcc(lines, reading)
    _torch_print(lines, reading)
    _package_lines(text, lines, reading)
    _python_line(lines, reading)
    _uname(text, lines, reading)
    _nvrm(lines, reading)
    _nccl_log(lines, reading)
    _sw_vers(text, lines, reading)


def _nvcc(lines: List[str], reading: Reading) -> None:
    line = next((x for x in lines if _NVCC.match(x)), None)
    if line is None:
        _toolkit_path(lines, reading)
        return
    version = parse_nvcc_version(line)
    tk = reading.facts.toolkit
    if version and not note_conflict(reading, "nvcc", tk.nvcc_version, version):
        tk.nvcc_version = version
        reading.observed.add("toolkit")
        reading.pieces.append("nvcc -V")


def _toolkit_path(lines: List[str], reading: Reading) -> None:
    """The toolkit a build ran, from its nvcc's or headers' path, when the text shows one."""
    found = {
        m.group(1) for x in lines if "/usr/local/cuda-" in x for m in _TOOLKIT_PATH.finditer(x)
    }
    tk = reading.facts.toolkit
    if len(found) == 1 and not tk.nvcc_version:
        tk.nvcc_version = found.pop()
        reading.observed.add("toolkit")
        reading.pieces.append("toolkit path")


def _torch_print(lines: List[str], reading: Reading) -> None:
    for line in lines:
        match = _TORCH_PRINT.match(line)
        if match:
            cuda = match.group(3) if match.group(3) not in (None, "None") else None
            set_torch(reading, match.group(1), cuda, "torch.__version__ output")
            return


def _package_lines(text: str, lines: List[str], reading: Reading) -> None:
    found: Dict[str, Tuple[str, Optional[str]]] = {}
    for number in lines_holding(text, ("torch", "triton")):  # every package below names one
        line = lines[number]
        match = _PIP_LINE.match(line)
        if match:
            found.setdefault(match.group(1), (match.group(2), None))
            continue
        match = _CONDA_LINE.match(line)
        if match:
            name = "torch" if match.group(1) == "pytorch" else match.group(1)
            build = _CONDA_CUDA.search(match.group(3))
            cuda = build.group(1) if build else None
            if cuda and "." not in cuda:  # conda-forge's "cuda118": 11.8
                cuda = f"{cuda[:-1]}.{cuda[-1]}"
            found.setdefault(name, (match.group(2), cuda))
            if name == "torch":
                _conda_python(match.group(3), reading)
    if not found:
        return
    if "torch" in found:
        version, built_for = found.pop("torch")
        set_torch(reading, version, built_for, "package list")
    t = reading.facts.torch
    have = {p.name for p in t.companions}
    t.companions += [PackageFacts(name, v) for name, (v, _) in found.items() if name not in have]
    if found and "package list" not in reading.pieces:
        reading.pieces.append("package list")


def _conda_python(build: str, reading: Reading) -> None:
    """The Python a conda build of torch was built for is the environment's (py312: 3.12)."""
    py = _CONDA_PY.search(build)
    if py:
        digits = py.group(1).replace(".", "")
        set_python(reading, f"{digits[0]}.{digits[1:]}", "package list")


def _python_line(lines: List[str], reading: Reading) -> None:
    """``python 3.12.7`` or ``Python: 3.10`` on a line of its own (``python --version``
    prints ``Python 3.12.7``)."""
    match = next((m for m in map(_PYTHON_LINE.match, lines) if m), None)
    if match:
        set_python(reading, match.group(1), "Python version line")


def _uname(text: str, lines: List[str], reading: Reading) -> None:
    s = reading.facts.system
    for number in lines_holding(text, ("Linux ",)):  # both of its lines start so
        match = _UNAME.match(lines[number])
        if not match:
            continue
        kernel = match.group(1) or match.group(2)
        if note_conflict(reading, "the kernel", s.kernel, kernel):
            return
        s.os, s.kernel = "Linux", kernel
        low = kernel.lower()
        if "microsoft" in low:
            s.wsl = 2 if ("wsl2" in low or "microsoft-standard" in low) else 1
        if match.group(3):
            s.machine = match.group(3)
            reading.observed.add("system")  # OS and architecture: enough to judge a platform
        reading.pieces.append("uname" if match.group(2) else "/proc/version")
        return


_NVRM = compile_on_use(
    r"\bNVRM version: NVIDIA UNIX (?:Open Kernel Module for )?(x86_64|aarch64) Kernel Module\s+"
    r"(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b"
)


def _nvrm(lines: List[str], reading: Reading) -> None:
    """``cat /proc/driver/nvidia/version``: the loaded kernel driver's version (its line
    pasted alone or quoted in a sentence)."""
    match = next((m for m in (_NVRM.search(x) for x in lines if "NVRM" in x) if m), None)
    if match is None:
        return
    nv, s = reading.facts.nvidia, reading.facts.system
    if note_conflict(reading, "the driver", nv.driver_version, match.group(2)):
        return
    nv.driver_version, nv.driver_version_source = match.group(2), "/proc/driver/nvidia/version"
    s.os, s.machine = s.os or "Linux", s.machine or match.group(1)
    reading.observed.add("nvidia")
    reading.pieces.append("/proc/driver/nvidia/version")


_NCCL_VERSION = compile_on_use(r"NCCL version (\d{1,2}\.\d{1,3}\.\d{1,3})\+cuda(\d{1,2}\.\d{1,2})")
_NCCL_DRIVER = compile_on_use(r"NCCL INFO cudaDriverVersion (\d{4,6})\b")


def _nccl_log(lines: List[str], reading: Reading) -> None:
    """An NCCL_DEBUG=INFO log: NCCL's version, and the CUDA the driver supports."""
    for line in lines:
        if "NCCL" not in line:
            continue
        version = _NCCL_VERSION.search(line)
        if version and not reading.facts.torch_runtime.nccl_version:
            reading.facts.torch_runtime.nccl_version = version.group(1)
            reading.pieces.append("NCCL log")
        driver = _NCCL_DRIVER.search(line)
        nv = reading.facts.nvidia
        if driver and not nv.cuda_driver_version and not nv.driver_version:
            nv.cuda_driver_version = cuda_version_from_int(int(driver.group(1)))
            reading.observed.add("nvidia")


def _sw_vers(text: str, lines: List[str], reading: Reading) -> None:
    if "ProductName:" not in text or not any(_SW_NAME.match(x) for x in lines):
        return  # every name line holds the literal: most texts are read no further
    version = next((m.group(1) for m in map(_SW_VERS.match, lines) if m), None)
    s = reading.facts.system
    if s.os and s.os != "Darwin":
        note_conflict(reading, "the OS", s.os, "Darwin")
        return
    s.os, s.os_version = "Darwin", version or s.os_version
    reading.pieces.append("sw_vers")  # no architecture: not enough to judge the platform
