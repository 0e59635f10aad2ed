"""Small immutable values with one parser each: Severity, SmokeStatus, Variant, OsFamily,
Platform, ComputeCapability, Arch and Gfx.

packaging's ``Version`` is the model: parse once at the boundary, then compare,
sort and print values, never re-parse strings with a regex or compare tuples.
Each type's ``str()`` is the form PyTorch and NVIDIA print, and parses back to an
equal value. The tables keep the strings (they are data people edit); code that
decides something parses them here.
"""

from __future__ import annotations

import enum
import functools
import re
from typing import TYPE_CHECKING, Any, Optional, Tuple, Type, TypeVar, Union

if TYPE_CHECKING:
    from packaging.version import Version


def _version(text: str) -> Version:
    """packaging's Version, imported on first use (its regex would cost a healthcheck 3 ms)."""
    from packaging.version import Version

    return Version(text)


__all__ = [
    "Arch",
    "ComputeCapability",
    "Gfx",
    "GpuArch",
    "OsFamily",
    "Platform",
    "Severity",
    "SmokeStatus",
    "Variant",
    "parse_gpu_arch",
]


class Severity(str, enum.Enum):
    """How bad a finding is. A ``str`` enum, so JSON and old callers see "error"."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(str(text).strip().lower())
        except ValueError:
            raise ValueError(f"{text!r} is not a severity (error, warning, info)") from None

    @property
    def rank(self) -> int:
        """0 for the most severe: the order reports list findings in."""
        return _SEVERITY_ORDER.index(self)

    def __str__(self) -> str:
        return self.value


_SEVERITY_ORDER = (Severity.ERROR, Severity.WARNING, Severity.INFO)


class SmokeStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    TIMED_OUT = "timed_out"

    @property
    def is_failure(self) -> bool:
        return self in (SmokeStatus.FAILED, SmokeStatus.TIMED_OUT)

    def __str__(self) -> str:
        return self.value


_VARIANT = re.compile(r"^(?:(cpu|xpu)|cu(\d{2,3})|rocm(\d+(?:\.\d+)*))$")
# A local label such as "cpu.cxx11.abi" (old Linux CPU builds) or "cu121.with.pypi.cudnn".
_LABEL = re.compile(r"^(cpu|xpu|cu\d{2,3}|rocm\d+(?:\.\d+)*)(?:[.-].*)?$")

_V = TypeVar("_V", "Variant", "Arch")


def _once(cls: Type[_V], text: str) -> _V:
    """``cls._parse(text)`` once per short string (values are immutable; sm_80 is in every
    release of a table), in a cache bounded in strings and in their length."""
    kind: Any = cls  # a class is hashable; mypy doubts a class that defines __eq__ is
    made: _V = _parsed(kind, text) if type(text) is str and len(text) <= 24 else cls._parse(text)
    return made


@functools.lru_cache(maxsize=1024)
def _parsed(cls: Any, text: str) -> Any:
    return cls._parse(text)


class Variant:
    """A wheel variant: ``cpu``, ``cu128`` (CUDA 12.8), ``rocm6.2``, ``xpu``.

    Variants of one kind order by their CUDA or ROCm version.
    """

    __slots__ = ("kind", "version")

    def __init__(self, kind: str, version: Optional[Version] = None) -> None:
        self.kind = kind  # cpu, cuda, rocm, xpu
        self.version = version  # the CUDA or ROCm version; None for cpu and xpu

    @classmethod
    def parse(cls, text: str) -> Variant:
        return _once(cls, text)

    @classmethod
    def _parse(cls, text: str) -> Variant:
        match = _VARIANT.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not a variant (cpu, cuXYZ, rocmX.Y, xpu)")
        plain, cuda, rocm = match.groups()
        if plain:
            return cls(plain)
        if cuda:
            return cls("cuda", _version(f"{cuda[:-1]}.{cuda[-1]}"))
        return cls("rocm", _version(rocm))

    @classmethod
    def maybe(cls, text: Optional[str]) -> Optional[Variant]:
        try:
            return cls.parse(text) if text else None
        except ValueError:
            return None

    @classmethod
    def from_label(cls, label: Optional[str]) -> Optional[Variant]:
        """The variant a local version label names (``cpu.cxx11.abi`` is cpu), else None."""
        match = _LABEL.match(label or "")
        return cls.parse(match.group(1)) if match else None

    @classmethod
    def of_build(
        cls,
        version: Optional[str],
        cuda: Optional[str] = None,
        hip: Optional[str] = None,
        xpu: Optional[str] = None,
    ) -> Optional[Variant]:
        """The variant of a torch build from its version and torch/version.py's CUDA, HIP
        and XPU versions: the local label names it (``2.8.0+cu128``; ``cpu.cxx11.abi`` is
        cpu), else the CUDA or HIP version does; None without a version, or with a CUDA
        version that is not one (``12.4:`` from a cut paste)."""
        if not version:
            return None
        label = version.split("+", 1)[1] if "+" in version else None
        labelled = cls.from_label(label)
        if labelled is not None:
            return labelled
        if cuda:
            major, _, minor = cuda.partition(".")
            minor = minor.split(".")[0] or "0"
            if all(p.isascii() and p.isdigit() and len(p) <= 3 for p in (major, minor)):
                return cls.for_cuda(_version(f"{int(major)}.{int(minor)}"))
            return None
        if hip:
            rocm = cls.maybe("rocm" + ".".join(hip.split(".")[:2]))
            if rocm is not None:
                return rocm
        if xpu:
            return cls("xpu")
        return cls("cpu")

    @classmethod
    def for_cuda(cls, cuda: Version) -> Variant:
        return cls("cuda", _version(f"{cuda.major}.{cuda.minor}"))

    @property
    def cuda(self) -> Optional[Version]:
        return self.version if self.kind == "cuda" else None

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    @property
    def is_rocm(self) -> bool:
        return self.kind == "rocm"

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def is_xpu(self) -> bool:
        return self.kind == "xpu"

    def __str__(self) -> str:
        if self.kind == "cuda" and self.version is not None:
            return f"cu{self.version.major}{self.version.minor}"
        if self.kind == "rocm":
            return f"rocm{self.version}"
        return self.kind

    def __repr__(self) -> str:
        return f"Variant({str(self)!r})"

    def _key(self) -> Tuple[str, Version]:
        return (self.kind, self.version or _version("0"))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            other = Variant.maybe(other)
        return isinstance(other, Variant) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(str(self))

    def __lt__(self, other: Variant) -> bool:
        return self._key() < other._key()


class OsFamily(str, enum.Enum):
    """The operating system a wheel is built for, as PyTorch's matrices name it."""

    LINUX = "linux"
    WINDOWS = "windows"
    MACOS = "macos"

    @classmethod
    def of_system(cls, name: Optional[str]) -> Optional[OsFamily]:
        """The family of ``platform.system()``'s name (Linux, Darwin, Windows); None for
        any other system, or none named."""
        return _SYSTEMS.get(name or "")

    def __str__(self) -> str:
        return self.value


