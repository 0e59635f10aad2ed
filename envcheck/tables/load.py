"""Load and validate compat_tables/*.json.

A table that does not validate is refused with the file, the record and the
field named (``torch_releases.json: releases[12] (2.5): python.min: 'x' is not a
version``); envcheck never runs on half-read knowledge. A directory given with
``--tables`` or ``ENVCHECK_TABLES`` may hold only some of the files: the others
come from the built-in tables, and ``Tables.files`` says which is which.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .._text import one_line
from ..values import Arch, ComputeCapability, Gfx, Variant
from .model import (
    PLATFORMS,
    BundledCuda,
    Caveat,
    CompatBranch,
    CompatPackage,
    CondaBuild,
    CondaChannel,
    CondaRelease,
    DriverVersion,
    Family,
    FirstDriver,
    ForwardCompat,
    GpuModel,
    LinkTable,
    MessageCase,
    MessageRule,
    MinorCompat,
    Provenance,
    Release,
    SassRule,
    TableFile,
    Tables,
    Toolkit,
    ToolkitUpdate,
)

SCHEMA_VERSION = 1
MAX_TABLE = 16 * 1024 * 1024  # bytes; the largest shipped table is ~100 KiB
TABLE_NAMES = (
    "torch_releases",
    "cuda_driver",
    "gpu_arches",
    "installers",
    "messages",
    "conda_pytorch",
    "links",
)
ENV_VAR = "ENVCHECK_TABLES"

_MINOR = re.compile(r"^\d+\.\d+$")


class TableError(ValueError):
    """A compatibility table that cannot be used; the message (one line: a key that holds a
    newline is escaped) names file, record, field."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def _plain_gfx(text: str) -> bool:
    """A gfx target without target features (gfx942), as the tables name GPUs."""
    parsed = Gfx.maybe(text)
    return parsed is not None and not parsed.features


