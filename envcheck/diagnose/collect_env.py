"""Read ``python -m torch.utils.collect_env`` output, and its library section pasted alone.

Also Python's ``platform.platform()`` string (:func:`platform_string`), which collect_env
and other libraries' env dumps print.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from .._patterns import compile_on_use
from ..facts import (
    AmdGpuFacts,
    CondaPackageFacts,
    Facts,
    GpuFacts,
    PackageFacts,
    RuntimeStatus,
)
from ..probes.packages import normalise
from .reading import MAX_GPUS, Reading, at_most, cuda_of_local, lines_of, value

_CUDA = compile_on_use(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?")
_KEYS = {
    "pytorch version": "torch",
    "is debug build": "debug",
    "cuda used to build pytorch": "torch_cuda",
    "rocm used to build pytorch": "torch_rocm",
    "os": "os",
    "gcc version": "gcc",
    "libc version": "libc",
    "python version": "python",
    "python platform": "platform",
    "is cuda available": "cuda_available",
    "cuda runtime version": "cuda_runtime",
    "gpu models and configuration": "gpus",
    "nvidia driver version": "driver",
    "cudnn version": "cudnn",
    "hip runtime version": "hip_runtime",
    "is xpu available": "xpu_available",
}
_GPU_HEAD = compile_on_use(r"\s*GPU\s+(\d{1,6})\s*:")
_PIP = compile_on_use(r"^\[(?:pip|pip3|uv)\]\s+([A-Za-z0-9_.-]+)\s*==\s*(\S+)")
_COMPANIONS = ("torchvision", "torchaudio", "triton", "pytorch-triton")
_MODEL_NAME = compile_on_use(r"^Model name:\s*(.+)$")
_CPU_FIELD = compile_on_use(r"^[A-Za-z0-9 ()/_.-]+:")
_CONDA = compile_on_use(r"^\[conda\]\s+([A-Za-z0-9_.-]+)\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?")


def read_collect_env(text: str, reading: Reading) -> bool:
    """Parse ``python -m torch.utils.collect_env`` output; False when there is none."""
    fields: Dict[str, str] = {}
    extra: Dict[str, List[str]] = {"gpus": [], "cudnn": []}
    current: Optional[str] = None
    libs: List[str] = []
    cpu_model: Optional[str] = None
    section = "top"
    for line in lines_of(text):
        stripped = line.strip()
        if stripped == "CPU:":
            section, current = "cpu", None
            continue
        if stripped.startswith("Versions of relevant libraries"):
            section, current = "libs", None
            continue
        if section == "libs":
            if stripped.startswith("["):
                libs.append(stripped)
                continue
            if stripped:
                section = "top"
        if section == "cpu":
            match = _MODEL_NAME.match(stripped)
            if match:
                cpu_model = match.group(1).strip()
            if stripped and not _CPU_FIELD.match(stripped):
                section = "top"
            else:
                continue
        retyped = stripped[:16].lower() == "pytorch version "
        if current is None and not retyped and ":" not in stripped:
            continue  # no field, and no line of a field's list: most lines of a log
        name, colon, rest = stripped.partition(":")
        if not colon and retyped:
            name, colon, rest = stripped[:15], ":", stripped[16:]  # retyped without its colon
        key = _KEYS.get(name.strip().lower()) if colon else None
        if key:
            fields[key] = rest.strip()
            current = key if key in extra else None
            if key in extra and fields[key]:
                extra[key].append(fields[key])
            continue
        if current and stripped:
            extra[current].append(stripped)
        elif not stripped:
            current = None
    if "torch" not in fields and "cuda_available" not in fields:
        return False
    reading.pieces.append("collect_env")
    _apply_collect_env(fields, extra, libs, cpu_model, reading)
    return True


def _apply_collect_env(
    fields: Dict[str, str],
    extra: Dict[str, List[str]],
    libs: List[str],
    cpu_model: Optional[str],
    reading: Reading,
) -> None:
    """The fields read from collect_env, into the reading's Facts, section by section."""
    f = reading.facts
    _torch(fields, reading)
    _os(fields, f, reading)
    _python(fields, reading)
    _toolkit(fields, extra["cudnn"], reading)
    _gpus(fields, extra["gpus"], reading)
    if cpu_model:
        f.system.cpu_model = cpu_model
    _libraries(libs, reading)


def _torch(fields: Dict[str, str], reading: Reading) -> None:
    """The torch build (version, CUDA or ROCm it was built with, debug), and whether CUDA
    initialised in it."""
    f = reading.facts
    torch = value(fields.get("torch"))
    if "torch" in fields:
        reading.observed.add("torch")
        f.torch.installed = torch is not None
        f.torch.version = f.torch.dist_version = torch
        cuda = value(fields.get("torch_cuda"))
        f.torch.cuda = (cuda if cuda and _CUDA.fullmatch(cuda) else None) or cuda_of_local(torch)
        rocm = value(fields.get("torch_rocm"))
        f.torch.hip = rocm
        debug = value(fields.get("debug"))
        f.torch.debug = {"true": True, "false": False}.get((debug or "").lower())
    if torch is not None and "cuda_available" in fields:
        reading.observed.add("torch_runtime")
        rt = f.torch_runtime
        rt.status, rt.version, rt.cuda = RuntimeStatus.OK, torch, f.torch.cuda
        rt.cuda_available = {"true": True, "false": False}.get(
            (fields["cuda_available"] or "").lower()
        )