_SYSTEMS = {"Linux": OsFamily.LINUX, "Darwin": OsFamily.MACOS, "Windows": OsFamily.WINDOWS}
_ARCHES = ("x86_64", "aarch64", "arm64")
_MACHINE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


class Platform:
    """Where a wheel runs: ``linux-x86_64``, ``linux-aarch64``, ``windows-x86_64``,
    ``macos-arm64``, ``macos-x86_64`` (the names PyTorch's matrices use)."""

    __slots__ = ("arch", "os")

    def __init__(self, os: Union[OsFamily, str], arch: str) -> None:
        self.os = OsFamily(os)
        self.arch = arch  # x86_64, aarch64, arm64 (macOS's name for aarch64)

    @classmethod
    def parse(cls, text: str) -> Platform:
        os_name, _, arch = str(text).strip().partition("-")
        if os_name not in {f.value for f in OsFamily} or arch not in _ARCHES:
            raise ValueError(f"{text!r} is not a platform like linux-x86_64")
        return cls(os_name, arch)

    @classmethod
    def of(cls, os_name: Optional[str], machine: Optional[str]) -> Optional[Platform]:
        """The wheel platform of ``platform.system()`` and ``platform.machine()``, or None
        where PyTorch publishes no wheels (32-bit, Windows on ARM before it had any, ...)."""
        arch = _MACHINE.get((machine or "").lower())
        if arch is None:
            return None
        family = OsFamily.of_system(os_name)
        if family is OsFamily.LINUX:
            return cls(family, arch)
        if family is OsFamily.MACOS:
            return cls(family, "arm64" if arch == "aarch64" else "x86_64")
        if family is OsFamily.WINDOWS:  # ARM64: CPU wheels on PyTorch's index from 2.8
            return cls(family, "arm64" if arch == "aarch64" else arch)
        return None

    @property
    def is_macos(self) -> bool:
        return self.os is OsFamily.MACOS

    @property
    def is_windows(self) -> bool:
        return self.os is OsFamily.WINDOWS

    @property
    def is_linux(self) -> bool:
        return self.os is OsFamily.LINUX

    @property
    def machine(self) -> str:
        """The machine name the tables key aarch64 arch lists by."""
        return "aarch64" if self.arch in ("aarch64", "arm64") else self.arch

    def __str__(self) -> str:
        return f"{self.os.value}-{self.arch}"

    def __repr__(self) -> str:
        return f"Platform({str(self)!r})"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            return str(self) == other
        return isinstance(other, Platform) and (self.os, self.arch) == (other.os, other.arch)

    def __hash__(self) -> int:
        return hash(str(self))


_CC = re.compile(r"^(\d{1,2})\.(\d)$")
_ARCH = re.compile(r"^(sm|compute)_(\d{2,3})([af]?)$")


