"""Override observed facts from the environment, the way uv and conda allow.

uv has ``UV_CUDA_DRIVER_VERSION`` and conda ``CONDA_OVERRIDE_CUDA`` so that one
machine can plan for another and tests can simulate hardware. envcheck has:

* ``ENVCHECK_DRIVER_VERSION=535.104.05``      -> nvidia.driver_version
* ``ENVCHECK_CUDA_DRIVER_VERSION=12.2``       -> nvidia.cuda_driver_version
* ``ENVCHECK_GPUS="NVIDIA H100 80GB HBM3:9.0:80GiB; NVIDIA GeForce RTX 3060:8.6"``
  (``name:capability[:memory]`` items, ``none`` for no GPU, or a JSON list of GPU objects)
  -> nvidia.gpus
* ``ENVCHECK_FACT_<SECTION>_<FIELD>=VALUE`` for any other field, e.g.
  ``ENVCHECK_FACT_SYSTEM_SHM_TOTAL=64MiB`` or ``ENVCHECK_FACT_PYTHON_VERSION=3.13.1``.
  VALUE is JSON when it parses as JSON, else a string; integer fields also take
  sizes such as ``64MiB`` or ``24GB``.

Every overridden field is listed in ``Facts.overrides``; a malformed override is
an :class:`OverrideError` naming the variable, never a silently ignored value.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from typing import Any, List, Mapping, Tuple

from .._record import fields, is_record, record
from .._text import one_line as one_line
from ..facts import (
    AmdFacts,
    Facts,
    FactsError,
    GpuFacts,
    NvidiaFacts,
    PythonFacts,
    SystemFacts,
    ToolkitFacts,
    TorchFacts,
    TorchRuntimeFacts,
    convert,
    field_type,
)
from ..values import ComputeCapability

PREFIX = "ENVCHECK_FACT_"
# Longest first, so TORCH_RUNTIME_ wins over TORCH_.
SECTIONS: List[Tuple[str, str, type]] = [
    ("TORCH_RUNTIME_", "torch_runtime", TorchRuntimeFacts),
    ("SYSTEM_", "system", SystemFacts),
    ("PYTHON_", "python", PythonFacts),
    ("NVIDIA_", "nvidia", NvidiaFacts),
    ("AMD_", "amd", AmdFacts),
    ("TORCH_", "torch", TorchFacts),
    ("TOOLKIT_", "toolkit", ToolkitFacts),
]
ALIASES = {
    "ENVCHECK_DRIVER_VERSION": ("nvidia", "driver_version"),
    "ENVCHECK_CUDA_DRIVER_VERSION": ("nvidia", "cuda_driver_version"),
    "ENVCHECK_GPUS": ("nvidia", "gpus"),
}
_SIZE = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*([KMGT]i?B|B)?\s*$", re.I)
# Numeric fields that may be negative: an exit code (-9: killed by SIGKILL), temperatures.
SIGNED = frozenset({"returncode", "temperature_c", "temperature_slowdown_c"})
_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


class OverrideError(ValueError):
    """An ENVCHECK_* override variable whose value cannot be used (one line)."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


@record
class Override:
    variable: str
    section: str
    name: str
    value: Any


def parse_size(text: str) -> int:
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"not a size: {text!r} (try 64MiB or 24GB)")
    from decimal import Decimal  # here: 4 ms of every run's imports otherwise

    number, unit = Decimal(match.group(1)), (match.group(2) or "B").upper()
    return int(number * _UNITS[unit])  # exact: no float rounding, no overflow


def parse_gpus(text: str) -> List[GpuFacts]:
    """The ENVCHECK_GPUS forms: ``none``, a JSON list, or ``name:cc[:memory]; ...``."""
    text = text.strip()
    if text.lower() in ("", "0", "none"):
        return []
    if text.startswith("["):
        try:
            raw = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, or an integer of >4300 digits
            raise ValueError(f"not JSON: {exc}") from None
        except RecursionError:
            raise ValueError("not JSON: nested too deeply") from None
        listed: List[GpuFacts] = convert(List[GpuFacts], raw, "gpus")
        return listed
    gpus: List[GpuFacts] = []
    for item in (p.strip() for p in text.split(";")):
        if not item:
            continue
        parts = [p.strip() for p in item.split(":")]
        capability = ComputeCapability.maybe(parts[1]) if len(parts) >= 2 else None
        if capability is None:
            raise ValueError(f"{item!r}: expected NAME:CAPABILITY[:MEMORY], e.g. 'A100:8.0:80GiB'")
        gpu = GpuFacts(index=len(gpus), name=parts[0], compute_capability=capability)
        if len(parts) > 2 and parts[2]:
            gpu.memory_total = parse_size(parts[2])
        gpus.append(gpu)
    return gpus


