"""torch_releases.json: every torch release, its Python range, platforms, variants, arch and gfx
lists and companions, per platform where they differ."""

from __future__ import annotations

import datetime
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..values import Arch, Variant
from .model import (
    PLATFORMS,
    Release,
    RowConfidence,
)
from .reader import MINOR, Reader, TableError, plain_gfx, variant, variants

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
    "confidence",
    "source_date",
]


def _arch_lists(r: Reader, raw: Any, where: str) -> Dict[Variant, Tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object")
    out = {}
    for name, arches in raw.items():
        build = variant(r, name, f"{where}.{name}")
        if not isinstance(arches, list) or not arches:
            raise r.fail(f"{where}.{name}", "expected a non-empty list of sm_XY / compute_XY")
        for a in arches:
            if not isinstance(a, str) or Arch.maybe(a) is None:
                raise r.fail(f"{where}.{name}", f"{a!r} is not sm_XY or compute_XY")
        out[build] = tuple(arches)
    return out


def _gfx_lists(
    r: Reader, raw: Any, where: str, rocm: Optional[Tuple[Variant, ...]]
) -> Dict[Variant, Tuple[str, ...]]:
    """ROCm variant -> the gfx targets its wheels carry (PYTORCH_ROCM_ARCH, as
    ``torch.cuda.get_arch_list()`` prints them). A variant left out is not known."""
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object of ROCm variant -> gfx targets")
    out = {}
    for name, targets in raw.items():
        build = Variant.maybe(name) if isinstance(name, str) else None
        if build is None or build not in (rocm or ()):
            raise r.fail(f"{where}.{name}", "is not one of this release's ROCm variants")
        if not isinstance(targets, list) or not targets:
            raise r.fail(f"{where}.{name}", "expected a non-empty list of gfx targets")
        for t in targets:
            if not isinstance(t, str) or not plain_gfx(t):
                raise r.fail(f"{where}.{name}", f"{t!r} is not a gfx target such as gfx942")
        out[build] = tuple(targets)
    return out


def _companions(r: Reader, raw: Any, where: str, versions: List[str]) -> Dict[str, Optional[str]]:
    if not isinstance(raw, dict):
        raise r.fail(where, "expected an object of torch version -> version")
    for torch, comp in raw.items():
        if torch not in versions:
            raise r.fail(where, f"{torch!r} is not one of this release's versions")
        r.opt_version(comp, f"{where}.{torch}")
    return dict(raw)


def _release(r: Reader, raw: Any, where: str) -> Release:
    minor = r.get(raw, "minor", where, str)
    if not MINOR.match(minor):
        raise r.fail(f"{where}.minor", f"{minor!r} is not MAJOR.MINOR")
    where = f"{where} ({minor})"
    version_texts = r.get(raw, "versions", where, list)
    versions = _versions(r, version_texts, where, minor)
    py_min, py_max = _python(r, raw, where)
    platforms = r.get(raw, "platforms", where, list)
    for p in platforms:
        if not isinstance(p, str) or p not in PLATFORMS:
            raise r.fail(f"{where}.platforms", f"{p!r} is not one of {', '.join(PLATFORMS)}")
    var = r.get(raw, "variants", where, dict)
    cuda = variants(r, var.get("cuda"), f"{where}.variants.cuda")
    default: Dict[str, Variant] = {}
    for plat, name in r.get(raw, "default_variant", where, dict).items():
        if plat not in platforms:
            raise r.fail(f"{where}.default_variant", f"{plat!r} has no wheels in this release")
        default[plat] = variant(r, name, f"{where}.default_variant.{plat}")
    compatible = _compatible(r, raw, where)
    bundled = _bundled(r, raw, where)
    xpu, cpu = _xpu_cpu(r, var, where)
    rocm = variants(r, var.get("rocm"), f"{where}.variants.rocm")
    per_platform = _per_platform(r, raw, where, platforms, version_texts)
    return Release(
        minor=minor,
        versions=versions,
        released=r.get(raw, "released", where, str, optional=True),
        python_min=py_min,
        python_max=py_max,
        platforms=frozenset(platforms),
        cuda_variants=cuda,
        cuda_aarch64_variants=variants(
            r, var.get("cuda_aarch64"), f"{where}.variants.cuda_aarch64"
        ),
        rocm_variants=rocm,
        xpu=xpu,
        cpu=cpu,
        default_variant=default,
        torchvision=_companions(
            r, raw.get("torchvision", {}), f"{where}.torchvision", version_texts
        ),
        torchaudio=_companions(r, raw.get("torchaudio", {}), f"{where}.torchaudio", version_texts),
        compatible=compatible,
        arch_lists=_arch_lists(r, raw.get("arch_lists", {}), f"{where}.arch_lists"),
        arch_lists_aarch64=_arch_lists(
            r, raw.get("arch_lists_aarch64", {}), f"{where}.arch_lists_aarch64"
        ),
        bundled=bundled,
        provenance=r.provenance(raw, where, _RELEASE_FIELDS),
        gfx_lists=_gfx_lists(r, raw.get("gfx_lists", {}), f"{where}.gfx_lists", rocm),
        companions_by_variant=_companions_by_variant(
            r, raw, where, version_texts, [*(cuda or ()), *(rocm or ())]
        ),
        **per_platform,
        **_confidence(r, raw, where),
    )


def _confidence(r: Reader, raw: Any, where: str) -> Dict[str, Any]:
    """What the row was read from and when (absent: a row of the release itself, as every
    table before these fields was)."""
    text = r.get(raw, "confidence", where, str, optional=True) or "release"
    try:
        confidence = RowConfidence(text)
    except ValueError:
        allowed = ", ".join(c.value for c in RowConfidence)
        raise r.fail(f"{where}.confidence", f"{text!r} is not one of {allowed}") from None
    day = r.get(raw, "source_date", where, str, optional=True)
    if day is not None:
        try:
            datetime.date.fromisoformat(day)
        except ValueError:
            raise r.fail(f"{where}.source_date", f"{day!r} is not YYYY-MM-DD") from None
    return {"confidence": confidence, "source_date": day}


def _xpu_cpu(r: Reader, var: Dict[str, Any], where: str) -> Tuple[Optional[bool], bool]:
    """Whether the release has XPU wheels (None: not known) and CPU wheels."""
    xpu = var.get("xpu")
    if xpu is not None and not isinstance(xpu, bool):
        raise r.fail(f"{where}.variants.xpu", f"expected true, false or null, got {xpu!r}")
    cpu = var.get("cpu", True)
    if not isinstance(cpu, bool):
        raise r.fail(f"{where}.variants.cpu", f"expected true or false, got {cpu!r}")
    return xpu, cpu


def _versions(r: Reader, texts: List[Any], where: str, minor: str) -> Tuple[Version, ...]:
    """The release's versions: each of its minor, none twice."""
    versions = tuple(r.version(v, f"{where}.versions") for v in texts)
    for v in versions:
        if f"{v.major}.{v.minor}" != minor:
            raise r.fail(f"{where}.versions", f"{v} does not belong to {minor}")
    if len(set(versions)) != len(versions):
        raise r.fail(f"{where}.versions", "a version is listed twice")
    return versions


def _python(r: Reader, raw: Any, where: str) -> Tuple[Version, Version]:
    """The oldest and newest Python the release has wheels for."""
    py = r.get(raw, "python", where, dict)
    py_min = r.version(py.get("min"), f"{where}.python.min")
    py_max = r.version(py.get("max"), f"{where}.python.max")
    if py_min > py_max:
        raise r.fail(f"{where}.python", f"min {py_min} is above max {py_max}")
    return py_min, py_max


def _compatible(r: Reader, raw: Any, where: str) -> Dict[str, SpecifierSet]:
    """Companion package -> the versions of it that work with this release."""
    compatible = {}
    for name, spec in (r.get(raw, "compatible", where, dict, optional=True) or {}).items():
        try:
            if not isinstance(spec, str):
                raise TypeError(spec)
            compatible[name] = SpecifierSet(spec)
        except (InvalidSpecifier, TypeError):
            raise r.fail(f"{where}.compatible.{name}", f"{spec!r} is not a specifier") from None
    return compatible


def _bundled(r: Reader, raw: Any, where: str) -> Dict[Variant, Dict[str, str]]:
    """Variant -> the libraries its wheels bundle, with their versions."""
    bundled = r.get(raw, "bundled", where, dict, optional=True) or {}
    out = {}
    for name, libs in bundled.items():
        build = variant(r, name, f"{where}.bundled")
        out[build] = r.strings(libs, f"{where}.bundled.{name}")
    return out


def _companions_by_variant(
    r: Reader, raw: Mapping[str, Any], where: str, versions: List[str], builds: List[Variant]
) -> Dict[Variant, Dict[str, Dict[str, Optional[str]]]]:
    """Builds that PyTorch paired with other companions than the release's own."""
    pairs = r.get(raw, "companions_by_variant", where, dict, optional=True) or {}
    keys: Dict[str, Variant] = {}
    for name, by_name in pairs.items():
        at = f"{where}.companions_by_variant.{name}"
        build = Variant.maybe(name) if isinstance(name, str) else None
        if build is None or build not in builds:
            raise r.fail(at, "not a variant of this release")
        keys[name] = build
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
    return {keys[v]: {n: dict(t) for n, t in b.items()} for v, b in pairs.items()}


def _per_platform(
    r: Reader, raw: Mapping[str, Any], where: str, platforms: List[str], versions: List[str]
) -> Dict[str, Any]:
    """The facts that differ by platform: each Python range, the patch versions a platform
    lacks, the Windows variants and arch lists, and versions served from another index.
    Every field is optional: a missing one is not known, and the resolver says so."""
    windows_cuda, windows_xpu = _windows_variants(r, raw, where, platforms)
    arch_windows = _arch_lists(r, raw.get("arch_lists_windows", {}), f"{where}.arch_lists_windows")
    for build in arch_windows:
        if windows_cuda is not None and build not in windows_cuda:
            raise r.fail(
                f"{where}.arch_lists_windows.{build}", "not a Windows CUDA build of this release"
            )
    return {
        "python_by_platform": _python_by_platform(r, raw, where, platforms),
        "versions_by_platform": _versions_by_platform(r, raw, where, platforms, versions),
        "windows_cuda": windows_cuda,
        "windows_xpu": windows_xpu,
        "arch_lists_windows": arch_windows,
        "pip_index": _pip_index(r, raw, where, versions),
    }


def _platform(r: Reader, plat: Any, where: str, platforms: List[str]) -> str:
    """A key naming one of the release's platforms."""
    if not isinstance(plat, str) or plat not in platforms:
        raise r.fail(where, f"{plat!r} has no wheels in this release")
    return plat


def _python_by_platform(
    r: Reader, raw: Mapping[str, Any], where: str, platforms: List[str]
) -> Dict[str, Tuple[Version, Version]]:
    """Platform -> its own Python range, where it differs from the release's."""
    ranges = {}
    for plat, rng in (r.get(raw, "python_by_platform", where, dict, optional=True) or {}).items():
        field = f"{where}.python_by_platform"
        here = f"{field}.{_platform(r, plat, field, platforms)}"
        if not isinstance(rng, dict):
            raise r.fail(here, f"expected {{'min': ..., 'max': ...}}, got {rng!r}")
        low = r.version(rng.get("min"), f"{here}.min")
        high = r.version(rng.get("max"), f"{here}.max")
        if low > high:
            raise r.fail(here, f"min {low} is above max {high}")
        ranges[plat] = (low, high)
    return ranges


def _versions_by_platform(
    r: Reader, raw: Mapping[str, Any], where: str, platforms: List[str], versions: List[str]
) -> Dict[str, Tuple[Version, ...]]:
    """Platform -> the patch versions it has, where it lacks some."""
    by_platform = {}
    for plat, have in (
        r.get(raw, "versions_by_platform", where, dict, optional=True) or {}
    ).items():
        field = f"{where}.versions_by_platform"
        here = f"{field}.{_platform(r, plat, field, platforms)}"
        if not isinstance(have, list) or not have:
            raise r.fail(
                here, f"expected a non-empty list of this release's versions, got {have!r}"
            )
        for v in have:
            if v not in versions:
                raise r.fail(here, f"{v!r} is not one of this release's versions")
        by_platform[plat] = tuple(Version(v) for v in have)
    return by_platform


def _windows_variants(
    r: Reader, raw: Mapping[str, Any], where: str, platforms: List[str]
) -> Tuple[Optional[Tuple[Variant, ...]], Optional[bool]]:
    """The CUDA variants and XPU build Windows has, where they differ from Linux's."""
    windows = r.get(raw, "variants_windows", where, dict, optional=True)
    if windows is None:
        return None, None
    if "windows-x86_64" not in platforms:
        raise r.fail(f"{where}.variants_windows", "windows-x86_64 has no wheels in this release")
    windows_cuda = variants(r, windows.get("cuda"), f"{where}.variants_windows.cuda")
    for v in windows_cuda or ():
        if not v.is_cuda:
            raise r.fail(f"{where}.variants_windows.cuda", f"{str(v)!r} is not a CUDA variant")
    windows_xpu = windows.get("xpu")
    if windows_xpu is not None and not isinstance(windows_xpu, bool):
        raise r.fail(
            f"{where}.variants_windows.xpu",
            f"expected true, false or null, got {windows_xpu!r}",
        )
    return windows_cuda, windows_xpu


def _pip_index(
    r: Reader, raw: Mapping[str, Any], where: str, versions: List[str]
) -> Dict[str, str]:
    """Version -> the index it is served from, where not PyTorch's usual one."""
    index = r.get(raw, "pip_index", where, dict, optional=True) or {}
    for version, url in index.items():
        if version not in versions:
            raise r.fail(f"{where}.pip_index", f"{version!r} is not one of this release's versions")
        if not isinstance(url, str) or not re.match(r"^https://[^\s]+/$", url):
            raise r.fail(
                f"{where}.pip_index.{version}", f"expected an https URL ending in '/', got {url!r}"
            )
    return dict(index)


def read_torch_releases(
    data: Dict[str, Any], file: str
) -> Tuple[Tuple[Release, ...], Dict[str, str]]:
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = Reader(file, sources)
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
