"""Decide what to install: torch version, variant and matching companions, with reasons.

Pure: Facts + Tables + the user's wish -> InstallPlan. Rendering the plan as a
pip, uv, conda or project-file command is a separate step (render.py).

The decision: the newest torch that satisfies the wish and has a wheel for this
Python and platform; for it, the best variant for this driver and *every* GPU
(the newest CUDA the driver runs, by minor-version compatibility, whose build
still carries kernels for every GPU); CPU without an NVIDIA GPU; the default
wheel on macOS. When nothing satisfies everything, the plan says which
constraint conflicts and the nearest ways out.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..compat import (
    INDEX_URL,
    arch_coverage,
    best_cuda_variant,
    cuda_of_variant,
    driver_needed,
    driver_verdict,
    gpu_capabilities,
    has_amd_gpu,
    has_nvidia_gpu,
    sm_name,
    torch_variant,
    torch_version,
    uses_default_index,
)
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release

COMPANIONS = ("torchvision", "torchaudio")


class WishError(ValueError):
    """A --torch, --variant, --python or --platform value that cannot be understood."""


@dataclass
class Wish:
    torch: str = "latest"  # latest, 2.5, 2.5.1, or a specifier like >=2.4,<2.7
    variant: str = "auto"  # auto, cpu, cuXYZ, rocmX.Y, xpu
    companions: Optional[List[str]] = None  # None: those installed now
    python: Optional[str] = None  # X.Y; None: this machine's
    platform: Optional[str] = None  # None: this machine's


@dataclass
class Package:
    name: str
    version: str


@dataclass
class InstallPlan:
    ok: bool
    platform: Optional[str]
    python: Optional[str]
    torch: Optional[str] = None
    variant: Optional[str] = None
    default_index: bool = False  # the default index (PyPI) serves this variant
    packages: List[Package] = field(default_factory=list)
    reasons: List[str] = field(default_factory=list)  # why this choice, one or two lines
    notes: List[str] = field(default_factory=list)  # companions left out, PTX-only GPUs, ...
    conflicts: List[str] = field(default_factory=list)  # when ok is False: what conflicts
    ways_out: List[str] = field(default_factory=list)
    changes: List[str] = field(default_factory=list)  # what changes against the installed torch

    @property
    def index_url(self) -> Optional[str]:
        return None if self.default_index or not self.variant else INDEX_URL + self.variant

    def to_dict(self) -> Dict[str, Any]:
        out = asdict(self)
        out["index_url"] = self.index_url
        return out


_VARIANT = re.compile(r"^(auto|cpu|cu\d{2,3}|rocm\d+(?:\.\d+)*|xpu)$")
_PY = re.compile(r"^\d+\.\d+$")


def parse_torch_wish(text: str) -> Tuple[Optional[SpecifierSet], str]:
    """'latest' -> (None, ...), '2.5' -> ==2.5.*, '2.5.1' -> ==2.5.1, or a specifier."""
    text = text.strip()
    if text in ("", "latest"):
        return None, "the newest release"
    if re.fullmatch(r"\d+\.\d+", text):
        return SpecifierSet(f"=={text}.*"), f"torch {text}"
    if re.fullmatch(r"\d+\.\d+\.\d+", text):
        return SpecifierSet(f"=={text}"), f"torch {text}"
    try:
        return SpecifierSet(text), f"torch {text}"
    except InvalidSpecifier:
        raise WishError(
            f"--torch {text!r}: use latest, 2.5, 2.5.1 or a specifier like '>=2.4,<2.7'"
        ) from None


def check_wish(wish: Wish, platforms) -> None:
    parse_torch_wish(wish.torch)
    if not _VARIANT.match(wish.variant):
        raise WishError(f"--variant {wish.variant!r}: use auto, cpu, cuXYZ (cu128), rocmX.Y or xpu")
    if wish.python is not None and not _PY.match(wish.python):
        raise WishError(f"--python {wish.python!r}: give a Python version like 3.12")
    if wish.platform is not None and wish.platform not in platforms:
        raise WishError(f"--platform {wish.platform!r}: one of {', '.join(platforms)}")


def _variants_of(release: Release, platform: str) -> List[str]:
    """The variants PyTorch published for a release on a platform."""
    if platform.startswith("macos"):
        return ["cpu"]
    cuda = release.cuda_aarch64_variants if platform == "linux-aarch64" else release.cuda_variants
    out = ["cpu", *list(cuda or [])]
    if platform == "linux-x86_64":
        out += list(release.rocm_variants or [])
    if release.xpu and platform in ("linux-x86_64", "windows-x86_64"):
        out.append("xpu")
    return out


def resolve(facts: Facts, tables: Tables, wish: Wish, platform: Optional[str]) -> InstallPlan:
    spec, wanted = parse_torch_wish(wish.torch)
    python = wish.python or (
        ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None
    )
    plan = InstallPlan(ok=False, platform=platform, python=python)
    if platform is None:
        plan.conflicts.append("PyTorch publishes no wheels for this platform")
        plan.ways_out.append("use Linux (x86_64, aarch64), Windows x86_64 or macOS arm64")
        return plan
    pyv = Version(python) if python else None

    matching = [r for r in reversed(tables.releases) if _versions(r, spec)]
    if not matching:
        plan.conflicts.append(f"no release in the tables matches {wanted}")
        plan.ways_out.append(
            f"releases known: {tables.releases[0].minor} to {tables.newest_release.minor}"
        )
        return plan
    usable = [
        r for r in matching if platform in r.platforms and (pyv is None or r.supports_python(pyv))
    ]
    if not usable:
        _python_conflict(plan, matching, platform, python, wanted, tables)
        return plan

    gpu = has_nvidia_gpu(facts) and not platform.startswith("macos")
    tried: List[str] = []
    for release in usable:
        version = _versions(release, spec)[-1]
        variant, why = _pick_variant(facts, tables, release, version, wish.variant, platform, gpu)
        if variant is None:
            tried.append(f"torch {version}: {why}")
            continue
        plan.ok = True
        plan.torch, plan.variant = str(version), variant
        plan.default_index = uses_default_index(version, variant, platform, tables)
        plan.reasons = why if isinstance(why, list) else [why]
        plan.packages = [Package("torch", str(version))]
        _companions(plan, facts, release, version, wish)
        _ptx_notes(plan, facts, tables, release, variant)
        _changes(plan, facts, tables, release, version, variant)
        if tried:
            more = f"; {len(tried) - 1} more newer release(s) neither" if len(tried) > 1 else ""
            plan.notes.append(f"newer releases do not fit: {tried[0]}{more}")
        return plan
    plan.conflicts.extend(tried)
    newest = usable[0]
    needed = driver_needed(facts, tables, newest.newest)
    if needed:
        plan.ways_out.append(
            f"upgrade the NVIDIA driver to {needed[1]} or newer ({needed[0]} of torch {newest.newest})"
        )
    if wish.variant not in ("auto", "cpu"):
        plan.ways_out.append("let envcheck choose the variant (--variant auto)")
    plan.ways_out.append("use the CPU build (--variant cpu)")
    return plan


def _versions(release: Release, spec: Optional[SpecifierSet]) -> List[Version]:
    if spec is None:
        return sorted(release.versions)
    return sorted(v for v in release.versions if spec.contains(v, prereleases=True))


def _python_conflict(plan, matching, platform, python, wanted, tables) -> None:
    on_platform = [r for r in matching if platform in r.platforms]
    if not on_platform:
        plan.conflicts.append(f"{wanted} has no wheels for {platform}")
        last = next((r for r in reversed(tables.releases) if platform in r.platforms), None)
        if last:
            plan.ways_out.append(f"torch {last.newest} is the newest with {platform} wheels")
        return
    ranges = sorted({f"{r.python_min}-{r.python_max}" for r in on_platform})
    plan.conflicts.append(
        f"{wanted} has no wheels for Python {python} (it supports {', '.join(ranges)})"
    )
    newest = on_platform[0]
    plan.ways_out.append(
        f"use Python {newest.python_min}-{newest.python_max} for torch {newest.newest}"
    )
    pyv = Version(python)
    other = next(
        (
            r
            for r in reversed(tables.releases)
            if platform in r.platforms and r.supports_python(pyv)
        ),
        None,
    )
    if other:
        plan.ways_out.append(f"or torch {other.newest}, the newest for Python {python}")


def _pick_variant(facts, tables, release, version, wanted, platform, gpu):
    """(variant, reasons) or (None, why not)."""
    offered = _variants_of(release, platform)
    if wanted != "auto":
        if wanted not in offered:
            return None, f"no {wanted} build for {platform} (published: {', '.join(offered)})"
        if wanted.startswith("cu") and gpu:
            verdict = driver_verdict(
                tables,
                cuda_of_variant(wanted),
                facts.nvidia.driver_version,
                facts.system.os,
                facts.nvidia.cuda_driver_version,
            )
            if verdict.level == "too_old":
                return None, f"{wanted}: {verdict.basis}"
        return wanted, [f"{wanted} as asked"]
    if platform.startswith("macos"):
        mps = "with MPS on Apple silicon" if platform == "macos-arm64" else "CPU only"
        return "cpu", [f"the default macOS wheel ({mps})"]
    if not gpu and has_amd_gpu(facts):
        return _rocm_variant(facts, release, version, platform)
    if not gpu:
        return "cpu", ["no NVIDIA GPU here: the CPU build"]
    variant, reasons = best_cuda_variant(facts, tables, version)
    if variant is None:
        return None, "; ".join(reasons) or "no CUDA variant fits"
    cuda = cuda_of_variant(variant)
    verdict = driver_verdict(
        tables, cuda, facts.nvidia.driver_version, facts.system.os, facts.nvidia.cuda_driver_version
    )
    how = {
        "full": f"driver {facts.nvidia.driver_version or ''} runs CUDA {cuda}".replace("  ", " "),
        "minor": f"driver {facts.nvidia.driver_version} runs CUDA {cuda.major}.x through minor-version compatibility",
        "unknown": "the driver version is unknown",
    }.get(verdict.level, verdict.basis)
    caps = gpu_capabilities(facts)
    gpus = ", ".join(sorted({f"{n} ({sm_name(c)})" for n, c in caps})) or "the GPUs"
    return variant, [f"{how}; {gpus} covered by {variant} -> torch {version}+{variant}"] + [
        f"skipped {r}" for r in reasons
    ]


def _rocm_variant(facts, release, version, platform):
    """The newest ROCm build for an AMD GPU (Linux x86_64 only)."""
    gfx = ", ".join(sorted({g.gfx for g in facts.amd.gpus if g.gfx})) or "an AMD GPU"
    if platform != "linux-x86_64":
        return None, f"ROCm builds exist for linux-x86_64 only ({gfx} on {platform})"
    if not release.rocm_variants:
        known = "not known" if release.rocm_variants is None else "none"
        return None, f"ROCm builds of {release.minor}: {known}"
    variant = max(release.rocm_variants, key=lambda v: Version(v[4:]))
    return variant, [
        f"AMD GPU ({gfx}) -> {variant}, the newest ROCm build of torch {version}",
        "the tables do not list which gfx targets ROCm builds carry: check that yours is supported",
    ]


def _companions(
    plan: InstallPlan, facts: Facts, release: Release, version: Version, wish: Wish
) -> None:
    names = wish.companions
    if names is None:
        names = [p.name for p in facts.torch.companions if p.name in COMPANIONS]
    for name in names:
        if name not in COMPANIONS:
            plan.notes.append(f"{name}: not a torch companion envcheck pins; install it separately")
            continue
        pin = release.companion(name, version)
        if pin:
            plan.packages.append(Package(name, pin))
        else:
            also = release.compatible.get(name)
            extra = f" ({name} {also} works with it)" if also else ""
            plan.notes.append(f"{name} has no release for torch {version}: left out{extra}")


def _ptx_notes(plan, facts, tables, release, variant) -> None:
    arches = release.arch_list(variant, facts.system.machine.lower())
    if not arches:
        return
    for name, cc in sorted(set(gpu_capabilities(facts))):
        if arch_coverage(tables, arches, cc).level == "ptx":
            plan.notes.append(f"{name} ({sm_name(cc)}) is covered only by PTX: slow first start")


def _changes(plan, facts, tables, release, version, variant) -> None:
    """What an upgrade (or downgrade) changes for this machine (read before you upgrade)."""
    current = torch_version(facts)
    if current is None:
        return
    if Version(current.base_version) == version and torch_variant(facts) == variant:
        plan.notes.append(f"torch {version} ({variant}) is already installed")
        return
    old = tables.release(current)
    plan.changes.append(f"torch {current} -> {version}+{variant}")
    if old is None:
        return
    if release.python_min > old.python_min:
        plan.changes.append(f"Python floor raised: {old.python_min} -> {release.python_min}")
    old_variant = torch_variant(facts)
    if old_variant and old_variant not in _variants_of(release, plan.platform or ""):
        plan.changes.append(f"{old_variant} is no longer published; {variant} replaces it")
    for name, cc in sorted(set(gpu_capabilities(facts))):
        old_list = old.arch_list(old_variant or "", facts.system.machine.lower())
        new_list = release.arch_list(variant, facts.system.machine.lower())
        if (
            old_list
            and new_list
            and (
                arch_coverage(tables, old_list, cc).level != "none"
                and arch_coverage(tables, new_list, cc).level == "none"
            )
        ):
            plan.changes.append(f"{name} ({sm_name(cc)}) loses its kernels")
    for p in facts.torch.companions:
        if p.name in COMPANIONS and not release.companion(p.name, version):
            plan.changes.append(f"{p.name} has no release for torch {version}")
    old_cuda, new_cuda = cuda_of_variant(old_variant or ""), cuda_of_variant(variant)
    if old_cuda and new_cuda and new_cuda > old_cuda:
        compat = tables.minor_compat.get(new_cuda.major)
        floor = (
            compat.linux
            if compat and facts.system.os != "Windows"
            else (compat.windows if compat else None)
        )
        if floor and new_cuda.major > old_cuda.major:
            plan.changes.append(
                f"driver minimum raised: CUDA {new_cuda.major}.x needs {floor} or newer"
            )


def parse_python(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    try:
        v = Version(text)
    except InvalidVersion:
        raise WishError(f"--python {text!r}: give a Python version like 3.12") from None
    return f"{v.major}.{v.minor}"
