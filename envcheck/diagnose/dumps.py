"""Readers for the environment dumps of other tools, and for facts scattered through logs.

- detectron2's and mmcv's ``collect_env`` tables (their own module: detectron2.py);
- ``transformers-cli env`` / ``accelerate env`` / diffusers / vLLM bullet lists
  (``- PyTorch version (GPU?): 2.0.1+cu117 (True)``, ``- Platform: Linux-...-x86_64-with-glibc2.35``);
- Lightning's nested list (``* CUDA:`` ... ``- GPU:`` ... ``- NVIDIA A100`` ... ``- version: 11.8``);
- collect_env fragments: its library section alone (``[pip3] torch==...``), a key without its
  colon (``PyTorch version 1.5.0``);
- ``echo $LD_LIBRARY_PATH`` and ``LD_LIBRARY_PATH=...``;
- pip's ``(from versions: ...)`` list: the newest torch that index had for that platform;
- ``.../lib/python3.10/site-packages/torchvision/...`` paths inside tracebacks: the Python
  version, and which package failed.

Each reader fills only facts still unknown (a fuller reader ran first), records where a
fact came from in the reading's pieces, and reads any line where it stands. Every pattern is
anchored or bounded, so a reader's time grows linearly with a line's length.
"""

from __future__ import annotations

import re
from typing import List

from .._patterns import compile_on_use
from ..facts import GpuFacts, RuntimeStatus
from ..values import Arch
from .collect_env import platform_string, read_library_lines
from .detectron2 import read_detectron2_table
from .reading import (
    VERSION,
    Reading,
    lines_holding,
    lines_of,
    lowered_lines,
    set_companion,
    set_python,
    set_torch,
)

_BULLET = compile_on_use(r"^\s*[-*]\s+`?([A-Za-z][\w .()?/-]{0,60}?)`?\s*:\s*(.{0,300})$")
_LD_PATH = compile_on_use(r"^\s*(?:export\s+)?LD_LIBRARY_PATH\s*=\s*(\S{1,4000})\s*$")
_ECHO_LD_PATH = compile_on_use(r"^\s*\$?\s*echo \$\{?LD_LIBRARY_PATH\}?\s*$")
_FROMVERSIONS = compile_on_use(r"\(from versions:?\s*([^)\n]{0,20000})\)?")
_SITE = compile_on_use(
    r"[/\\](?:lib[/\\])?python(\d)\.?(\d{1,2})[/\\](?:site|dist)-packages[/\\]([A-Za-z_][\w]{0,60})"
)
_WIN_SITE = compile_on_use(
    r"[/\\]Python(\d)(\d{1,2})[/\\]Lib[/\\]site-packages[/\\]([A-Za-z_]\w{0,60})"
)
# an installer's list of the platforms that have wheels: not this machine's (mentions reads
# the OS with these lines left out too)
PLATFORM_LIST = compile_on_use(
    r"only has wheels for the following platforms|wheels with a matching platform tag"
    r"|available for `?[\w-]{1,40}`?(?: \([^)\n]{0,30}\))? on the following platforms"
    r"|is not a supported wheel on this platform"
)


def platform_list(line: str) -> bool:
    """Whether the line is an installer's list of the platforms that have wheels (each
    wording names "platform": a line without it is none)."""
    return "platform" in line and PLATFORM_LIST.search(line) is not None


_MACHINE_HINT = compile_on_use(
    r"(?:^\s*Architecture:\s+(x86_64|aarch64)\s*$|[/(-](x86_64|aarch64)-linux-gnu\b|"
    r"[-_](x86_64|aarch64)\.whl\b|\bwin_(amd64)\b)"
)
_TORCH_NO_COLON = compile_on_use(r"^\s*PyTorch version\s+" + VERSION + r"\s*$")
TORCH_PACKAGES = ("torch", "torchvision", "torchaudio", "xformers", "triton", "flash_attn")


