"""package_builds.json: packages whose installed version carries the torch their compiled
extensions were built against (PyG's ``torch_scatter 2.1.2+pt21cu121``), how to read that
label, and the index holding their builds for another torch.

Why a table: which package records what is knowledge that changes with each project's build
scripts; a new package is an entry here, not code (the check, PKG007, only applies it)."""

from __future__ import annotations

import re
from typing import Any, Dict, Pattern

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..findings import SEVERITIES
from ..values import Variant
from .package_build_records import (
    ABI_GROUP,
    BUILD_GROUPS,
    GROUPS,
    BuildRecord,
    CudaBuild,
    NumpyAbi,
    PackageBuild,
    PackageBuilds,
    TorchAbi,
    TorchRange,
)
from .reader import Reader
from .versions import PLATFORMS


def _regex(r: Reader, raw: Any, key: str, where: str, optional: bool = False) -> Any:
    text = r.get(raw, key, where, str, optional=optional)
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise r.fail(f"{where}.{key}", f"not a regular expression: {exc}") from None


def _label_groups(r: Reader, pattern: Pattern[str], where: str) -> Pattern[str]:
    groups = set(pattern.groupindex) - {ABI_GROUP}
    if not (groups >= GROUPS and len(groups - GROUPS) == 1 and groups - GROUPS <= BUILD_GROUPS):
        raise r.fail(
            where, "needs exactly the groups major, minor and one of variant, cuda (and abi)"
        )
    return pattern


def _record(r: Reader, raw: Any, where: str) -> BuildRecord:
    """A build-record file: a relative path inside the site folder (no ``..``, no root)."""
    file = r.get(raw, "file", where, str)
    parts = file.split("/")
    if file.startswith("/") or "\\" in file or any(p in ("", ".", "..") for p in parts):
        raise r.fail(
            f"{where}.file", "a relative path inside the site folder, with / between parts"
        )
    pattern = _label_groups(r, _regex(r, raw, "pattern", where), f"{where}.pattern")
    return BuildRecord(file, pattern, _regex(r, raw, "bound_if", where, optional=True))


def _package(r: Reader, raw: Any, where: str) -> PackageBuild:
    names = r.get(raw, "names", where, list)
    if not names or not all(isinstance(n, str) and n == n.lower() for n in names):
        raise r.fail(f"{where}.names", "a list of normalised (lower-case) project names")
    label = _regex(r, raw, "label", where, optional=True)
    if label is not None:
        _label_groups(r, label, f"{where}.label")
    has_record = isinstance(raw, dict) and raw.get("record") is not None
    record = _record(r, raw["record"], f"{where}.record") if has_record else None
    index = r.get(raw, "index", where, str, optional=True)
    if index is not None and not (index.startswith("https://") and "{torch}" in index):
        raise r.fail(f"{where}.index", "an https URL with {torch} (and {variant}) in it")
    source_build = r.get(raw, "source_build", where, bool, optional=True) or False
    cuda_minor = r.get(raw, "cuda_minor", where, bool, optional=True) or False
    fails = r.get(raw, "fails", where, str, optional=True)
    keys = ["names", "label", "record", "index", "source_build", "cuda_minor", "fails"]
    provenance = r.provenance(raw, where, keys)
    return PackageBuild(
        tuple(names), label, index, provenance, source_build, record, cuda_minor, fails
    )


def _numpy(r: Reader, raw: Any, where: str) -> NumpyAbi:
    specs = {key: _specifier(r, raw, key, where) for key in ("torch", "numpy")}
    platforms = r.get(raw, "platforms", where, list, optional=True)
    if platforms is not None and not all(p in PLATFORMS for p in platforms):
        raise r.fail(f"{where}.platforms", f"names a platform envcheck does not know: {platforms}")
    provenance = r.provenance(raw, where, ["torch", "platforms", "numpy"])
    plats = None if platforms is None else tuple(platforms)
    return NumpyAbi(specs["torch"], plats, specs["numpy"], provenance)


def _pattern(r: Reader, raw: Any, key: str, where: str) -> Pattern[str]:
    text = r.get(raw, key, where, str)
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise r.fail(f"{where}.{key}", f"not a regular expression: {exc}") from None
    if set(pattern.groupindex) != {"cuda"}:
        raise r.fail(f"{where}.{key}", "needs exactly the group cuda (its CUDA digits)")
    return pattern


