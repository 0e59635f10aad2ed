"""installers.json (uv's torch backends) and conda_pytorch.json (the pytorch conda channel)."""

from __future__ import annotations

import re
from typing import Any, Dict, FrozenSet, List, Optional

from packaging.version import Version

from ..values import Variant
from .model import (
    PLATFORMS,
    CondaBuild,
    CondaChannel,
    CondaRelease,
)
from .reader import MINOR, Reader, TableError, variant
from .uv_backends import AUTO, UvBackends

# --------------------------------------------------------------------------- installers


def read_installers(data: Dict[str, Any], file: str) -> UvBackends:
    r = Reader(file, {})
    raw = r.get(data, "uv_torch_backends", "document", dict)
    r.provenance(raw, "uv_torch_backends", ["values", "scope"])
    values = r.get(raw, "values", "uv_torch_backends", list)
    parsed: List[Variant] = []
    for v in values:
        backend = Variant.maybe(v) if isinstance(v, str) else None
        if backend is None and v != AUTO:
            raise r.fail("uv_torch_backends.values", f"{v!r} is not a backend name")
        if backend is not None:
            parsed.append(backend)
    return UvBackends(tuple(parsed), auto=AUTO in values)


# --------------------------------------------------------------------------- conda channel

_CONDA_PACKAGE = re.compile(r"^(cpuonly|(cudatoolkit|pytorch-cuda)=\d+\.\d+)$")
_CHANNEL = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def _conda_build(r: Reader, raw: Any, where: str, covers: FrozenSet[str]) -> CondaBuild:
    platforms = r.get(raw, "platforms", where, list)
    if not platforms:
        raise r.fail(f"{where}.platforms", "a build needs at least one platform")
    for p in platforms:
        if not isinstance(p, str) or p not in covers:
            raise r.fail(f"{where}.platforms", f"{p!r} is not one of the record's covers")
    text = r.get(raw, "variant", where, str)
    if text != "cpu" and not re.match(r"^cu\d{3,}$", text):
        raise r.fail(f"{where}.variant", f"{text!r} is not cpu or cuXYZ")
    build = variant(r, text, f"{where}.variant")
    if "package" not in raw:
        raise r.fail(where, "missing field 'package' (null: none)")
    package = raw["package"]
    if package is not None and (not isinstance(package, str) or not _CONDA_PACKAGE.match(package)):
        raise r.fail(
            f"{where}.package", f"{package!r} is not cpuonly, cudatoolkit=X.Y or pytorch-cuda=X.Y"
        )
    if package is not None and package != "cpuonly":
        cuda = package.split("=", 1)[1]
        if build.cuda != Version(cuda):
            raise r.fail(f"{where}.package", f"{package!r} does not select {text}")
    elif not build.is_cpu:
        raise r.fail(f"{where}.variant", f"{text!r} with package {package!r}")
    channels = r.get(raw, "channels", where, list)
    if not channels:
        raise r.fail(f"{where}.channels", "a command needs at least one channel")
    for c in channels:
        if not isinstance(c, str) or not _CHANNEL.match(c):
            raise r.fail(f"{where}.channels", f"{c!r} is not a channel name")
    return CondaBuild(tuple(platforms), build, package, tuple(channels))


def read_conda_pytorch(data: Dict[str, Any], file: str) -> CondaChannel:
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = Reader(file, sources)
    r.strings(sources, "sources")
    channel = r.get(data, "channel", "document", dict)
    name = r.get(channel, "name", "channel", str)
    last = r.get(channel, "last", "channel", str)
    if not MINOR.match(last):
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


def _opt_text_version(r: Reader, raw: Any, key: str, where: str) -> Optional[str]:
    value: Optional[str] = raw.get(key)
    r.opt_version(value, f"{where}.{key}")
    return value