def read_dumps(text: str, reading: Reading) -> None:
    lines = lines_of(text)
    read_detectron2_table(text, lines, reading)
    _bullets(lines, reading)
    _lightning(lines, reading)
    _no_colon(text, lines, reading)
    read_library_lines(lines, reading)
    _ld_library_path(text, lines, reading)
    _pip_versions(text, reading)
    _site_packages(text, lines, reading)
    _machine_hints(text, lines, reading)
    _arch_warning_name(text, lines, reading)
    _reporter_lines(text, lines, reading)
    _torch_config(text, lines, reading)
    _versions_line(text, lines, reading)


def _bullets(lines: List[str], reading: Reading) -> None:
    """transformers / accelerate / diffusers / vLLM env bullets."""
    for line in lines:
        match = _BULLET.match(line)
        if not match:
            continue
        key, val = match.group(1).strip().lower(), match.group(2).strip()
        if key.startswith("pytorch version"):  # "2.0.1+cu117 (True)" or "(GPU?): 2.1 (False)"
            version = re.match(VERSION, val)
            if version:
                set_torch(reading, version.group(1), None, "library env dump")
                gpu = re.search(r"\((True|False)\)", val)
                if gpu and "torch_runtime" not in reading.observed:
                    rt = reading.facts.torch_runtime
                    rt.status, rt.version = RuntimeStatus.OK, version.group(1)
                    rt.cuda = reading.facts.torch.cuda
                    rt.cuda_available = gpu.group(1) == "True"
                    reading.observed.add("torch_runtime")
        elif key == "python version":
            version = re.match(r"(\d\.\d{1,2}(?:\.\d{1,2})?)", val)
            if version:
                set_python(reading, version.group(1), "library env dump")
        elif key == "platform":
            platform_string(val, reading)
        elif key in ("gpu type", "gpu"):
            if val and not reading.facts.nvidia.gpus and "nvidia" in val.lower():
                reading.facts.nvidia.gpus = [GpuFacts(index=0, name=val)]
                reading.observed.add("nvidia")
        elif key in ("torchvision version", "torchaudio version"):
            version = re.match(VERSION, val)
            if version:
                set_companion(reading, key.split()[0], version.group(1))


_LIGHTNING_HEAD = compile_on_use(r"^\s*\*\s+(CUDA|Packages|System|Lightning):\s*$")
_LIGHTNING_ITEM = compile_on_use(r"^\s*-\s+(\S[^:]{0,60}?)(?::\s*(.{0,200}))?$")


def _lightning(lines: List[str], reading: Reading) -> None:
    """Lightning's bug-report env: ``* CUDA:`` / ``- GPU:`` / ``- NVIDIA A100`` /
    ``- available: True`` / ``- version: 11.8``; ``* Packages:`` / ``- torch: 2.0.0``;
    ``* System:`` / ``- python: 3.10.9``."""
    section = None
    in_gpus = False
    gpus: List[str] = []
    for line in lines:
        head = _LIGHTNING_HEAD.match(line) if "*" in line else None
        if head:
            section, in_gpus = head.group(1), False
            continue
        if section is None:
            continue
        item = _LIGHTNING_ITEM.match(line)
        if not item:
            if line.strip():
                section = None
            continue
        key, val = item.group(1).strip(), (item.group(2) or "").strip()
        if section == "CUDA":
            if key == "GPU" and not val:
                in_gpus = True
            elif in_gpus and item.group(2) is None and key not in ("None",):
                gpus.append(key)
            else:
                in_gpus = False
                if key == "version" and re.fullmatch(r"\d{1,2}\.\d{1,2}", val):
                    reading.facts.torch.cuda = reading.facts.torch.cuda or val
        elif section == "Packages" and key in ("torch", "torchvision", "torchaudio"):
            version = re.match(VERSION, val)
            if version and key == "torch":
                set_torch(reading, version.group(1), None, "Lightning env dump")
            elif version:
                set_companion(reading, key, version.group(1))
        elif section == "System" and key == "python":
            version = re.match(r"(\d\.\d{1,2}(?:\.\d{1,2})?)", val)
            if version:
                set_python(reading, version.group(1), "Lightning env dump")
        elif section == "System" and key in ("processor", "machine") and val:
            if val in ("x86_64", "aarch64", "arm64", "AMD64") and not reading.facts.system.machine:
                reading.facts.system.machine = val
        elif section == "System" and key == "OS" and val:
            os_name = {"Linux": "Linux", "Windows": "Windows", "Darwin": "Darwin"}.get(val)
            if os_name and not reading.facts.system.os:
                reading.facts.system.os = os_name
                reading.observed.add("system")
    if gpus and not reading.facts.nvidia.gpus:
        reading.facts.nvidia.gpus = [GpuFacts(index=i, name=n) for i, n in enumerate(gpus[:64])]
        reading.observed.add("nvidia")


