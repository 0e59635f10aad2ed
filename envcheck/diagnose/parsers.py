"""Read pasted reports into Facts: collect_env text, nvidia-smi output, envcheck JSON.

Pasted text is messy: markdown code fences, Windows line endings, wrapped or cut
lines, "Could not collect" and "N/A" for missing values, and several reports
glued together. Every parser here reads what it recognises, records which Facts
sections it actually saw, and never raises on anything else.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from ..facts import (
    AmdGpuFacts,
    CondaPackageFacts,
    Facts,
    FactsError,
    GpuFacts,
    PackageFacts,
    RuntimeStatus,
)
from ..probes.packages import normalise
from ..values import ComputeCapability, Variant

MISSING = {"", "could not collect", "n/a", "none", "no cuda", "not available"}
# No line of collect_env or nvidia-smi output is anywhere near this long (the longest, the
# CPU flags, is ~1.5 KiB): the line parsers read at most this much of a line, so a pasted
# megabyte-long line costs no more than a short one. Every pattern here is also linear in
# the length of what it reads (no two adjacent parts that can match the same characters).
MAX_LINE = 8192
MAX_GPUS = 64  # GPUs read from one listing; no host shows more (a DGX has 8 or 16)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_WIDTH = str.maketrans({"\uff1a": ": ", "\u3000": " ", "\u00a0": " ", "\uff08": "(", "\uff09": ")"})
_FENCE = re.compile(r"^\s*(```|~~~)[\w-]*\s*$")


@dataclass
class Reading:
    """Facts built from text, what was seen, and what the text says about itself."""

    facts: Facts
    observed: Set[str] = field(default_factory=set)  # Facts sections the text showed
    pieces: List[str] = field(default_factory=list)  # "collect_env", "nvidia-smi table", ...
    notes: List[str] = field(default_factory=list)
    # Details (rules.DETAILS) the text states although Facts cannot show it: "no GPUs" is a
    # fact only when the text says so (nvidia-smi's "No devices were found").
    stated: Set[str] = field(default_factory=set)
    errors: List[str] = field(default_factory=list)  # why a recognised piece was not read
    # Facts of the text that Facts has no place for: "ld_library_path" (its folders),
    # "index_versions" (pip's "from versions" list), "packages" (site-packages folders named
    # in tracebacks, in order), "arch_list" (the sm_XX a build supports, from a warning)
    extra: Dict[str, Any] = field(default_factory=dict)
    where: Dict[str, str] = field(default_factory=dict)  # key fact -> the fragment it came from


def clean(text: str) -> str:
    """Line endings, ANSI colour, markdown fences and quote markers removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    # a report typed or translated on a CJK keyboard: full-width colons, ideographic and
    # non-breaking spaces
    text = text.translate(_WIDTH)
    lines = []
    for line in text.split("\n"):
        if _FENCE.match(line):
            continue
        if line.startswith("> "):
            line = line[2:]
        lines.append(line.rstrip())
    return "\n".join(lines)


def lines_of(text: str) -> List[str]:
    """The lines of a cleaned text, each cut to MAX_LINE characters for the line parsers."""
    return [line[:MAX_LINE] for line in text.split("\n")]


def _at_most(gpus: list, reading: Reading, where: str) -> list:
    """The first MAX_GPUS of a listing, with a note when there were more."""
    if len(gpus) > MAX_GPUS:
        reading.notes.append(
            f"the {where} lists more than {MAX_GPUS} GPUs; only the first {MAX_GPUS} were read"
        )
    return gpus[:MAX_GPUS]


