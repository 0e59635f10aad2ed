"""Read nvidia-smi output: its table, ``nvidia-smi -L`` and ``--query-gpu`` CSV."""

from __future__ import annotations

import csv
import re
from typing import List, Optional, Tuple

from .._patterns import compile_on_use
from ..facts import GpuFacts
from ..values import ComputeCapability
from .reading import MAX_GPUS, Reading, at_most, lines_holding, lines_of

_SMI_HEAD = compile_on_use(
    r"NVIDIA-SMI\s+([\d.]{1,32})\s+Driver Version:\s+([\d.]{1,32})\s+CUDA Version:\s+([\d.]{1,32})"
)
# A GPU row is read cell by cell (_smi_gpu): a regex with a lazy name between two runs of
# spaces is quadratic in the length of a padded line.
_SMI_INDEX = compile_on_use(r"\d{1,6}")
_SMI_BUS = compile_on_use(
    r"\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s+\w+\s*"  # "00000000:18:00.0 Off"
)
_SMI_STATS = compile_on_use(
    r"^\|\s*(?:N/A|\d{1,3}%)\s+(\d{1,4})C\s.*?\|\s*(\d{1,12})MiB\s*/\s*(\d{1,12})MiB\s*\|"
)
_SMI_L = compile_on_use(r"^GPU\s+(\d{1,6}):\s+(\S.*?)\s\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)")
MiB = 1024**2
# the header's fields typed without its table: "Driver Version: 515.105.01" then "CUDA
# Version: 11.7" on the next line, or "nvidia-smi shows: ... CUDA Version: 12.4"
_SMI_PAIR = compile_on_use(
    r"Driver Version:\s{0,8}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\s{0,8}\n\s{0,8}CUDA Version:\s{0,8}"
    r"(\d{1,2}\.\d{1,2})\b"
)
_SMI_SAYS = compile_on_use(
    r"nvidia-smi\W{0,3}(?:shows|says|reports|gives)\b[^\n]{0,40}\n?[^\n]{0,40}?"
    r"\bCUDA Version:?\s{0,3}(\d{1,2}\.\d{1,2})\b"
)


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
        for i in lines_holding(text, ("|",)):  # a row is made of cells
            row = _smi_gpu(lines[i])
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
            f.nvidia.gpus = at_most(gpus, reading, "nvidia-smi table")
    lines = lines_of(text)
    listed = [
        m for m in (_SMI_L.match(lines[i].strip()) for i in lines_holding(text, ("GPU",))) if m
    ]
    listed = at_most(listed, reading, "nvidia-smi -L output")
    if listed:
        found = True
        reading.pieces.append("nvidia-smi -L")
        if not f.nvidia.gpus or all(g.name and g.name.endswith("...") for g in f.nvidia.gpus):
            f.nvidia.gpus = [
                GpuFacts(index=int(m.group(1)), name=m.group(2).rstrip(), uuid="GPU-redacted")
                for m in listed
            ]
    found = _read_csv(text, reading) or found
    if not head and "CUDA Version" in text:
        found = _header_fields(text, reading) or found
    if found:
        reading.observed.add("nvidia")
    return found


def _header_fields(text: str, reading: Reading) -> bool:
    """The CUDA the driver supports (and the driver) from nvidia-smi's header fields that a
    text gives without the table, when it gives one value."""
    pairs = {(m.group(1), m.group(2)) for m in _SMI_PAIR.finditer(text)}
    says = {m.group(1) for m in _SMI_SAYS.finditer(text)}
    cuda = {c for _, c in pairs} | says
    nv = reading.facts.nvidia
    if len(cuda) != 1 or len(pairs) > 1 or nv.cuda_driver_version:
        return False
    nv.cuda_driver_version = cuda.pop()
    if pairs and not nv.driver_version:
        nv.driver_version, nv.driver_version_source = next(iter(pairs))[0], "nvidia-smi"
    reading.pieces.append("nvidia-smi header")
    return True


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
    for i in lines_holding(text, ("name",), lower=True):  # a header names its "name" column
        cells = {c.strip().lower() for c in lines[i].split(",")}  # made of column names
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
    return at_most(gpus, reading, "nvidia-smi --query-gpu output")