def _no_colon(text: str, lines: List[str], reading: Reading) -> None:
    """``PyTorch version 1.5.0`` (a collect_env line retyped without its colon)."""
    for number in lines_holding(text, ("PyTorch version",)):
        match = _TORCH_NO_COLON.match(lines[number])
        if match:
            set_torch(reading, match.group(1), None, "collect_env line")
            return


def _ld_library_path(text: str, lines: List[str], reading: Reading) -> None:
    for i in lines_holding(text, ("LD_LIBRARY_PATH",)):  # both patterns name it, case kept
        line = lines[i]
        match = _LD_PATH.match(line)
        value = match.group(1) if match else None
        if value is None and _ECHO_LD_PATH.match(line):
            value = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if not value or " " in value:
                continue
        if value is None:
            continue
        dirs = [d for d in value.strip("'\"").split(":") if d]
        reading.extra["ld_library_path"] = dirs
        cuda = [d for d in dirs if re.search(r"cuda|cudnn|nvidia", d, re.I)]
        if cuda:
            reading.notes.append(
                "LD_LIBRARY_PATH names CUDA libraries outside torch ("
                + ", ".join(cuda[:4])
                + "): the loader takes them before the ones a pip torch brings"
            )
        reading.pieces.append("LD_LIBRARY_PATH")
        return


def _pip_versions(text: str, reading: Reading) -> None:
    """``ERROR: Could not find a version that satisfies the requirement torch==2.0.0 (from
    versions: 2.2.0, 2.2.1, ...)``: what that index had for the reporter's platform."""
    match = _FROMVERSIONS.search(text)
    if not match:
        return
    listed = [v.strip() for v in match.group(1).split(",") if v.strip()]
    listed = [v for v in listed if v.lower() != "none"]
    reading.extra["index_versions"] = listed[-200:]
    if listed:
        reading.notes.append(
            f"pip's index offered {len(listed)} version(s) for that platform, "
            f"the newest {listed[-1]}"
        )
    else:
        reading.notes.append(
            "pip's index offered no version at all for that platform and Python "
            "(from versions: none)"
        )
    reading.pieces.append("pip's version list")


_WIN32_PYTHON = compile_on_use(
    r"(?i)program files \(x86\)[/\\]python(\d)(\d{1,2})-32[/\\]python\.exe"
)


