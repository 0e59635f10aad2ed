"""The variant of one release for this machine: the one asked for, judged; else macOS's
default wheel, the ROCm build for an AMD GPU, the CPU build without a GPU, or the CUDA
build this driver runs with kernels for every GPU (cuda.choose_cuda)."""

from __future__ import annotations

from typing import List, Sequence

from packaging.version import Version

from ..compat import gpu_capabilities, has_amd_gpu, sm_name, torch_variant
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release
from ..values import Platform, Variant
from .conda import conda_channel, conda_offered
from .cuda import (
    asked_cuda,
    choose_cuda,
    driver_unknown,
    how_driver_runs,
    kernels,
)
from .reasons import Blocker, Unknown, Why, blocker_of
from .releases import cuda_names, variants_of
from .rocm import Choice, rocm_kernels, rocm_variant
from .wish import Wish


def pick_variant(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wish: Wish,
    platform: Platform,
    gpu: bool,
) -> Choice:
    """(variant, reasons) or (None, why not). With conda (up to the channel's last release)
    the variants offered are the conda channel's for this version and platform."""
    offered = variants_of(release, platform)
    where = ""
    channel = conda_channel(tables, wish, release)
    if channel is not None:
        on_channel, why_not = conda_offered(channel, version, platform)
        if on_channel is None:
            return None, why_not
        offered = on_channel
        where = f" on the {channel.name} conda channel"
    variant, why = _pick_offered(facts, tables, release, version, wish, platform, gpu, offered)
    if variant is not None and where and variant not in offered:
        published = ", ".join(map(str, offered))
        return None, Why(
            f"no {variant} build{where} for {platform} (published there: {published})",
            Blocker.NO_WHEEL,
        )
    if variant is None and where and isinstance(why, str) and why.startswith("no "):
        why = Why(
            why.replace(
                f" for {platform} (published:", f"{where} for {platform} (published there:"
            ),
            blocker_of(why),
        )
    return variant, why


def _pick_offered(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wish: Wish,
    platform: Platform,
    gpu: bool,
    offered: Sequence[Variant],
) -> Choice:
    """The variant among ``offered``: the one asked for, else the one this machine needs."""
    wanted = wish.asked_variant
    if wanted is not None:
        return _asked(facts, tables, release, version, wanted, platform, gpu, offered)
    if platform.is_macos:
        mps = "with MPS on Apple silicon" if platform.arch == "arm64" else "CPU only"
        return Variant("cpu"), [f"the default macOS wheel ({mps})"]
    if not gpu and has_amd_gpu(facts):
        return rocm_variant(facts, release, version, platform)
    if not gpu:
        return Variant("cpu"), ["no NVIDIA GPU here, so the CPU build"]
    if cuda_names(release, platform) is None:  # not known, which is not "none fits"
        return None, Unknown(f"CUDA builds of torch {release.minor} for {platform}: not known")
    return _auto_cuda(facts, tables, release, version, wish, platform, offered)


def _asked(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wanted: Variant,
    platform: Platform,
    gpu: bool,
    offered: Sequence[Variant],
) -> Choice:
    """The variant named by --variant: published here, and for a GPU build its kernels."""
    if wanted not in offered:
        published = ", ".join(map(str, offered))
        return None, Why(
            f"no {wanted} build for {platform} (published: {published})", Blocker.NO_WHEEL
        )
    if wanted.is_cuda and gpu:
        return asked_cuda(facts, tables, release, version, wanted, platform)
    if wanted.is_rocm:
        rocm = rocm_kernels(facts, release, version, wanted)
        if isinstance(rocm, str):
            return None, Why(f"{wanted}: {rocm}", Blocker.KERNELS)
        return wanted, [f"{wanted} as asked", *rocm]
    return wanted, [f"{wanted} as asked"]


def _auto_cuda(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wish: Wish,
    platform: Platform,
    offered: Sequence[Variant],
) -> Choice:
    """The CUDA build for an NVIDIA GPU: the installed one first with --keep."""
    prefer = torch_variant(facts) if wish.near else None
    cuda = [v for v in offered if v.is_cuda]
    variant, reasons, fits, rule = choose_cuda(
        facts, tables, release, platform, prefer, version, cuda
    )
    skipped = [f"skipped {r}" for r in reasons]
    if variant is None:
        kinds = {blocker_of(r) for r in reasons}
        blocker = (
            Blocker.DRIVER
            if kinds == {Blocker.DRIVER}
            else Blocker.KERNELS
            if Blocker.KERNELS in kinds
            else Blocker.NO_WHEEL
        )
        return None, Why("; ".join(reasons) or "no CUDA variant fits", blocker)
    unknown = kernels(facts, tables, release, version, variant, platform)
    if unknown:  # no variant of this release is known to fit: this one may
        assert not isinstance(unknown, str)
        lead = f"{variant}: no build of torch {version} is known to have kernels for this GPU"
        return variant, [lead, *unknown, *skipped]
    how, verdict = how_driver_runs(facts, tables, variant, version, platform)
    caps = gpu_capabilities(facts)
    gpus = ", ".join(sorted({f"{n} ({sm_name(c)})" for n, c in caps})) or "the GPUs"
    kept = " (the installed build)" if prefer is not None and variant == prefer else ""
    inferred = (
        " (its architecture list inferred from PyTorch's build scripts)"
        if release.arch_list_inferred(variant, platform.machine, platform.is_windows)
        else ""
    )
    reasons_: List[str] = [
        f"{how}; {gpus} covered by {variant}{kept}{inferred} -> torch {version}+{variant}",
        *driver_unknown(verdict),
    ]
    others = [v for v in fits if v != variant]
    if others:
        reasons_.append(f"{', '.join(map(str, others))} would fit too; {rule}")
    return variant, reasons_ + skipped