def value(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    text = text.strip()
    return None if text.lower() in MISSING else text


_CUDA = re.compile(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?")


def cuda_of_local(version: Optional[str]) -> Optional[str]:
    """The CUDA a wheel's local version names: "2.8.0+cu128" -> "12.8"; else None."""
    if not version or "+" not in version:
        return None
    variant = Variant.maybe(version.split("+", 1)[1])
    return str(variant.cuda) if variant is not None and variant.cuda else None


def note_conflict(reading: Reading, what: str, had: Optional[str], seen: str) -> bool:
    """True when the text already said something else for this fact (it is then kept and
    the conflict is said)."""
    if had is not None and had != seen:
        reading.notes.append(f"the text gives two values for {what}: {had} and {seen}; kept {had}")
        return True
    return False


def set_torch(reading: Reading, version: str, cuda: Optional[str], where: str) -> None:
    """The torch version a fragment gives, unless a fuller reader gave one; two different
    releases in one text are said ("2.1.0" beside "2.1.0+cu121" is the same release)."""
    t = reading.facts.torch
    if t.version is not None:
        note_conflict(reading, "torch", t.version.split("+")[0], version.split("+")[0])
        return
    t.installed, t.version, t.dist_version = True, version, version
    t.cuda = cuda or cuda_of_local(version)
    reading.observed.add("torch")
    if where not in reading.pieces:
        reading.pieces.append(where)


def set_python(reading: Reading, version: str, where: str) -> None:
    """The Python version a fragment gives, unless a fuller reader gave one."""
    p = reading.facts.python
    if p.version:
        return
    p.version, p.implementation = version, "CPython"
    reading.observed.add("python")
    if where not in reading.pieces:
        reading.pieces.append(where)


# --------------------------------------------------------------------------- envcheck JSON


def read_json(text: str, errors: Optional[List[str]] = None) -> Optional[Facts]:
    """An envcheck Facts document or `check --json` report, when the text is one.
    A document this envcheck cannot read (a newer schema) adds the reason to ``errors``."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):  # not JSON, an integer of >4300 digits, too deep
        return None
    if not isinstance(data, dict):
        return None
    doc = data.get("facts") if isinstance(data.get("facts"), dict) else data
    if not isinstance(doc, dict):
        return None
    if "system" not in doc and "nvidia" not in doc and "torch" not in doc:
        return None
    try:
        return Facts.from_dict(doc)
    except FactsError as exc:
        if errors is not None:
            errors.append(f"an envcheck JSON report envcheck cannot read: {exc}")
        return None
    except RecursionError:
        return None


# --------------------------------------------------------------------------- collect_env

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
_GPU_HEAD = re.compile(r"\s*GPU\s+(\d{1,6})\s*:")
_PIP = re.compile(r"^\[(?:pip|pip3|uv)\]\s+([A-Za-z0-9_.-]+)\s*==\s*(\S+)")
_COMPANIONS = ("torchvision", "torchaudio", "triton", "pytorch-triton")
_CONDA = re.compile(r"^\[conda\]\s+([A-Za-z0-9_.-]+)\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?")


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
            match = re.match(r"^Model name:\s*(.+)$", stripped)
            if match:
                cpu_model = match.group(1).strip()
            if stripped and not re.match(r"^[A-Za-z0-9 ()/_.-]+:", stripped):
                section = "top"
            else:
                continue
        name, colon, rest = stripped.partition(":")
        if not colon and stripped.lower().startswith("pytorch version "):
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


def _apply_collect_env(fields, extra, libs, cpu_model, reading: Reading) -> None:
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
    _os(fields, f, reading)
    py = value(fields.get("python"))
    if py:
        reading.observed.add("python")
        match = re.match(r"(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])", py)
        f.python.version = match.group(1) if match else ""
        bits = re.search(r"\((\d{1,3})-bit runtime\)", py)
        f.python.bits = int(bits.group(1)) if bits else None
        f.python.implementation = "CPython"
        f.python.env_kind = "unknown"
    runtime = value(fields.get("cuda_runtime"))
    if runtime:
        reading.observed.add("toolkit")
        f.toolkit.nvcc_version = runtime
        reading.notes.append(
            f"collect_env's 'CUDA runtime version: {runtime}' is the nvcc on PATH (recorded as the "
            "CUDA toolkit), not the CUDA runtime torch uses (that is 'CUDA used to build PyTorch')"
        )
    if any("libcudnn" in line for line in extra["cudnn"]):
        reading.notes.append(
            "collect_env's 'cuDNN version' lists cuDNN files found on the system, not the cuDNN torch "
            "loaded (pip wheels bring their own)"
        )
    driver = value(fields.get("driver"))
    gpus = _at_most(_gpu_names(extra["gpus"]), reading, "collect_env")
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
    if cpu_model:
        f.system.cpu_model = cpu_model
    _libraries(libs, reading)


def _gpu_names(lines: List[str]) -> List[tuple]:
    out: List[tuple] = []
    for line in lines:
        if len(out) > MAX_GPUS:
            break  # the caller keeps MAX_GPUS, and notes that there were more
        gpu = _gpu_line(line)
        if gpu:
            out.append(gpu)
        elif value(line) and not out and not line.lower().startswith("probably"):
            out.append((0, line.strip()))  # one GPU, printed without "GPU 0:"
    return out


def _gpu_line(line: str) -> Optional[tuple]:
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


# --------------------------------------------------------------------------- nvidia-smi

_SMI_HEAD = re.compile(
    r"NVIDIA-SMI\s+([\d.]{1,32})\s+Driver Version:\s+([\d.]{1,32})\s+CUDA Version:\s+([\d.]{1,32})"
)
# A GPU row is read cell by cell (_smi_gpu): a regex with a lazy name between two runs of
# spaces is quadratic in the length of a padded line.
_SMI_INDEX = re.compile(r"\d{1,6}")
_SMI_BUS = re.compile(
    r"\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s+\w+\s*"  # "00000000:18:00.0 Off"
)
_SMI_STATS = re.compile(
    r"^\|\s*(?:N/A|\d{1,3}%)\s+(\d{1,4})C\s.*?\|\s*(\d{1,12})MiB\s*/\s*(\d{1,12})MiB\s*\|"
)
_SMI_L = re.compile(r"^GPU\s+(\d{1,6}):\s+(\S.*?)\s\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)")
MiB = 1024**2


def read_nvidia_smi(text: str, reading: Reading) -> bool:
    f = reading.facts
    found = False
    head = _SMI_HEAD.search(text)
    if head:
        found = True
        reading.pieces.append("nvidia-smi table")
        f.nvidia.driver_version, f.nvidia.driver_version_source = head.group(2), "nvidia-smi"
        f.nvidia.cuda_driver_version = head.group(3)
        f.nvidia.nvml.ok = True
        gpus: List[GpuFacts] = []
        lines = lines_of(text)
        for i, line in enumerate(lines):
            row = _smi_gpu(line)
            if row is None:
                continue
            index, name, persistence, bus, ecc = row
            gpu = GpuFacts(index=index, name=name, pci_bus_id=bus)
            gpu.persistence_mode = persistence
            if ecc.isascii() and ecc.isdigit() and len(ecc) <= 12:
                gpu.ecc_mode, gpu.ecc_uncorrected_volatile = True, int(ecc)
            stats = _SMI_STATS.match(lines[i + 1]) if i + 1 < len(lines) else None
            if stats:
                gpu.temperature_c = int(stats.group(1))
                gpu.memory_used, gpu.memory_total = (
                    int(stats.group(2)) * MiB,
                    int(stats.group(3)) * MiB,
                )
            gpus.append(gpu)
            if len(gpus) > MAX_GPUS:
                break
        if gpus:
            f.nvidia.gpus = _at_most(gpus, reading, "nvidia-smi table")
    listed = [m for m in (_SMI_L.match(line.strip()) for line in lines_of(text)) if m]
    listed = _at_most(listed, reading, "nvidia-smi -L output")
    if listed:
        found = True
        reading.pieces.append("nvidia-smi -L")
        if not f.nvidia.gpus or all(g.name and g.name.endswith("...") for g in f.nvidia.gpus):
            f.nvidia.gpus = [
                GpuFacts(index=int(m.group(1)), name=m.group(2).rstrip(), uuid="GPU-redacted")
                for m in listed
            ]
    found = _read_csv(text, reading) or found
    if found:
        reading.observed.add("nvidia")
    return found


def _smi_gpu(line: str) -> Optional[Tuple[int, str, bool, str, str]]:
    """A GPU row of the nvidia-smi table, ``|   0  NVIDIA H100 80GB HBM3   On  |
    00000000:18:00.0 Off |   0 |``: (index, name, persistence on, bus id, ECC cell)."""
    cells = line.split("|", 4)
    if len(cells) < 5 or cells[0] or not cells[1][:1].isspace():
        return None
    parts = cells[1].split(None, 1)
    if len(parts) < 2 or not _SMI_INDEX.fullmatch(parts[0]):
        return None
    body = parts[1].rstrip()
    for flag in ("On", "Off"):
        name = body[: -len(flag)]
        if body.endswith(flag) and name[-1:].isspace() and name.strip():
            break
    else:
        return None
    bus = _SMI_BUS.fullmatch(cells[2])
    ecc = cells[3].split()
    if bus is None or len(ecc) != 1:
        return None
    return int(parts[0]), name.strip(), flag == "On", bus.group(1), ecc[0]


def _read_csv(text: str, reading: Reading) -> bool:
    lines = lines_of(text)
    for i, line in enumerate(lines):
        cells = {c.strip().lower() for c in line.split(",")}  # a header is made of column names
        known = {"driver_version", "compute_cap", "pci.bus_id", "uuid"}
        if "name" in cells and (known & cells or any(c.startswith("memory.total") for c in cells)):
            gpus = _csv_gpus(lines[i : i + MAX_GPUS + 2], reading)
            if gpus:
                reading.pieces.append("nvidia-smi --query-gpu")
                reading.facts.nvidia.gpus = gpus
                return True
    return False


def _csv_gpus(lines: List[str], reading: Reading) -> List[GpuFacts]:
    """The rows under a --query-gpu header, up to the first that does not fit it."""
    rows = csv.reader(lines)
    gpus: List[GpuFacts] = []
    try:  # a quoted cell can run past csv's field size limit
        header = [h.strip().lower() for h in next(rows)]
        for row in rows:
            if len(row) != len(header):
                break
            cell = {h: c.strip() for h, c in zip(header, row)}
            gpu = GpuFacts(index=len(gpus), name=cell.get("name"))
            cc = cell.get("compute_cap")
            if cc and re.fullmatch(r"\d+\.\d", cc):
                gpu.compute_capability = ComputeCapability.maybe(cc)
            mem = re.match(r"(\d{1,12})", cell.get("memory.total [mib]", ""))
            if mem:
                gpu.memory_total = int(mem.group(1)) * MiB
            driver = cell.get("driver_version")
            if driver and re.fullmatch(r"[\d.]+", driver):
                reading.facts.nvidia.driver_version = driver
                reading.facts.nvidia.driver_version_source = "nvidia-smi"
            gpus.append(gpu)
    except csv.Error:
        return []
    return _at_most(gpus, reading, "nvidia-smi --query-gpu output")


def summary_of(reading: Reading) -> Dict[str, Any]:
    return {"pieces": reading.pieces, "observed": sorted(reading.observed), "notes": reading.notes}