def _python(fields: Dict[str, str], reading: Reading) -> None:
    """``Python version: 3.10.12 (main, ...) [GCC 11.4.0] (64-bit runtime)``."""
    f = reading.facts
    py = value(fields.get("python"))
    if py:
        reading.observed.add("python")
        match = re.match(r"(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])", py)
        f.python.version = match.group(1) if match else ""
        bits = re.search(r"\((\d{1,3})-bit runtime\)", py)
        f.python.bits = int(bits.group(1)) if bits else None
        f.python.implementation = "CPython"
        f.python.env_kind = "unknown"


def _toolkit(fields: Dict[str, str], cudnn: List[str], reading: Reading) -> None:
    """The nvcc on PATH, and what collect_env's two misleading lines really say."""
    f = reading.facts
    runtime = value(fields.get("cuda_runtime"))
    if runtime:
        reading.observed.add("toolkit")
        f.toolkit.nvcc_version = runtime
        reading.notes.append(
            f"collect_env's 'CUDA runtime version: {runtime}' is the nvcc on PATH (recorded as the "
            "CUDA toolkit), not the CUDA runtime torch uses (that is 'CUDA used to build PyTorch')"
        )
    if any("libcudnn" in line for line in cudnn):
        reading.notes.append(
            "collect_env's 'cuDNN version' lists cuDNN files found on the system, not the cuDNN torch "
            "loaded (pip wheels bring their own)"
        )


def _gpus(fields: Dict[str, str], lines: List[str], reading: Reading) -> None:
    """The NVIDIA driver, and the GPUs listed: AMD ones (a ROCm report) apart from NVIDIA's."""
    f = reading.facts
    driver = value(fields.get("driver"))
    gpus = at_most(_gpu_names(lines), reading, "collect_env")
    if driver or gpus:
        reading.observed.add("nvidia")
    if driver:
        f.nvidia.driver_version, f.nvidia.driver_version_source = driver, "collect_env"
        f.nvidia.nvml.ok = True
    amd = [(i, n) for i, n in gpus if f.torch.hip or "AMD" in n or "gfx" in n]
    if amd:  # a ROCm report: "AMD Instinct MI300X (gfx942:sramecc+:xnack-)"
        reading.observed.add("amd")
        for i, name in amd:
            gfx = re.search(r"\b(gfx[0-9a-f]+)", name)
            f.amd.gpus.append(AmdGpuFacts(index=i, gfx=gfx.group(1) if gfx else None))
        gpus = [g for g in gpus if g not in amd]
        if not driver:
            reading.observed.discard("nvidia")
    if gpus and not f.nvidia.gpus:
        f.nvidia.gpus = [GpuFacts(index=i, name=name) for i, name in gpus]


def _gpu_names(lines: List[str]) -> List[Tuple[int, str]]:
    out: List[Tuple[int, str]] = []
    for line in lines:
        if len(out) > MAX_GPUS:
            break  # the caller keeps MAX_GPUS, and notes that there were more
        gpu = _gpu_line(line)
        if gpu:
            out.append(gpu)
        elif value(line) and not out and not line.lower().startswith("probably"):
            out.append((0, line.strip()))  # one GPU, printed without "GPU 0:"
    return out


def _gpu_line(line: str) -> Optional[Tuple[int, str]]:
    """``GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`` -> (0, "NVIDIA A100-SXM4-80GB")."""
    match = _GPU_HEAD.match(line)
    if not match:
        return None
    rest = line[match.end() :].lstrip()
    cut = rest.find("(UUID:", 1)
    name = (rest if cut < 0 else rest[:cut]).rstrip()
    return (int(match.group(1)), name) if name else None


def _os(fields: Dict[str, str], f: Facts, reading: Reading) -> None:
    os_text = value(fields.get("os"))
    platform = value(fields.get("platform")) or ""
    if not os_text and not platform:
        return
    reading.observed.add("system")
    if platform:
        platform_string(platform, reading)
    text = os_text or ""
    if not f.system.os:
        if "macOS" in text or "Mac OS" in text:
            f.system.os = "Darwin"
        elif "Windows" in text:
            f.system.os = "Windows"
        elif text:  # "Ubuntu 22.04.3 LTS (x86_64)", "CentOS Linux 7 (Core)", "Debian ..."
            f.system.os = "Linux"
    arch = re.search(r"\((x86_64|aarch64|arm64|AMD64|x86|i386|i686|ppc64le)\)\s*$", text)
    if arch and not f.system.machine:
        f.system.machine = arch.group(1)
    if f.system.os == "Linux" and text:
        distro = re.sub(r"\s*\((?:x86_64|aarch64|arm64|ppc64le)\)\s*$", "", text)
        f.system.distro_name = distro or None
    elif f.system.os == "Darwin":
        version = re.search(r"macOS\s+([\d.]+)", text)
        if version:
            f.system.os_version = version.group(1)
        if "arm64" in text and not f.system.machine:
            f.system.machine = "arm64"
    glibc = re.match(r"glibc-([\d.]+)", value(fields.get("libc")) or "")
    if glibc:
        f.system.glibc = glibc.group(1)


