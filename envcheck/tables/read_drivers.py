"""cuda_driver.json: the CUDA toolkits and the drivers they need, minor-version compatibility,
the CUDA update each build bundles, forward compatibility and each GPU's first driver."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from .model import (
    PLATFORMS,
    BundledCuda,
    Caveat,
    CompatBranch,
    CompatPackage,
    FirstDriver,
    ForwardCompat,
    MinorCompat,
    Toolkit,
    ToolkitUpdate,
)
from .reader import MINOR, Reader, TableError, variant

# --------------------------------------------------------------------------- CUDA and drivers


def read_cuda_driver(
    data: Dict[str, Any], file: str
) -> Tuple[Tuple[Toolkit, ...], Dict[int, MinorCompat], Tuple[Caveat, ...], Dict[int, str]]:
    r = Reader(file, {})
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
    compat: Dict[int, MinorCompat] = {}
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


def _updates(r: Reader, raw: Any, where: str, cuda: Version) -> Tuple[ToolkitUpdate, ...]:
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


def read_bundled_cuda(data: Dict[str, Any], file: str) -> Tuple[BundledCuda, ...]:
    """cuda_driver.json's torch_bundled_cuda: the CUDA update a torch build bundles."""
    r = Reader(file, {})
    section = r.get(data, "torch_bundled_cuda", "document", dict, optional=True)
    if section is None:
        return ()
    out = []
    for i, raw in enumerate(r.get(section, "records", "torch_bundled_cuda", list)):
        where = f"torch_bundled_cuda.records[{i}]"
        torch = r.get(raw, "torch", where, str)
        if not MINOR.match(torch):
            raise r.fail(f"{where}.torch", f"{torch!r} is not MAJOR.MINOR")
        build = variant(r, r.get(raw, "variant", where, str), f"{where}.variant")
        platforms = r.get(raw, "platforms", where, list)
        for p in platforms:
            if p not in PLATFORMS:
                raise r.fail(f"{where}.platforms", f"{p!r} is not one of {', '.join(PLATFORMS)}")
        update = r.version(r.get(raw, "update", where, str), f"{where}.update")
        out.append(
            BundledCuda(
                torch=torch,
                variant=build,
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


def read_forward_compat(data: Dict[str, Any], file: str) -> Optional[ForwardCompat]:
    """cuda_driver.json's forward_compatibility: cuda-compat packages and their branches."""
    r = Reader(file, {})
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


def read_first_drivers(data: Dict[str, Any], file: str) -> Tuple[FirstDriver, ...]:
    """cuda_driver.json's gpu_first_driver: the first driver per compute capability."""
    r = Reader(file, {})
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