def _cuda_build(r: Reader, raw: Any, where: str) -> CudaBuild:
    """One entry of cuda_builds: a ``name`` pattern that records the major, or ``names``
    whose major is in their requirement on the CUDA runtime wheel (one of the two)."""
    has_name = isinstance(raw, dict) and raw.get("name") is not None
    name = _pattern(r, raw, "name", where) if has_name else None
    names = r.get(raw, "names", where, list, optional=True) or []
    if (name is None) == (not names) or not all(isinstance(n, str) for n in names):
        raise r.fail(where, "needs a name pattern or a list of names, not both")
    replacement = r.get(raw, "replacement", where, str, optional=True)
    if replacement is not None and "{major}" not in replacement:
        raise r.fail(f"{where}.replacement", "needs {major} in it")
    fails = r.get(raw, "fails", where, str)
    provenance = r.provenance(raw, where, ["name", "names", "replacement", "fails"])
    return CudaBuild(name, tuple(names), replacement, fails, provenance)


def _specifier(r: Reader, raw: Any, key: str, where: str, optional: bool = False) -> Any:
    text = r.get(raw, key, where, str, optional=optional)
    try:
        return None if text is None else SpecifierSet(text)
    except InvalidSpecifier:
        raise r.fail(f"{where}.{key}", f"{text!r} is not a version specifier") from None


def _torch_range(r: Reader, raw: Any, where: str) -> TorchRange:
    """One entry of torch_ranges: the package's releases, and the torch they need."""
    names = r.get(raw, "names", where, list)
    if not names or not all(isinstance(n, str) and n == n.lower() for n in names):
        raise r.fail(f"{where}.names", "a list of normalised (lower-case) project names")
    versions = _specifier(r, raw, "versions", where)
    torch = _specifier(r, raw, "torch", where)
    severity = r.get(raw, "severity", where, str, optional=True) or "error"
    if severity not in SEVERITIES:
        raise r.fail(f"{where}.severity", f"one of {', '.join(SEVERITIES)}")
    fails = r.get(raw, "fails", where, str)
    provenance = r.provenance(raw, where, ["names", "versions", "torch", "fails", "severity"])
    return TorchRange(tuple(names), versions, torch, fails, severity, provenance)


def _torch_abi(r: Reader, raw: Any, where: str) -> TorchAbi:
    torch = _specifier(r, raw, "torch", where)
    platforms = r.get(raw, "platforms", where, list)
    if not platforms or not all(p in PLATFORMS for p in platforms):
        raise r.fail(f"{where}.platforms", f"names a platform envcheck does not know: {platforms}")
    variants = r.get(raw, "variants", where, list, optional=True)
    if variants is not None and not all(
        isinstance(v, str) and Variant.maybe(v) is not None for v in variants
    ):
        raise r.fail(f"{where}.variants", f"not build variants (cpu, cu126, rocm6.2.4): {variants}")
    cxx11 = r.get(raw, "cxx11_abi", where, bool)
    provenance = r.provenance(raw, where, ["torch", "platforms", "variants", "cxx11_abi"])
    kinds = None if variants is None else tuple(variants)
    return TorchAbi(torch, tuple(platforms), kinds, cxx11, provenance)


def read_package_builds(data: Dict[str, Any], file: str) -> PackageBuilds:
    sources = Reader(file, {}).strings(data.get("sources"), "sources")
    r = Reader(file, sources)
    numpy = tuple(
        _numpy(r, raw, f"numpy_abi[{i}]")
        for i, raw in enumerate(r.get(data, "numpy_abi", "document", list, optional=True) or [])
    )
    builds = tuple(
        _package(r, raw, f"packages[{i}]")
        for i, raw in enumerate(r.get(data, "packages", "document", list))
    )
    seen: Dict[str, int] = {}
    for i, build in enumerate(builds):
        for name in build.names:
            if name in seen:
                raise r.fail(f"packages[{i}].names", f"{name!r} is also in packages[{seen[name]}]")
            seen[name] = i
    cuda = tuple(
        _cuda_build(r, raw, f"cuda_builds[{i}]")
        for i, raw in enumerate(r.get(data, "cuda_builds", "document", list, optional=True) or [])
    )
    runtime = r.get(data, "cuda_runtime", "document", dict, optional=True)
    if runtime is not None:
        r.provenance(runtime, "cuda_runtime", ["names"])
    pattern = _pattern(r, runtime, "names", "cuda_runtime") if runtime is not None else None
    ranges = tuple(
        _torch_range(r, raw, f"torch_ranges[{i}]")
        for i, raw in enumerate(r.get(data, "torch_ranges", "document", list, optional=True) or [])
    )
    abi = tuple(
        _torch_abi(r, raw, f"torch_abi[{i}]")
        for i, raw in enumerate(r.get(data, "torch_abi", "document", list, optional=True) or [])
    )
    return PackageBuilds(builds, numpy, cuda, pattern, ranges, abi)