class ComputeCapability:
    """A GPU's compute capability, ``8.9``; its SASS name is ``sm_89``."""

    __slots__ = ("major", "minor")

    def __init__(self, major: int, minor: int) -> None:
        self.major = major
        self.minor = minor

    @classmethod
    def parse(cls, text: str) -> ComputeCapability:
        match = _CC.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not a compute capability like 8.9")
        return cls(int(match.group(1)), int(match.group(2)))

    @classmethod
    def maybe(cls, text: Optional[str]) -> Optional[ComputeCapability]:
        try:
            return cls.parse(text) if text else None
        except ValueError:
            return None

    @classmethod
    def from_number(cls, digits: str) -> ComputeCapability:
        """``89`` (as in sm_89, or "sm_89 is not compatible") -> 8.9."""
        if not digits.isdigit() or len(digits) < 2:
            raise ValueError(f"{digits!r} is not an sm number like 89")
        return cls(int(digits[:-1]), int(digits[-1]))

    @property
    def number(self) -> int:
        return self.major * 10 + self.minor

    @property
    def sm(self) -> str:
        return f"sm_{self.number}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __repr__(self) -> str:
        return f"ComputeCapability({str(self)!r})"

    def _key(self) -> Tuple[int, int]:
        return (self.major, self.minor)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            other = ComputeCapability.maybe(other)
        return isinstance(other, ComputeCapability) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: ComputeCapability) -> bool:
        return self._key() < other._key()

    def __le__(self, other: ComputeCapability) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: ComputeCapability) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: ComputeCapability) -> bool:
        return self._key() >= other._key()


class Arch:
    """An entry of a build's arch list: ``sm_90`` (SASS), ``sm_90a`` (arch-specific SASS),
    ``compute_90`` (PTX, JIT-compiled by the driver for that capability and newer)."""

    __slots__ = ("capability", "kind", "suffix")

    def __init__(self, kind: str, capability: ComputeCapability, suffix: str = "") -> None:
        self.kind = kind  # sm or compute
        self.capability = capability
        self.suffix = suffix  # "", "a" or "f"

    @classmethod
    def parse(cls, text: str) -> Arch:
        return _once(cls, text)

    @classmethod
    def _parse(cls, text: str) -> Arch:
        match = _ARCH.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not an arch like sm_90 or compute_90")
        kind, digits, suffix = match.groups()
        return cls(kind, ComputeCapability.from_number(digits), suffix)

    @classmethod
    def maybe(cls, text: str) -> Optional[Arch]:
        try:
            return cls.parse(text)
        except ValueError:
            return None

    @property
    def is_ptx(self) -> bool:
        return self.kind == "compute"

    def __str__(self) -> str:
        return f"{self.kind}_{self.capability.number}{self.suffix}"

    def __repr__(self) -> str:
        return f"Arch({str(self)!r})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Arch) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")


class Gfx:
    """An AMD GPU's LLVM target, ``gfx942``, with the target features ROCm's
    ``get_arch_list()`` may add (``gfx90a:xnack-``)."""

    __slots__ = ("features", "target")

    def __init__(self, target: str, features: str = "") -> None:
        self.target = target  # gfx942, gfx90a, gfx1100
        self.features = features  # "xnack-", "sramecc+:xnack-" or ""

    @classmethod
    def parse(cls, text: str) -> Gfx:
        target, _, features = str(text).strip().partition(":")
        if not _GFX.match(target):
            raise ValueError(f"{text!r} is not a gfx target such as gfx942")
        return cls(target, features)

    @classmethod
    def maybe(cls, text: Optional[str]) -> Optional[Gfx]:
        try:
            return cls.parse(text) if text else None
        except ValueError:
            return None

    def __str__(self) -> str:
        return f"{self.target}:{self.features}" if self.features else self.target

    def __repr__(self) -> str:
        return f"Gfx({str(self)!r})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Gfx) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


# An entry of torch.cuda.get_arch_list(): sm_XY / compute_XY on CUDA, gfx targets on ROCm.
GpuArch = Union[Arch, Gfx]


def parse_gpu_arch(text: str) -> GpuArch:
    """``sm_90`` / ``compute_90`` -> Arch, ``gfx90a:xnack-`` -> Gfx (raises ValueError)."""
    if str(text).strip().startswith("gfx"):
        return Gfx.parse(text)
    return Arch.parse(text)


# The package managers envcheck renders a plan for: one small vocabulary, one value each. A
# ``str`` enum, so JSON, text and comparisons with the CLI's strings stay as they were. It is
# here, not in envcheck.install, so that the CLI's --manager names it without importing the
# resolver.
class Manager(str, enum.Enum):
    PIP = "pip"
    UV = "uv"
    CONDA = "conda"
    REQUIREMENTS = "requirements"
    UV_PROJECT = "uv-project"
    POETRY = "poetry"

    def __str__(self) -> str:
        return self.value

    @property
    def runs_commands(self) -> bool:
        """Whether the plan renders as commands to run (pip, uv), not a file or conda line."""
        return self in (Manager.PIP, Manager.UV)