def _site_packages(text: str, lines: List[str], reading: Reading) -> None:
    """Paths in tracebacks: ``/lib/python3.10/site-packages/torchvision/_C.so``."""
    packages: List[str] = []
    for number in lines_holding(text, ("site-packages", "dist-packages")):
        line = lines[number]
        for match in list(_SITE.finditer(line)) + list(_WIN_SITE.finditer(line)):
            major, minor, package = match.groups()
            set_python(reading, f"{major}.{minor}", "site-packages path")
            if package not in packages:
                packages.append(package)
            if "\\" in match.group(0) and not reading.facts.system.os:
                reading.facts.system.os = "Windows"
    if packages:
        reading.extra["packages"] = packages[:20]
    # the 32-bit Windows installer's folder names the bits
    for number in lines_holding(text, ("program files (x86)",), lower=True):
        win32 = _WIN32_PYTHON.search(lines[number])
        if win32:
            set_python(reading, f"{win32.group(1)}.{win32.group(2)}", "python.exe path")
            reading.facts.python.bits = 32
            reading.facts.system.os = reading.facts.system.os or "Windows"
            reading.observed.add("system")
            break


_WANT_GPU = compile_on_use(r"If you want to use the (.{1,80}?) GPU with PyTorch, please check")


def _arch_warning_name(text: str, lines: List[str], reading: Reading) -> None:
    """The GPU torch's architecture warning names in its last line ("If you want to use the
    NVIDIA GeForce RTX 5090 GPU with PyTorch"), for when its first line was cut."""
    for number in lines_holding(text, ("If you want to use the ",)):
        match = _WANT_GPU.search(lines[number])
        if match:
            reading.extra["gpu_named"] = match.group(1).strip()
            return


# A line that is nothing but a GPU model ("RTX 3080 12gb", "GPU: GeForce GTX 1080 Ti") or an
# OS ("windows 10 home", "- OS: **MacOS**"): what reporters type in an issue template.
_GPU_LINE = compile_on_use(
    r"^\s*(?:[-*]\s*)?(?:GPU\s*:?\s*)?\**(?:NVIDIA\s+)?(?:GeForce\s+)?((?:RTX|GTX)\s?\d{3,4}"
    r"(?:\s?Ti|\s?SUPER)?)(?:\s+\d{1,2}\s?GB)?\**\s*$",
    re.IGNORECASE,
)
_OS_LINE = compile_on_use(
    r"^\s*(?:[-*]\s*)?(?:OS\s*:?\s*)?\**(windows ?(?:10|11)|macos|ubuntu \d{2}\.\d{2})\b[^\n]{0,20}$",
    re.IGNORECASE,
)


_REPORTER_WORDS = ("rtx", "gtx", "windows", "macos", "ubuntu")  # each line above names one


def _reporter_lines(text: str, lines: List[str], reading: Reading) -> None:
    """A GPU or OS the reporter typed on a line of its own, when no tool's output said it."""
    f = reading.facts
    said = False
    for number in lines_holding(text, _REPORTER_WORDS, lower=True):
        line = lines[number]
        gpu = _GPU_LINE.match(line)
        if gpu and not f.nvidia.gpus:
            model = re.sub(
                r"\s+", " ", gpu.group(1).upper().replace("TI", "Ti").replace("SUPER", "SUPER")
            )
            model = re.sub(r"^(RTX|GTX)(\d)", r"\1 \2", model)
            f.nvidia.gpus = [GpuFacts(index=0, name=f"NVIDIA GeForce {model}")]
            reading.observed.add("nvidia")
            said = True
        os_line = _OS_LINE.match(line)
        if os_line and not f.system.os:
            word = os_line.group(1).lower()
            f.system.os = (
                "Windows"
                if word.startswith("windows")
                else ("Darwin" if word == "macos" else "Linux")
            )
            reading.observed.add("system")
            said = True
    if said:
        reading.pieces.append("the reporter's own lines")


_CONFIG_CUDA = compile_on_use(r"^\s*- CUDA Runtime (\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)\s*$")
_CONFIG_ARCH = compile_on_use(r"^\s*- NVCC architecture flags: (.{1,2000})$")