def builtin_dir() -> Path:
    """compat_tables/ inside the installed package, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "compat_tables"
    return shipped if shipped.is_dir() else package.parent / "compat_tables"


class _Reader:
    """Typed access to one JSON document that reports where a bad value sits."""

    def __init__(self, file: str, sources: Mapping[str, str]) -> None:
        self.file = file
        self.sources = sources

    def fail(self, where: str, message: str) -> TableError:
        return TableError(f"{self.file}: {where}: {message}")

    def get(self, obj: Mapping[str, Any], key: str, where: str, kind: type, optional=False) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {type(obj).__name__}")
        if key not in obj or obj[key] is None:
            if optional:
                return None
            raise self.fail(where, f"missing field {key!r}")
        value = obj[key]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.fail(f"{where}.{key}", f"expected {kind.__name__}, got {value!r}")
        return value

    def strings(self, value: Any, where: str) -> Dict[str, str]:
        """An object whose values are all strings (sources, notes, bundled libraries)."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {value!r}")
        for key, text in value.items():
            if not isinstance(text, str):
                raise self.fail(f"{where}.{key}", f"expected a string, got {text!r}")
        return dict(value)

    def capability(self, value: Any, where: str) -> ComputeCapability:
        parsed = ComputeCapability.maybe(value) if isinstance(value, str) else None
        if parsed is None:
            raise self.fail(where, f"{value!r} is not a compute capability")
        return parsed

    def capabilities(self, value: Any, where: str) -> Tuple[ComputeCapability, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of compute capabilities, got {value!r}")
        return tuple(self.capability(c, where) for c in value)

    def version(self, text: Any, where: str) -> Version:
        if not isinstance(text, str):
            raise self.fail(where, f"expected a version string, got {text!r}")
        try:
            return Version(text)
        except ValueError:  # InvalidVersion, or a number of 4300+ digits
            raise self.fail(where, f"{text!r} is not a version") from None

    def opt_version(self, text: Any, where: str) -> Optional[Version]:
        return None if text is None else self.version(text, where)

    def opt_driver(self, text: Any, where: str) -> Optional[DriverVersion]:
        if text is None:
            return None
        self.version(text, where)
        return DriverVersion(text)

    def provenance(self, raw: Mapping[str, Any], where: str, fields: List[str]) -> Provenance:
        sources = self.get(raw, "sources", where, list)
        if not sources:
            raise self.fail(where, "a record needs at least one source")
        for s in sources:
            if not isinstance(s, str) or not (s in self.sources or "://" in s or " " in s):
                raise self.fail(f"{where}.sources", f"{s!r} is neither a known key nor a reference")
        inferred = self.get(raw, "inferred", where, list, optional=True) or []
        for name in inferred:
            if not isinstance(name, str) or name.split(".")[0] not in fields:
                raise self.fail(f"{where}.inferred", f"{name!r} names no field of this record")
        notes = self.get(raw, "notes", where, dict, optional=True) or {}
        return Provenance(tuple(sources), tuple(inferred), self.strings(notes, f"{where}.notes"))


def _document(path: Path, name: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TABLE + 1)
        if len(raw) > MAX_TABLE:
            raise TableError(f"{path}: larger than {MAX_TABLE // 2**20} MiB; not a table")
        data = json.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except RecursionError:
        raise TableError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a >4300-digit integer
        raise TableError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TableError(f"{path}: expected a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise TableError(
            f"{path}: schema_version {version!r} is not {SCHEMA_VERSION}, "
            "the one this envcheck reads"
        )
    if data.get("table") != name:
        raise TableError(f"{path}: 'table' is {data.get('table')!r}, expected {name!r}")
    as_of = data.get("as_of")
    try:
        if not isinstance(as_of, str):
            raise ValueError(as_of)
        datetime.date.fromisoformat(as_of)
    except ValueError:
        raise TableError(f"{path}: as_of {as_of!r} is not a date (YYYY-MM-DD)") from None
    return data


# --------------------------------------------------------------------------- torch releases

_RELEASE_FIELDS = [
    "minor",
    "versions",
    "released",
    "python",
    "platforms",
    "variants",
    "default_variant",
    "torchvision",
    "torchaudio",
    "compatible",
    "arch_lists",
    "arch_lists_aarch64",
    "bundled",
    "gfx_lists",
    "python_by_platform",
    "versions_by_platform",
    "variants_windows",
    "arch_lists_windows",
    "pip_index",
    "companions_by_variant",
]


def _variants(r: _Reader, values: Any, where: str) -> Optional[Tuple[str, ...]]:
    if values is None:
        return None
    if not isinstance(values, list):
        raise r.fail(where, f"expected a list, got {values!r}")
    for v in values:
        if not isinstance(v, str) or Variant.maybe(v) is None:
            raise r.fail(where, f"{v!r} is not a wheel variant (cpu, cuXYZ, rocmX.Y, xpu)")
    return tuple(values)


def _arch_lists(r: _Reader, raw: Any, where: str) -> Dict[str, Tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object")
    out = {}
    for variant, arches in raw.items():
        _variants(r, [variant], f"{where}.{variant}")
        if not isinstance(arches, list) or not arches:
            raise r.fail(f"{where}.{variant}", "expected a non-empty list of sm_XY / compute_XY")
        for a in arches:
            if not isinstance(a, str) or Arch.maybe(a) is None:
                raise r.fail(f"{where}.{variant}", f"{a!r} is not sm_XY or compute_XY")
        out[variant] = tuple(arches)
    return out


def _gfx_lists(
    r: _Reader, raw: Any, where: str, rocm: Optional[Tuple[str, ...]]
) -> Dict[str, Tuple[str, ...]]:
    """ROCm variant -> the gfx targets its wheels carry (PYTORCH_ROCM_ARCH, as
    ``torch.cuda.get_arch_list()`` prints them). A variant left out is not known."""
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object of ROCm variant -> gfx targets")
    out = {}
    for variant, targets in raw.items():
        if variant not in (rocm or ()):
            raise r.fail(f"{where}.{variant}", "is not one of this release's ROCm variants")
        if not isinstance(targets, list) or not targets:
            raise r.fail(f"{where}.{variant}", "expected a non-empty list of gfx targets")
        for t in targets:
            if not isinstance(t, str) or not _plain_gfx(t):
                raise r.fail(f"{where}.{variant}", f"{t!r} is not a gfx target such as gfx942")
        out[variant] = tuple(targets)
    return out


def _companions(r: _Reader, raw: Any, where: str, versions: List[str]) -> Dict[str, Optional[str]]:
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object of torch version -> version")
    for torch, comp in raw.items():
        if torch not in versions:
            raise r.fail(where, f"{torch!r} is not one of this release's versions")
        r.opt_version(comp, f"{where}.{torch}")
    return dict(raw)


def _release(r: _Reader, raw: Any, where: str) -> Release:
    minor = r.get(raw, "minor", where, str)
    if not _MINOR.match(minor):
        raise r.fail(f"{where}.minor", f"{minor!r} is not MAJOR.MINOR")
    where = f"{where} ({minor})"
    version_texts = r.get(raw, "versions", where, list)
    versions = tuple(r.version(v, f"{where}.versions") for v in version_texts)
    for v in versions:
        if f"{v.major}.{v.minor}" != minor:
            raise r.fail(f"{where}.versions", f"{v} does not belong to {minor}")
    if len(set(versions)) != len(versions):
        raise r.fail(f"{where}.versions", "a version is listed twice")
    py = r.get(raw, "python", where, dict)
    py_min = r.version(py.get("min"), f"{where}.python.min")
    py_max = r.version(py.get("max"), f"{where}.python.max")
    if py_min > py_max:
        raise r.fail(f"{where}.python", f"min {py_min} is above max {py_max}")
    platforms = r.get(raw, "platforms", where, list)
    for p in platforms:
        if not isinstance(p, str) or p not in PLATFORMS:
            raise r.fail(f"{where}.platforms", f"{p!r} is not one of {', '.join(PLATFORMS)}")
    var = r.get(raw, "variants", where, dict)
    cuda = _variants(r, var.get("cuda"), f"{where}.variants.cuda")
    default = r.get(raw, "default_variant", where, dict)
    for plat, variant in default.items():
        if plat not in platforms:
            raise r.fail(f"{where}.default_variant", f"{plat!r} has no wheels in this release")
        _variants(r, [variant], f"{where}.default_variant.{plat}")
    compatible = {}
    for name, spec in (r.get(raw, "compatible", where, dict, optional=True) or {}).items():
        try:
            if not isinstance(spec, str):
                raise TypeError(spec)
            compatible[name] = SpecifierSet(spec)
        except (InvalidSpecifier, TypeError):
            raise r.fail(f"{where}.compatible.{name}", f"{spec!r} is not a specifier") from None
    bundled = r.get(raw, "bundled", where, dict, optional=True) or {}
    for variant, libs in bundled.items():
        _variants(r, [variant], f"{where}.bundled")
        bundled[variant] = r.strings(libs, f"{where}.bundled.{variant}")
    xpu = var.get("xpu")
    if xpu is not None and not isinstance(xpu, bool):
        raise r.fail(f"{where}.variants.xpu", f"expected true, false or null, got {xpu!r}")
    cpu = var.get("cpu", True)
    rocm = _variants(r, var.get("rocm"), f"{where}.variants.rocm")
    if not isinstance(cpu, bool):
        raise r.fail(f"{where}.variants.cpu", f"expected true or false, got {cpu!r}")
    per_platform = _per_platform(r, raw, where, platforms, version_texts)
    return Release(
        minor=minor,
        versions=versions,
        released=r.get(raw, "released", where, str, optional=True),
        python_min=py_min,
        python_max=py_max,
        platforms=frozenset(platforms),
        cuda_variants=cuda,
        cuda_aarch64_variants=_variants(
            r, var.get("cuda_aarch64"), f"{where}.variants.cuda_aarch64"
        ),
        rocm_variants=rocm,
        xpu=xpu,
        cpu=cpu,
        default_variant=dict(default),
        torchvision=_companions(
            r, raw.get("torchvision", {}), f"{where}.torchvision", version_texts
        ),
        torchaudio=_companions(r, raw.get("torchaudio", {}), f"{where}.torchaudio", version_texts),
        compatible=compatible,
        arch_lists=_arch_lists(r, raw.get("arch_lists", {}), f"{where}.arch_lists"),
        arch_lists_aarch64=_arch_lists(
            r, raw.get("arch_lists_aarch64", {}), f"{where}.arch_lists_aarch64"
        ),
        bundled={v: dict(libs) for v, libs in bundled.items()},
        provenance=r.provenance(raw, where, _RELEASE_FIELDS),
        gfx_lists=_gfx_lists(r, raw.get("gfx_lists", {}), f"{where}.gfx_lists", rocm),
        companions_by_variant=_companions_by_variant(
            r, raw, where, version_texts, [*(cuda or ()), *(rocm or ())]
        ),
        **per_platform,
    )


def _companions_by_variant(
    r: _Reader, raw: Mapping[str, Any], where: str, versions: List[str], variants: List[str]
) -> Dict[str, Dict[str, Dict[str, Optional[str]]]]:
    """Builds that PyTorch paired with other companions than the release's own."""
    pairs = r.get(raw, "companions_by_variant", where, dict, optional=True) or {}
    all_variants = set(variants)
    for variant, by_name in pairs.items():
        at = f"{where}.companions_by_variant.{variant}"
        if variant not in all_variants:
            raise r.fail(at, "not a variant of this release")
        if not isinstance(by_name, dict):
            raise r.fail(at, f"expected an object, got {by_name!r}")
        for name, by_torch in by_name.items():
            if name not in ("torchvision", "torchaudio") or not isinstance(by_torch, dict):
                raise r.fail(f"{at}.{name}", "expected torchvision or torchaudio: {torch: version}")
            for torch_v, comp in by_torch.items():  # comp None: no such build exists
                if torch_v not in versions or not isinstance(comp, (str, type(None))):
                    raise r.fail(f"{at}.{name}.{torch_v}", f"bad pair {torch_v!r}: {comp!r}")
                try:
                    if comp is not None:
                        Version(comp)
                except ValueError:  # InvalidVersion, or a number of 4300+ digits
                    raise r.fail(f"{at}.{name}.{torch_v}", f"{comp!r} is not a version") from None
    return {v: {n: dict(t) for n, t in b.items()} for v, b in pairs.items()}


def _per_platform(
    r: _Reader, raw: Mapping[str, Any], where: str, platforms: List[str], versions: List[str]
) -> Dict[str, Any]:
    """The facts that differ by platform: each Python range, the patch versions a platform
    lacks, the Windows variants and arch lists, and versions served from another index.
    Every field is optional: a missing one is not known, and the resolver says so."""

    def platform_key(plat: Any, field: str) -> str:
        if not isinstance(plat, str) or plat not in platforms:
            raise r.fail(f"{where}.{field}", f"{plat!r} has no wheels in this release")
        return plat

    ranges = {}
    for plat, rng in (r.get(raw, "python_by_platform", where, dict, optional=True) or {}).items():
        here = f"{where}.python_by_platform.{platform_key(plat, 'python_by_platform')}"
        if not isinstance(rng, dict):
            raise r.fail(here, f"expected {{'min': ..., 'max': ...}}, got {rng!r}")
        low = r.version(rng.get("min"), f"{here}.min")
        high = r.version(rng.get("max"), f"{here}.max")
        if low > high:
            raise r.fail(here, f"min {low} is above max {high}")
        ranges[plat] = (low, high)
    by_platform = {}
    for plat, have in (
        r.get(raw, "versions_by_platform", where, dict, optional=True) or {}
    ).items():
        here = f"{where}.versions_by_platform.{platform_key(plat, 'versions_by_platform')}"
        if not isinstance(have, list) or not have:
            raise r.fail(
                here, f"expected a non-empty list of this release's versions, got {have!r}"
            )
        for v in have:
            if v not in versions:
                raise r.fail(here, f"{v!r} is not one of this release's versions")
        by_platform[plat] = tuple(Version(v) for v in have)
    windows = r.get(raw, "variants_windows", where, dict, optional=True)
    windows_cuda: Optional[Tuple[str, ...]] = None
    windows_xpu: Optional[bool] = None
    if windows is not None:
        if "windows-x86_64" not in platforms:
            raise r.fail(
                f"{where}.variants_windows", "windows-x86_64 has no wheels in this release"
            )
        windows_cuda = _variants(r, windows.get("cuda"), f"{where}.variants_windows.cuda")
        for v in windows_cuda or ():
            if not v.startswith("cu"):
                raise r.fail(f"{where}.variants_windows.cuda", f"{v!r} is not a CUDA variant")
        windows_xpu = windows.get("xpu")
        if windows_xpu is not None and not isinstance(windows_xpu, bool):
            raise r.fail(
                f"{where}.variants_windows.xpu",
                f"expected true, false or null, got {windows_xpu!r}",
            )
    arch_windows = _arch_lists(r, raw.get("arch_lists_windows", {}), f"{where}.arch_lists_windows")
    for variant in arch_windows:
        if windows_cuda is not None and variant not in windows_cuda:
            raise r.fail(
                f"{where}.arch_lists_windows.{variant}", "not a Windows CUDA build of this release"
            )
    index = r.get(raw, "pip_index", where, dict, optional=True) or {}
    for version, url in index.items():
        if version not in versions:
            raise r.fail(f"{where}.pip_index", f"{version!r} is not one of this release's versions")
        if not isinstance(url, str) or not re.match(r"^https://[^\s]+/$", url):
            raise r.fail(
                f"{where}.pip_index.{version}", f"expected an https URL ending in '/', got {url!r}"
            )
    return {
        "python_by_platform": ranges,
        "versions_by_platform": by_platform,
        "windows_cuda": windows_cuda,
        "windows_xpu": windows_xpu,
        "arch_lists_windows": arch_windows,
        "pip_index": dict(index),
    }


def _torch_releases(data: Dict[str, Any], file: str) -> Tuple[Tuple[Release, ...], Dict[str, str]]:
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = _Reader(file, sources)
    r.strings(sources, "sources")
    raws = r.get(data, "releases", "document", list)
    releases = [_release(r, raw, f"releases[{i}]") for i, raw in enumerate(raws)]
    seen: Dict[str, int] = {}
    for i, rel in enumerate(releases):
        if rel.minor in seen:
            raise TableError(
                f"{file}: releases[{i}]: {rel.minor} is also releases[{seen[rel.minor]}]"
            )
        seen[rel.minor] = i
    if not releases:
        raise TableError(f"{file}: no releases")
    releases.sort(key=lambda rel: Version(rel.minor))
    return tuple(releases), dict(sources)


# --------------------------------------------------------------------------- CUDA and drivers


def _cuda_driver(data: Dict[str, Any], file: str):
    r = _Reader(file, {})
    toolkits = []
    for i, raw in enumerate(r.get(data, "toolkits", "document", list)):
        where = f"toolkits[{i}]"
        cuda = r.version(r.get(raw, "cuda", where, str), f"{where}.cuda")
        where = f"{where} ({cuda})"
        branch = r.get(raw, "branch", where, int, optional=True)
        if branch is not None and not 100 <= branch <= 9999:
            raise r.fail(f"{where}.branch", f"{branch!r} is not a driver branch")
        toolkits.append(
            Toolkit(
                cuda=cuda,
                linux=r.opt_driver(raw.get("linux"), f"{where}.linux"),
                windows=r.opt_driver(raw.get("windows"), f"{where}.windows"),
                provenance=r.provenance(
                    raw, where, ["cuda", "linux", "windows", "release", "branch", "updates"]
                ),
                branch=branch,
                updates=_updates(r, raw, where, cuda),
            )
        )
    keys = [(t.cuda.major, t.cuda.minor) for t in toolkits]
    if len(set(keys)) != len(keys):
        raise TableError(f"{file}: toolkits: a CUDA version is listed twice")
    compat = {}
    for i, raw in enumerate(r.get(data, "minor_version_compatibility", "document", list)):
        where = f"minor_version_compatibility[{i}]"
        major = r.get(raw, "cuda_major", where, int)
        if major in compat:
            raise TableError(f"{file}: {where}: CUDA {major} is listed twice")
        compat[major] = MinorCompat(
            cuda_major=major,
            linux=r.opt_driver(raw.get("linux"), f"{where}.linux"),
            windows=r.opt_driver(raw.get("windows"), f"{where}.windows"),
            branch=r.get(raw, "branch", where, int, optional=True),
            provenance=r.provenance(raw, where, ["cuda_major", "linux", "windows", "branch"]),
        )
    caveats = tuple(
        Caveat(r.get(c, "id", f"caveats[{i}]", str), r.get(c, "text", f"caveats[{i}]", str))
        for i, c in enumerate(r.get(data, "caveats", "document", list, optional=True) or [])
    )
    branches: Dict[int, str] = {}
    for i, raw in enumerate(r.get(data, "driver_branches", "document", list)):
        where = f"driver_branches[{i}]"
        branch = r.get(raw, "branch", where, int)
        cuda = r.get(raw, "cuda", where, str)
        r.version(cuda, f"{where}.cuda")
        r.provenance(raw, where, ["branch", "cuda"])
        if branch in branches:
            raise TableError(f"{file}: {where}: branch {branch} is listed twice")
        branches[branch] = cuda
    toolkits.sort(key=lambda t: t.cuda)
    return tuple(toolkits), compat, caveats, branches


def _updates(r: _Reader, raw: Any, where: str, cuda: Version) -> Tuple[ToolkitUpdate, ...]:
    """A toolkit's update releases (12.8.1 ...), each with the driver it was released with."""
    out = []
    for i, up in enumerate(r.get(raw, "updates", where, list, optional=True) or []):
        at = f"{where}.updates[{i}]"
        version = r.version(r.get(up, "version", at, str), f"{at}.version")
        if (version.major, version.minor) != (cuda.major, cuda.minor):
            raise r.fail(f"{at}.version", f"{version} is not an update of CUDA {cuda}")
        out.append(
            ToolkitUpdate(
                version=version,
                label=r.get(up, "label", at, str),
                linux=r.opt_driver(up.get("linux"), f"{at}.linux"),
                windows=r.opt_driver(up.get("windows"), f"{at}.windows"),
                provenance=r.provenance(up, at, ["version", "label", "linux", "windows"]),
            )
        )
    if len({u.version for u in out}) != len(out):
        raise r.fail(f"{where}.updates", "an update release is listed twice")
    return tuple(sorted(out, key=lambda u: u.version))


def _bundled_cuda(data: Dict[str, Any], file: str) -> Tuple[BundledCuda, ...]:
    """cuda_driver.json's torch_bundled_cuda: the CUDA update a torch build bundles."""
    r = _Reader(file, {})
    section = r.get(data, "torch_bundled_cuda", "document", dict, optional=True)
    if section is None:
        return ()
    out = []
    for i, raw in enumerate(r.get(section, "records", "torch_bundled_cuda", list)):
        where = f"torch_bundled_cuda.records[{i}]"
        torch = r.get(raw, "torch", where, str)
        if not _MINOR.match(torch):
            raise r.fail(f"{where}.torch", f"{torch!r} is not MAJOR.MINOR")
        variant = r.get(raw, "variant", where, str)
        _variants(r, [variant], f"{where}.variant")
        platforms = r.get(raw, "platforms", where, list)
        for p in platforms:
            if p not in PLATFORMS:
                raise r.fail(f"{where}.platforms", f"{p!r} is not one of {', '.join(PLATFORMS)}")
        update = r.version(r.get(raw, "update", where, str), f"{where}.update")
        out.append(
            BundledCuda(
                torch=torch,
                variant=variant,
                platforms=frozenset(platforms),
                cuda_runtime=r.get(raw, "cuda_runtime", where, str),
                update=update,
                provenance=r.provenance(
                    raw,
                    where,
                    ["torch", "variant", "platforms", "cuda_runtime", "update"],
                ),
            )
        )
    keys = [(b.torch, b.variant, p) for b in out for p in b.platforms]
    if len(set(keys)) != len(keys):
        raise TableError(f"{file}: torch_bundled_cuda: a build is listed twice")
    return tuple(out)


def _forward_compat(data: Dict[str, Any], file: str) -> Optional[ForwardCompat]:
    """cuda_driver.json's forward_compatibility: cuda-compat packages and their branches."""
    r = _Reader(file, {})
    raw = r.get(data, "forward_compatibility", "document", dict, optional=True)
    if raw is None:
        return None
    where = "forward_compatibility"
    packages = []
    for i, pkg in enumerate(r.get(raw, "packages", where, list)):
        at = f"{where}.packages[{i}]"
        name = r.get(pkg, "package", at, str)
        branches = r.get(pkg, "branches", at, list)
        for b in branches:
            if isinstance(b, bool) or not isinstance(b, int):
                raise r.fail(f"{at}.branches", f"{b!r} is not a driver branch")
        packages.append(
            CompatPackage(
                name, r.version(r.get(pkg, "cuda", at, str), f"{at}.cuda"), tuple(branches)
            )
        )
    branches_info = {}
    for i, br in enumerate(r.get(raw, "branches", where, list)):
        at = f"{where}.branches[{i}]"
        number = r.get(br, "branch", at, int)
        r.provenance(br, at, ["branch", "designation", "end_of_life"])
        branches_info[number] = CompatBranch(
            number,
            r.get(br, "designation", at, str, optional=True),
            r.get(br, "end_of_life", at, str, optional=True),
        )
    segments = r.get(raw, "eligible_segments", where, list)
    return ForwardCompat(
        linux_only=bool(r.get(raw, "linux_only", where, bool)),
        eligible_segments=frozenset(str(s) for s in segments),
        packages=tuple(packages),
        branches=branches_info,
        provenance=r.provenance(
            raw, where, ["linux_only", "eligible_segments", "packages", "branches"]
        ),
    )


def _first_drivers(data: Dict[str, Any], file: str) -> Tuple[FirstDriver, ...]:
    """cuda_driver.json's gpu_first_driver: the first driver per compute capability."""
    r = _Reader(file, {})
    section = r.get(data, "gpu_first_driver", "document", dict, optional=True)
    if section is None:
        return ()
    out: List[FirstDriver] = []
    for i, raw in enumerate(r.get(section, "records", "gpu_first_driver", list)):
        where = f"gpu_first_driver.records[{i}]"
        if not isinstance(raw, dict):
            raise r.fail(where, "a record must be an object")
        capability = r.capability(r.get(raw, "capability", where, str), f"{where}.capability")
        branch = r.get(raw, "branch", where, int)
        if isinstance(branch, bool) or not 100 <= branch <= 9999:
            raise r.fail(f"{where}.branch", f"{branch!r} is not a driver branch")
        out.append(
            FirstDriver(
                capability=capability,
                branch=branch,
                linux=r.opt_driver(raw.get("linux"), f"{where}.linux"),
                windows=r.opt_driver(raw.get("windows"), f"{where}.windows"),
                example=r.get(raw, "example", where, str),
                provenance=r.provenance(
                    raw, where, ["capability", "branch", "linux", "windows", "example"]
                ),
            )
        )
    if len({f.capability for f in out}) != len(out):
        raise TableError(f"{file}: gpu_first_driver: a capability is listed twice")
    return tuple(out)


# --------------------------------------------------------------------------- GPUs


def _gpu_arches(data: Dict[str, Any], file: str):
    r = _Reader(file, {})
    families = []
    for i, raw in enumerate(r.get(data, "families", "document", list)):
        where = f"families[{i}]"
        name = r.get(raw, "family", where, str)
        caps = r.capabilities(r.get(raw, "capabilities", where, list), f"{where}.capabilities")
        families.append(
            Family(
                name=name,
                capabilities=caps,
                first_cuda=r.opt_version(raw.get("first_cuda"), f"{where}.first_cuda"),
                last_cuda_major=r.get(raw, "last_cuda_major", where, int, optional=True),
                last_driver_branch=r.get(raw, "last_driver_branch", where, int, optional=True),
                provenance=r.provenance(
                    raw,
                    where,
                    [
                        "family",
                        "capabilities",
                        "first_cuda",
                        "last_cuda_major",
                        "last_driver_branch",
                    ],
                ),
            )
        )
    sass_raw = r.get(data, "sass_compatibility", "document", dict)
    r.provenance(sass_raw, "sass_compatibility", ["rules", "ptx"])
    rules = {}
    for arch, rule in r.get(sass_raw, "rules", "sass_compatibility", dict).items():
        where = f"sass_compatibility.rules.{arch}"
        if Arch.maybe(arch) is None or not isinstance(rule, dict):
            raise r.fail(where, "expected sm_XY -> {only} or {min, below[, except]}")
        only = r.capabilities(rule.get("only", []), f"{where}.only")
        low = None if rule.get("min") is None else r.capability(rule["min"], f"{where}.min")
        below = None if rule.get("below") is None else r.capability(rule["below"], f"{where}.below")
        if not only and not (low and below):
            raise r.fail(where, "needs 'only', or 'min' and 'below'")
        rules[arch] = SassRule(
            only=only,
            min=low,
            below=below,
            exclude=r.capabilities(rule.get("except", []), f"{where}.except"),
        )
    gpus = []
    names = set()
    for i, raw in enumerate(r.get(data, "gpus", "document", list)):
        where = f"gpus[{i}]"
        name = r.get(raw, "name", where, str)
        # an NVIDIA GPU has a compute capability, an AMD GPU an LLVM target (gfx): one of them
        gfx = r.get(raw, "gfx", where, str, optional=True)
        if gfx is None:
            cap = r.capability(r.get(raw, "capability", where, str), f"{where}.capability")
        elif raw.get("capability") is not None:
            raise r.fail(where, "has both a capability and a gfx target")
        elif not _plain_gfx(gfx):
            raise r.fail(f"{where}.gfx", f"{gfx!r} is not an AMD LLVM target (gfx942, gfx90a)")
        else:
            cap = None
        if name in names:
            raise r.fail(where, f"{name!r} is listed twice")
        names.add(name)
        r.provenance(raw, where, ["name", "capability", "gfx", "family", "segment"])
        family = r.get(raw, "family", where, str)
        segment = r.get(raw, "segment", where, str, optional=True) or ""
        gpus.append(GpuModel(name, cap, family, segment, gfx))
    return tuple(families), rules, tuple(gpus)


# --------------------------------------------------------------------------- installers


def _installers(data: Dict[str, Any], file: str) -> Tuple[str, ...]:
    r = _Reader(file, {})
    raw = r.get(data, "uv_torch_backends", "document", dict)
    r.provenance(raw, "uv_torch_backends", ["values", "scope"])
    values = r.get(raw, "values", "uv_torch_backends", list)
    for v in values:
        if not isinstance(v, str) or not (v == "auto" or Variant.maybe(v) is not None):
            raise r.fail("uv_torch_backends.values", f"{v!r} is not a backend name")
    return tuple(values)


# --------------------------------------------------------------------------- conda channel

_CONDA_PACKAGE = re.compile(r"^(cpuonly|(cudatoolkit|pytorch-cuda)=\d+\.\d+)$")
_CHANNEL = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def _conda_build(r: _Reader, raw: Any, where: str, covers: FrozenSet[str]) -> CondaBuild:
    platforms = r.get(raw, "platforms", where, list)
    if not platforms:
        raise r.fail(f"{where}.platforms", "a build needs at least one platform")
    for p in platforms:
        if not isinstance(p, str) or p not in covers:
            raise r.fail(f"{where}.platforms", f"{p!r} is not one of the record's covers")
    variant = r.get(raw, "variant", where, str)
    if variant != "cpu" and not re.match(r"^cu\d{3,}$", variant):
        raise r.fail(f"{where}.variant", f"{variant!r} is not cpu or cuXYZ")
    if "package" not in raw:
        raise r.fail(where, "missing field 'package' (null: none)")
    package = raw["package"]
    if package is not None and (not isinstance(package, str) or not _CONDA_PACKAGE.match(package)):
        raise r.fail(
            f"{where}.package", f"{package!r} is not cpuonly, cudatoolkit=X.Y or pytorch-cuda=X.Y"
        )
    if package is not None and package != "cpuonly":
        cuda = package.split("=", 1)[1]
        if variant != "cu" + cuda.replace(".", ""):
            raise r.fail(f"{where}.package", f"{package!r} does not select {variant}")
    elif variant != "cpu":
        raise r.fail(f"{where}.variant", f"{variant!r} with package {package!r}")
    channels = r.get(raw, "channels", where, list)
    if not channels:
        raise r.fail(f"{where}.channels", "a command needs at least one channel")
    for c in channels:
        if not isinstance(c, str) or not _CHANNEL.match(c):
            raise r.fail(f"{where}.channels", f"{c!r} is not a channel name")
    return CondaBuild(tuple(platforms), variant, package, tuple(channels))


def _conda_pytorch(data: Dict[str, Any], file: str) -> CondaChannel:
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = _Reader(file, sources)
    r.strings(sources, "sources")
    channel = r.get(data, "channel", "document", dict)
    name = r.get(channel, "name", "channel", str)
    last = r.get(channel, "last", "channel", str)
    if not _MINOR.match(last):
        raise r.fail("channel.last", f"{last!r} is not MAJOR.MINOR")
    provenance = r.provenance(channel, "channel", ["name", "last"])
    releases: List[CondaRelease] = []
    seen = set()
    for i, raw in enumerate(r.get(data, "releases", "document", list)):
        where = f"releases[{i}]"
        torch = r.version(r.get(raw, "torch", where, str), f"{where}.torch")
        where = f"{where} ({torch})"
        if torch in seen:
            raise r.fail(where, "torch version is listed twice")
        seen.add(torch)
        if Version(f"{torch.major}.{torch.minor}") > Version(last):
            raise r.fail(f"{where}.torch", f"newer than the channel's last release {last}")
        covers = r.get(raw, "covers", where, list)
        for p in covers:
            if not isinstance(p, str) or p not in PLATFORMS:
                raise r.fail(f"{where}.covers", f"{p!r} is not one of {', '.join(PLATFORMS)}")
        cover_set = frozenset(covers)
        builds = tuple(
            _conda_build(r, b, f"{where}.builds[{j}]", cover_set)
            for j, b in enumerate(r.get(raw, "builds", where, list))
        )
        for p in cover_set:
            variants = [b.variant for b in builds if p in b.platforms]
            if len(set(variants)) != len(variants):
                raise r.fail(f"{where}.builds", f"two builds of one variant for {p}")
        releases.append(
            CondaRelease(
                torch=torch,
                torchvision=_opt_text_version(r, raw, "torchvision", where),
                torchaudio=_opt_text_version(r, raw, "torchaudio", where),
                covers=cover_set,
                builds=builds,
                python_max=r.opt_version(raw.get("python_max"), f"{where}.python_max"),
                provenance=r.provenance(
                    raw,
                    where,
                    ["torch", "torchvision", "torchaudio", "covers", "builds", "python_max"],
                ),
            )
        )
    releases.sort(key=lambda rel: rel.torch)
    return CondaChannel(name, Version(last), tuple(releases), provenance)


def _opt_text_version(r: _Reader, raw: Any, key: str, where: str) -> Optional[str]:
    value = raw.get(key)
    r.opt_version(value, f"{where}.{key}")
    return value


# --------------------------------------------------------------------------- messages

MESSAGE_FACTS = (
    "gpu_capability",  # "sm_120" / "12.0" / "120": a GPU of that capability is here
    "gpu_name",  # a GPU's name, as the message prints it
    "arch_list",  # the architectures the build carries ("sm_50 sm_60 sm_70")
    "cuda_driver_version",  # the CUDA the driver supports: 12020 or 12.2
    "nvcc_version",
    "torch_cuda",
    "torch_version",
    "companion_cuda",  # the CUDA a companion (torchvision) was built with
    "python_version",
    "package",  # the package whose file failed (torchvision, torchaudio, an extension)
    "nvml_error",
    "torch_variant",
    "os",  # Linux, Windows, Darwin: the message exists only there
)


# The conditions a message's case may put on the other facts of the text (evaluated by
# envcheck.diagnose.case_of).
MESSAGE_CONDITIONS = (
    "os",  # Linux | Windows | Darwin
    "driver",  # stated | absent: the text gives a driver version or the CUDA it supports
    "gpu_capability_at_least",  # "10.0": some GPU of at least this compute capability
    "gpu_capability_below",  # "7.0": some GPU below it
)


def _messages(data: Dict[str, Any], file: str) -> Tuple[MessageRule, ...]:
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = _Reader(file, sources)
    r.strings(sources, "sources")
    out = []
    seen = set()
    for i, raw in enumerate(r.get(data, "messages", "document", list)):
        where = f"messages[{i}]"
        ident = r.get(raw, "id", where, str)
        where = f"{where} ({ident})"
        if ident in seen:
            raise r.fail(where, "id is listed twice")
        seen.add(ident)
        text = r.get(raw, "pattern", where, str)
        try:
            pattern = re.compile(text)
        except (re.error, OverflowError) as exc:
            raise r.fail(f"{where}.pattern", f"not a regular expression: {exc}") from None
        except RecursionError:
            raise r.fail(
                f"{where}.pattern", "not a regular expression: nested too deeply"
            ) from None
        extracts = r.strings(r.get(raw, "extracts", where, dict), f"{where}.extracts")
        for fact in extracts:
            if fact not in MESSAGE_FACTS:
                raise r.fail(
                    f"{where}.extracts", f"{fact!r} is not one of {', '.join(MESSAGE_FACTS)}"
                )
        examples = r.get(raw, "examples", where, list, optional=True) or []
        replaces = r.get(raw, "replaces", where, list, optional=True) or []
        follows = r.get(raw, "follows", where, list, optional=True) or []
        for name, items in (("examples", examples), ("replaces", replaces), ("follows", follows)):
            if not all(isinstance(x, str) and x for x in items):
                raise r.fail(f"{where}.{name}", "expected a list of strings")
        install = r.get(raw, "install", where, bool, optional=True) or False
        cases = []
        for j, case in enumerate(r.get(raw, "cases", where, list, optional=True) or []):
            at = f"{where}.cases[{j}]"
            if not isinstance(case, dict):
                raise r.fail(at, "expected an object")
            when = r.strings(r.get(case, "when", at, dict), f"{at}.when")
            unknown = [k for k in when if k not in MESSAGE_CONDITIONS]
            if unknown or not when:
                raise r.fail(f"{at}.when", f"conditions are {', '.join(MESSAGE_CONDITIONS)}")
            cases.append(
                MessageCase(dict(when), r.get(case, "cause", at, str), r.get(case, "fix", at, str))
            )
        severity = r.get(raw, "severity", where, str, optional=True) or "error"
        if severity not in ("error", "warning", "info"):
            raise r.fail(f"{where}.severity", f"{severity!r} is not error, warning or info")
        prov = r.provenance(raw, where, ["id", "pattern", "title", "cause", "fix", "extracts"])
        out.append(
            MessageRule(
                id=ident,
                pattern=pattern,
                title=r.get(raw, "title", where, str),
                cause=r.get(raw, "cause", where, str),
                fix=r.get(raw, "fix", where, str),
                extracts=dict(extracts),
                sources=prov.sources,
                examples=tuple(examples),
                replaces=tuple(replaces),
                follows=tuple(follows),
                install=install,
                severity=severity,
                cases=tuple(cases),
            )
        )
    for rule in out:
        unknown = [x for x in rule.replaces if x not in seen]
        if unknown:
            raise r.fail(f"messages ({rule.id}).replaces", f"no message {unknown[0]!r}")
    return tuple(out)


# --------------------------------------------------------------------------- entry point


def tables_dir_from_env(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    env = os.environ if environ is None else environ
    return env.get(ENV_VAR) or None


def _links(data: Dict[str, Any], path: str) -> LinkTable:
    """links.json: NVLink GB/s per link per direction by generation, PCIe per lane by rate."""
    read = _Reader(path, _Reader("links", {}).strings(data.get("sources"), "sources"))
    nvlink: Dict[int, float] = {}
    for i, raw in enumerate(read.get(data, "nvlink", "nvlink", list)):
        where = f"nvlink[{i}]"
        version = read.get(raw, "version", where, int)
        rate = read.get(raw, "gb_per_s_per_link_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        nvlink[version] = rate
    pcie: List[Tuple[float, int, float]] = []
    for i, raw in enumerate(read.get(data, "pcie", "pcie", list)):
        where = f"pcie[{i}]"
        gts = read.get(raw, "gt_per_s", where, float)
        generation = read.get(raw, "generation", where, int)
        per_lane = read.get(raw, "gb_per_s_per_lane_per_direction", where, float)
        read.provenance(raw, where, list(raw))
        pcie.append((gts, generation, per_lane))
    shm = read.get(data, "nccl_shm", "nccl_shm", dict)
    read.provenance(shm, "nccl_shm", list(shm))
    per_arch = read.get(shm, "bytes_per_connection", "nccl_shm", dict)
    sizes = {
        str(arch): read.get(per_arch, arch, "nccl_shm.bytes_per_connection", int)
        for arch in per_arch
    }
    channels = read.get(shm, "min_channels", "nccl_shm", int)
    return LinkTable(data["as_of"], nvlink, tuple(pcie), sizes, channels)


def load_tables(directory: Optional[os.PathLike] = None) -> Tables:
    """Load every table; ``directory`` files replace the built-in ones they name."""
    builtin = builtin_dir()
    user = Path(directory) if directory else None
    if user is not None and not user.is_dir():
        raise TableError(f"{user}: not a folder of compatibility tables")
    docs: Dict[str, Dict[str, Any]] = {}
    files: Dict[str, TableFile] = {}
    for name in TABLE_NAMES:
        path = builtin / f"{name}.json"
        if user is not None and (user / f"{name}.json").is_file():
            path = user / f"{name}.json"
        data = _document(path, name)
        docs[name] = data
        files[name] = TableFile(
            name, path, data["schema_version"], data["as_of"], path.parent == builtin
        )
    releases, sources = _torch_releases(docs["torch_releases"], str(files["torch_releases"].path))
    toolkits, compat, caveats, branches = _cuda_driver(
        docs["cuda_driver"], str(files["cuda_driver"].path)
    )
    families, rules, gpus = _gpu_arches(docs["gpu_arches"], str(files["gpu_arches"].path))
    uv_backends = _installers(docs["installers"], str(files["installers"].path))
    messages = _messages(docs["messages"], str(files["messages"].path))
    return Tables(
        files=files,
        releases=releases,
        toolkits=toolkits,
        minor_compat=compat,
        caveats=caveats,
        driver_branches=branches,
        families=families,
        sass_rules=rules,
        gpus=gpus,
        sources=sources,
        uv_torch_backends=uv_backends,
        messages=messages,
        first_drivers=_first_drivers(docs["cuda_driver"], str(files["cuda_driver"].path)),
        bundled_cuda=_bundled_cuda(docs["cuda_driver"], str(files["cuda_driver"].path)),
        forward_compat=_forward_compat(docs["cuda_driver"], str(files["cuda_driver"].path)),
        conda=_conda_pytorch(docs["conda_pytorch"], str(files["conda_pytorch"].path)),
        links=_links(docs["links"], str(files["links"].path)),
    )