def platform_string(platform: str, reading: Reading) -> None:
    """Python's ``platform.platform()`` as collect_env and library env dumps print it:
    ``Linux-5.15.0-91-generic-x86_64-with-glibc2.35``, ``Windows-10-10.0.22631-SP0``,
    ``macOS-14.2.1-arm64-arm-64bit``: the OS, kernel, architecture, glibc, WSL."""
    s = reading.facts.system
    platform = platform.strip()
    kernel = re.match(
        r"Linux-(.{1,80}?)-(x86_64|aarch64|ppc64le|s390x|i686)(?:-with-(?:glibc([\d.]{1,8})|.{0,40}))?$",
        platform,
    )
    if kernel:
        s.os = s.os or "Linux"
        s.kernel = s.kernel or kernel.group(1)
        s.machine = s.machine or kernel.group(2)
        if kernel.group(3) and not s.glibc:
            s.glibc = kernel.group(3)
        low = kernel.group(1).lower()
        if "microsoft" in low:
            s.wsl = 2 if ("wsl2" in low or "microsoft-standard" in low) else 1
    elif platform.startswith(("macOS", "Darwin")):
        s.os = s.os or "Darwin"
        version = re.match(r"macOS-([\d.]{1,12})", platform)
        if version and not s.os_version:
            s.os_version = version.group(1).rstrip(".")
        s.machine = s.machine or ("arm64" if "arm64" in platform else "x86_64")
    elif platform.startswith("Windows"):
        s.os = s.os or "Windows"
        version = re.match(r"Windows-(?:\d+)-([\d.]+)", platform)
        if version and not s.os_version:
            s.os_version = version.group(1)
        s.machine = s.machine or "AMD64"
    else:
        return
    reading.observed.add("system")


def read_library_lines(lines: List[str], reading: Reading) -> None:
    """collect_env's library section pasted alone (``[pip3] torch==2.1.0``, ``[conda]
    pytorch 2.1.0 py3.11_cuda12.1_cudnn8_0 pytorch``): read when no collect_env was."""
    if "collect_env" in reading.pieces:
        return
    libs = [line.strip() for line in lines if line.lstrip().startswith(("[pip", "[conda]", "[uv]"))]
    if not libs:
        return
    before = (len(reading.facts.torch.installs), len(reading.facts.torch.conda_packages))
    _libraries(libs, reading)
    t = reading.facts.torch
    if (len(t.installs), len(t.conda_packages)) == before and not t.companions:
        return
    reading.pieces.append("collect_env library lines")
    torch = next((p.version for p in t.installs if p.name == "torch"), None)
    conda = next((p for p in t.conda_packages if p.name == "pytorch"), None)
    if t.version is None and (torch or conda):
        version = torch or conda.version  # type: ignore[union-attr]
        t.installed, t.version, t.dist_version = True, version, version
        cuda = re.search(r"cuda(\d{1,2}\.\d)", (conda.build or "") if conda else "")
        t.cuda = cuda_of_local(version) or (cuda.group(1) if cuda else None)
        reading.observed.add("torch")


def _installed_by(channel: str, reading: Reading) -> None:
    """The manager that installed torch, from conda's list: its ``pypi`` channel is pip's
    install into the conda environment, any other channel (pytorch, conda-forge) conda's."""
    manager = "pip" if channel == "pypi" else "conda"
    reading.extra.setdefault("stated", {}).setdefault("package_manager", manager)


def _libraries(libs: List[str], reading: Reading) -> None:
    f = reading.facts
    for line in libs:
        pip = _PIP.match(line)
        if pip:
            name, version = normalise(pip.group(1)), pip.group(2)
            if name == "torch":
                f.torch.installs.append(PackageFacts("torch", version, None, "pip"))
            elif name in _COMPANIONS or (name.startswith("nvidia-") and name != "nvidia-ml-py"):
                f.torch.companions.append(PackageFacts(name, version, None, "pip"))
            continue
        conda = _CONDA.match(line)
        if conda:
            name = normalise(conda.group(1))
            if name in ("torch", "pytorch") and conda.group(4):
                _installed_by(conda.group(4), reading)
            if name in (
                "pytorch",
                "pytorch-cuda",
                "torchvision",
                "torchaudio",
                "cudatoolkit",
                "cuda-version",
                "pytorch-mutex",
            ):
                build = conda.group(3)
                channel = conda.group(4)
                f.torch.conda_packages.append(
                    CondaPackageFacts(name, conda.group(2), build, channel)
                )