def _torch_config(text: str, lines: List[str], reading: Reading) -> None:
    """``torch.__config__.show()`` ("PyTorch built with:", printed after detectron2's and
    other tools' env tables): the CUDA runtime and the architectures compiled in."""
    head = "PyTorch built with:"
    if not any(lines[i].strip() == head for i in lines_holding(text, (head,))):
        return
    t, rt = reading.facts.torch, reading.facts.torch_runtime
    for number in lines_holding(text, ("- CUDA Runtime ", "- NVCC architecture flags: ")):
        line = lines[number]
        cuda = _CONFIG_CUDA.match(line)
        if cuda and not t.cuda:
            t.cuda = cuda.group(1)
        flags = _CONFIG_ARCH.match(line)
        if flags and not rt.arch_list and rt.status in (RuntimeStatus.SKIPPED, RuntimeStatus.OK):
            arches = re.findall(r"code=\[?((?:sm|compute)_\d{2,3}a?)", flags.group(1))
            if arches:
                unique = sorted(set(arches), key=arches.index)[:40]
                rt.status, rt.arch_list = RuntimeStatus.OK, [Arch.parse(a) for a in unique]
    reading.pieces.append("torch.__config__.show()")


VERSION_WORD = compile_on_use(
    r"\b(python|torch|pytorch)\b\s*[:=]?\s*v?(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:\+[a-z0-9.]{1,20})?)",
    re.IGNORECASE,
)
_CPYTHON_TAG = compile_on_use(r"\.cpython-3(\d{1,2})m?-(?:x86_64|aarch64|i386|win_amd64)")
_REPL_BANNER = compile_on_use(r"^\s*Python (3\.\d{1,2}\.\d{1,2}) \((?:default|main|tags/)")
_YOU_HAVE_PYTHON = compile_on_use(
    r"Python\s+\d\.\d{1,2}\.\d{1,2} \(you have (\d\.\d{1,2}\.\d{1,2})\)"
)


def _versions_line(text: str, lines: List[str], reading: Reading) -> None:
    """A short line naming several versions, as reporters write them (``Python 3.10.12 ,
    torch 2.2.1+cu121``), and xFormers' ``Python 3.10.19 (you have 3.13.9)``. Lines with a
    path are left alone: ``python3.10/site-packages`` is read as a path."""
    for line, low in zip(lines, lowered_lines(text)):
        if "python" not in low and "torch" not in low:  # every pattern below needs one
            continue
        have = (_YOU_HAVE_PYTHON.search(line) if "(you have " in line else None) or (
            _REPL_BANNER.match(line) if "Python " in line else None
        )
        if have:
            set_python(reading, have.group(1), "Python's own line")
        # an extension's file name: _C.cpython-37m-x86_64-...
        tag = _CPYTHON_TAG.search(line) if ".cpython-3" in line else None
        if tag:
            set_python(reading, f"3.{tag.group(1)}", "extension file name")
        if len(line) > 120 or "/" in line or "\\" in line:
            continue
        if low.count("python") + low.count("torch") < 2:
            continue  # two versions need two words (the pattern's word is one ignoring case)
        found = {m.group(1).lower(): m.group(2) for m in VERSION_WORD.finditer(line)}
        if len(found) < 2:
            continue
        if "python" in found and found["python"].startswith("3."):
            set_python(reading, found["python"], "versions line")
        torch = found.get("torch") or found.get("pytorch")
        if torch:
            set_torch(reading, torch, None, "versions line")


def _machine_hints(text: str, lines: List[str], reading: Reading) -> None:
    """The architecture, from a line that states it: lscpu's ``Architecture: x86_64``, a
    ``/usr/lib/x86_64-linux-gnu/`` path, a wheel file name."""
    s = reading.facts.system
    if s.machine:
        return
    for number in lines_holding(text, ("x86_64", "aarch64", "win_amd64")):  # each hint names one
        line = lines[number]
        if platform_list(line):
            continue  # an installer's list of the platforms that have wheels: not this one
        match = _MACHINE_HINT.search(line)
        if match:
            machine = next(g for g in match.groups() if g)
            s.machine = "AMD64" if machine == "amd64" else machine
            return