def _coerce(section_cls: type, name: str, raw: str, variable: str) -> Any:
    """The first reading of ``raw`` that fits the field: JSON, the text itself, a size.

    The text comes before a size and after JSON, so a string field keeps
    ``12.2`` as typed while a number field gets JSON's 12.2 and ``64MiB`` works.
    """
    tp = field_type(section_cls, name)
    readings: List[Any] = []
    with contextlib.suppress(ValueError, RecursionError):  # not JSON, too deep, a huge integer
        readings.append(json.loads(raw))
    readings.append(raw)
    with contextlib.suppress(ValueError):
        readings.append(parse_size(raw))
    errors = []
    for value in readings:
        try:
            return convert(tp, value, variable)
        except FactsError as exc:
            errors.append(str(exc))
    raise OverrideError(errors[0])


def _check_numbers(value: Any, path: str, variable: str) -> None:
    """Sizes and counts are never negative, and no number is NaN or infinite: a nonsense
    override is refused, not simulated."""
    if is_record(value) and not isinstance(value, type):
        for f in fields(value):
            _check_numbers(getattr(value, f.name), f"{path}.{f.name}", variable)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_numbers(item, f"{path}[{i}]", variable)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, f"{path}.{key}", variable)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise OverrideError(f"{variable}: {path} = {value!r} is not a number")
        if value < 0 and path.rsplit(".", 1)[-1].split("[")[0] not in SIGNED:
            raise OverrideError(f"{variable}: {path} = {value!r} must not be negative")


def parse_overrides(environ: Mapping[str, str]) -> List[Override]:
    found: List[Override] = []
    for variable in sorted(environ):
        raw = environ[variable]
        if variable in ALIASES:
            section, name = ALIASES[variable]
            if name == "gpus":
                try:
                    value: Any = parse_gpus(raw)
                except (ValueError, FactsError) as exc:
                    raise OverrideError(f"{variable}: {exc}") from None
                _check_numbers(value, name, variable)
            else:
                value = raw.strip()
                if not re.fullmatch(r"\d+(\.\d+)*", value):
                    raise OverrideError(f"{variable}: expected a version like 12.2, got {raw!r}")
            found.append(Override(variable, section, name, value))
        elif variable.startswith(PREFIX):
            rest = variable[len(PREFIX) :]
            for prefix, section, cls in SECTIONS:
                if rest.startswith(prefix):
                    name = rest[len(prefix) :].lower()
                    if name not in {f.name for f in fields(cls)}:
                        raise OverrideError(f"{variable}: {section} has no field {name!r}")
                    value = _coerce(cls, name, raw, variable)
                    _check_numbers(value, f"{section}.{name}", variable)
                    found.append(Override(variable, section, name, value))
                    break
            else:
                sections = ", ".join(p.rstrip("_") for p, _, _ in SECTIONS)
                raise OverrideError(f"{variable}: the section must be one of {sections}")
    return found


def apply_overrides(facts: Facts, overrides: List[Override]) -> None:
    """Set each overridden field, and list the fields in ``Facts.overrides`` once each,
    sorted by field (the variables sort otherwise: ENVCHECK_GPUS after ENVCHECK_FACT_*),
    so every report lists them in the same order."""
    listed = set(facts.overrides)
    for item in overrides:
        setattr(getattr(facts, item.section), item.name, item.value)
        listed.add(f"{item.section}.{item.name}")
        if (item.section, item.name) == ("nvidia", "driver_version"):
            facts.nvidia.driver_version_source = "override"
    facts.overrides = sorted(listed)
    named = {(o.section, o.name) for o in overrides}
    if ("torch", "version") in named and ("torch", "dist_version") not in named:
        # A simulated torch is one consistent install: its metadata says what its files say,
        # or INS002 would blame the real files on disk for the simulation.
        facts.torch.dist_version = facts.torch.version
        facts.torch.installed = facts.torch.installed or bool(facts.torch.version)
