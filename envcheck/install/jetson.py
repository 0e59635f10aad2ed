"""NVIDIA Jetson boards, as the resolver needs to know them.

On JetPack 4-6 a Jetson's iGPU runs the CUDA that JetPack (L4T) ships, and PyTorch's aarch64
CUDA wheels are SBSA builds (Grace: GH200, GB200) made for another toolkit
(bitsandbytes-foundation/bitsandbytes#1941, rapidsai/cucim#527): its torch comes from NVIDIA,
per JetPack release (jetpack.json): a pip index for JetPack 6.1 and newer, one wheel to name
for older ones. From JetPack 7 (Thor, and Orin on 7.2) the CUDA 13 Arm toolkit is unified,
so PyTorch's own aarch64 wheels are judged by their architecture lists like any other build.

Whether a machine is a Jetson, and which JetPack it runs, is asked of envcheck.tegra (the
driver verdict needs it too); this module makes the plan from it."""

from __future__ import annotations

from typing import Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..facts import Facts
from ..tables import Tables
from ..tables.jetpack_records import JetPack
from ..tegra import JETPACK_WHEELS, jetpack, jetson_gpus, needs_nvidia_wheels
from .draft import Draft
from .guards import CPU_WAY_OUT
from .plan import InstallPlan, OtherIndex, Package
from .reasons import Blocker


def no_command(board: str) -> str:
    """Why no CUDA install command is given on a Jetson whose JetPack is not known."""
    return (
        f"NVIDIA Jetson ({board}): PyTorch's aarch64 CUDA wheels are SBSA "
        "builds, not verified on Jetson; envcheck knows no install command for this board"
    )


def plan_for(
    plan: Draft, facts: Facts, tables: Tables, spec: Optional[SpecifierSet], wanted: str
) -> InstallPlan:
    """The plan on a Jetson that runs JetPack's CUDA: NVIDIA's build from its index for this
    JetPack, or no plan and where NVIDIA's wheels for it are."""
    found = needs_nvidia_wheels(facts, tables) or "a Jetson"
    release = jetpack(facts, tables)
    if release is None:
        plan.conflicts.append(no_command(found) + ": which JetPack it runs is not known")
        plan.ways_out.extend(
            (
                "read its L4T release on the board (cat /etc/nv_tegra_release), then ask "
                "again there, or plan with ENVCHECK_FACT_SYSTEM_L4T=36.4.3",
                f"NVIDIA's torch wheels for your JetPack release: {JETPACK_WHEELS}",
                CPU_WAY_OUT,
            )
        )
        return plan.no_plan(Blocker.UNKNOWN)
    where = f"JetPack {release.jetpack} (L4T {facts.system.l4t})"
    if release.index is None or release.variant is None:
        return _no_index(plan, facts, tables, release, where)
    refused = _refusal(plan, release, where, spec, wanted)
    if refused is not None:
        conflict, way_out = refused
        plan.conflicts.append(conflict)
        plan.ways_out.extend((way_out, CPU_WAY_OUT))
        return plan.no_plan(Blocker.NO_WHEEL)
    chosen = next(t for t in release.torch if _wanted(spec, t.torch))
    plan.torch, plan.variant = chosen.torch, release.variant
    plan.other_index = OtherIndex(release.index, f"NVIDIA's JetPack {release.jetpack} build")
    plan.packages = [Package("torch", chosen.torch)]
    names = plan.wish.companions
    if names is None:
        names = tuple(p.name for p in facts.torch.companions)
    if "torchvision" in names and chosen.torchvision:
        plan.packages.append(Package("torchvision", chosen.torchvision))
    if "torchaudio" in names:
        plan.notes.append(f"torchaudio: NVIDIA's index for {where} has no known build; left out")
    plan.reasons.append(
        f"NVIDIA Jetson ({found}) on {where}: its GPU runs JetPack's CUDA {release.cuda}, for "
        "which NVIDIA builds torch; PyTorch's aarch64 wheels are SBSA builds, not for it"
    )
    plan.unverified.append(
        f"torch {chosen.torch} on NVIDIA's index for {where}: seen there in {chosen.seen} "
        f"({', '.join(chosen.sources)}); envcheck does not read the live index"
    )
    return plan.planned()


def _wanted(spec: Optional[SpecifierSet], version: str) -> bool:
    return spec is None or spec.contains(Version(version), prereleases=True)


def _refusal(
    plan: Draft, release: JetPack, where: str, spec: Optional[SpecifierSet], wanted: str
) -> Optional[Tuple[str, str]]:
    """Why NVIDIA's index for this JetPack has nothing for the wish (the conflict and the way
    out): another Python, another CUDA build asked for, no version that matches."""
    if plan.python != release.python:
        return (
            f"NVIDIA's torch wheels for {where} are built for Python {release.python} only; "
            f"this is Python {plan.python or 'unknown'}",
            f"use JetPack's Python {release.python} (python{release.python} -m venv .venv), "
            "then ask again",
        )
    asked = plan.wish.asked_variant
    if asked is not None and asked != release.variant:
        return (
            f"{where} runs CUDA {release.cuda}: NVIDIA's index for it serves "
            f"{release.variant} builds, not {asked}",
            f"ask for --variant {release.variant} or auto",
        )
    if not any(_wanted(spec, t.torch) for t in release.torch):
        known = ", ".join(t.torch for t in release.torch) or "none"
        return (
            f"NVIDIA's index for {where} is known to hold torch {known}; not {wanted}",
            f"NVIDIA's torch wheels for your JetPack release: {JETPACK_WHEELS}",
        )
    return None


def _no_index(
    plan: Draft, facts: Facts, tables: Tables, release: JetPack, where: str
) -> InstallPlan:
    """An older JetPack: NVIDIA's newest wheel for it, or a newer JetPack with an index."""
    plan.conflicts.append(f"NVIDIA publishes no pip index for {where}")
    wheel = release.wheel
    if wheel is not None and wheel.where.endswith(".whl"):
        plan.ways_out.append(
            f"NVIDIA's newest wheel for it, torch {wheel.torch} for Python {wheel.python}: "
            f"pip3 install --no-cache {wheel.where}"
        )
    elif wheel is not None:
        which = f"torch {wheel.torch}" if wheel.torch else "its wheels"
        plan.ways_out.append(f"NVIDIA's {which} for Python {wheel.python}: {wheel.where}")
    gpus = [g.compute_capability for g in jetson_gpus(facts, tables)]
    newer = [j for j in tables.jetpacks if j.index and any(g in j.gpus for g in gpus)]
    if newer and newer[-1].l4t_min > release.l4t_min:
        plan.ways_out.append(
            f"upgrade to JetPack {newer[-1].jetpack} (L4T {newer[-1].l4t_min}), for which "
            "NVIDIA keeps a pip index, then ask again"
        )
    plan.ways_out.append(CPU_WAY_OUT)
    return plan.no_plan(Blocker.NO_WHEEL)
