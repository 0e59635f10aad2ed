"""detectron2's and mmcv's ``collect_env``: a table of names and values (``PyTorch  1.4.0
@/path``, ``GPU 0  Tesla V100``, ``detectron2 arch flags  sm_70``, ``NVCC  Cuda compilation
tools, ...``), read for torch, Python, the OS, the CUDA toolkit, the driver and the GPUs."""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from .._patterns import compile_on_use
from ..facts import GpuFacts
from ..probes.toolkit import parse_nvcc_version
from ..values import ComputeCapability
from .reading import VERSION, Reading, lowered, set_companion, set_python, set_torch

# detectron2 / mmcv tables: a name, two or more spaces (or a tab), the value
_D2_ROW = compile_on_use(r"^\s*([A-Za-z][\w .()/-]{0,40}?)(?:\s{2,}|\t|:\s+)(\S.{0,300})$")
_D2_GPU = compile_on_use(r"^GPU\s?(\d{1,2}(?:,\d{1,2}){0,15})$")


def read_detectron2_table(text: str, lines: List[str], reading: Reading) -> None:
    """detectron2's and mmcv's collect_env: a table of name and value. A text that never
    names either has no row that says it is one (a row's lower-cased name holds the word,
    so the lower-cased text does): its lines are not read as rows."""
    low = lowered(text)
    if "detectron2" not in low and "mmcv" not in low:
        return
    rows, gpus = _d2_rows(lines)
    if not any(k in rows for k in ("detectron2", "mmcv", "mmcv compiler", "detectron2 arch flags")):
        return
    reading.pieces.append("detectron2/mmcv collect_env")
    _d2_torch(rows, reading)
    _d2_cuda(rows, gpus, reading)


# How the names of the rows _d2_torch and _d2_cuda read, and of the GPU rows, start (in
# lower case): a line whose first word starts otherwise is no row they read, and is not
# matched against the row pattern (most lines of a long text are none).
_D2_NAMES = (
    "detectron2", "mmcv", "pytorch", "python", "sys.platform", "torchvision", "torchaudio",
    "cuda compiler", "nvcc", "driver version", "gpu",
)  # fmt: skip


def _d2_rows(lines: List[str]) -> Tuple[Dict[str, str], List[GpuFacts]]:
    """The table's rows by lower-case name (the first of a name wins) of those read, and its
    GPU rows. (A row's name starts after the white space that starts its line.)"""
    rows: Dict[str, str] = {}
    gpus: List[GpuFacts] = []
    longest = max(map(len, _D2_NAMES))
    for line in lines:
        if not line.lstrip()[:longest].lower().startswith(_D2_NAMES):
            continue
        match = _D2_ROW.match(line)
        if not match:
            continue
        key, val = match.group(1).strip(), match.group(2).strip()
        gpu = _D2_GPU.match(key)
        if gpu:  # "GPU 0,1  Tesla V100-SXM2-16GB (arch=7.0)"
            name = re.sub(r"\s*\(arch=[\d.]+\)\s*$", "", val)
            arch = re.search(r"\(arch=(\d{1,2}\.\d)\)", val)
            cc = ComputeCapability.maybe(arch.group(1)) if arch else None
            for i in gpu.group(1).split(","):
                gpus.append(GpuFacts(index=int(i), name=name, compute_capability=cc))
            continue
        rows.setdefault(key.lower(), val)
    return rows, gpus


def _d2_torch(rows: Dict[str, str], reading: Reading) -> None:
    """The table's torch build, Python, OS and torch's companions."""
    torch = re.match(VERSION, rows.get("pytorch", ""))
    if torch:
        set_torch(reading, torch.group(1), None, "detectron2/mmcv collect_env")
    debug = rows.get("pytorch debug build")
    if debug is not None and reading.facts.torch.debug is None:
        reading.facts.torch.debug = debug.lower() == "true"
    cuda = re.match(r"(\d{1,2}\.\d{1,2})", rows.get("pytorch cuda", "") or "")
    if cuda and not reading.facts.torch.cuda:
        reading.facts.torch.cuda = cuda.group(1)
    py = re.match(r"(\d\.\d{1,2}(?:\.\d{1,2})?)", rows.get("python", ""))
    if py:
        set_python(reading, py.group(1), "detectron2/mmcv collect_env")
    plat = rows.get("sys.platform")
    if plat and not reading.facts.system.os:
        os_name = {"linux": "Linux", "win32": "Windows", "darwin": "Darwin"}.get(plat)
        if os_name:
            reading.facts.system.os = os_name
    for name in ("torchvision", "torchaudio"):
        version = re.match(VERSION, rows.get(name, ""))
        if version:
            set_companion(reading, name, version.group(1))


def _d2_cuda(rows: Dict[str, str], gpus: List[GpuFacts], reading: Reading) -> None:
    """The table's CUDA side: nvcc, the driver, the GPUs, and the CUDA detectron2 was built
    with against torch's."""
    compiler = re.match(r"CUDA (\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)$", rows.get("cuda compiler", ""))
    nvcc = parse_nvcc_version(rows.get("nvcc", "")) if "nvcc" in rows else None
    nvcc = nvcc or (compiler.group(1) if compiler else None)
    if nvcc and not reading.facts.toolkit.nvcc_version:
        reading.facts.toolkit.nvcc_version = nvcc
        reading.observed.add("toolkit")
    driver = re.match(r"(\d{3}\.\d{1,3}(?:\.\d{1,3})?)", rows.get("driver version", ""))
    if driver and not reading.facts.nvidia.driver_version:
        reading.facts.nvidia.driver_version = driver.group(1)
        reading.facts.nvidia.driver_version_source = "detectron2/mmcv collect_env"
        reading.observed.add("nvidia")
    if gpus and not reading.facts.nvidia.gpus:
        reading.facts.nvidia.gpus = gpus[:64]
        reading.observed.add("nvidia")
    flags = rows.get("detectron2 arch flags")
    if flags:
        reading.notes.append(f"detectron2 was compiled for: {flags}")
    built = re.search(r"\d{1,2}\.\d{1,2}", rows.get("detectron2 cuda compiler") or "")
    built_cuda = built.group(0) if built else (compiler.group(1) if compiler else None)
    torch_cuda = reading.facts.torch.cuda
    if built_cuda and torch_cuda and built_cuda.split(".")[0] != torch_cuda.split(".")[0]:
        reading.notes.append(
            f"detectron2 was built with CUDA {built_cuda} but torch with CUDA {torch_cuda}: "
            "rebuild detectron2 against this torch (remove build/ and **/*.so first)"
        )
