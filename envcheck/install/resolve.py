"""Decide what to install: torch version, variant and matching companions, with reasons.

Pure: Facts + Tables + the user's wish -> ``Planned | NoPlan``. This is the only place that
picks a torch version, a variant and companions; rendering the plan as a pip, uv, conda or
project-file command is a separate step (render, managers/). Every command envcheck prints
(a finding's fix, `envcheck install`, `--run`) comes from here.

The decision: among the releases that satisfy the wish and have a wheel for this Python and
platform, the newest (or, with ``Wish.near``, the one nearest the installed torch: the least
change that fixes the machine); for it, the best variant for this driver and *every* GPU
(of the CUDA builds the driver runs whose build carries kernels for every GPU, the newest of
the driver's own CUDA major that it runs fully, else the newest: cuda.preferred_cuda; the installed
variant first when it fits); CPU without a GPU; the
default wheel on macOS. When nothing satisfies everything, the plan says which constraint
conflicts and the nearest ways out (ways_out.py).
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import replace
from ..compat import has_amd_gpu, has_nvidia_gpu, platform_of
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release, parse_version
from ..tegra import needs_nvidia_wheels
from ..values import Platform, Variant
from .changes import add_changes, ptx_notes
from .companions import add_companions, add_triton, pin_local_labels
from .conda import conda_channel, conda_plan, conda_version
from .draft import Draft
from .guards import CPU_WAY_OUT, Situation, first_stop
from .jetson import plan_for as jetson_plan
from .keep import binding, kept_constraints, narrowed, said
from .no_wheel import python_conflict, unpublished_variant
from .plan import InstallPlan, Package, Planned
from .reasons import Blocker, Unknown, UnknownKernels, has_unknown
from .releases import (
    default_index,
    matching_versions,
    nearest_first,
    platform_unknowns,
    version_in,
)
from .variant import pick_variant
from .ways_out import no_fit
from .wish import Wish, parse_torch_wish


def resolve(
    facts: Facts,
    tables: Tables,
    wish: Wish,
    platform: Union[Platform, str, None] = None,
) -> InstallPlan:
    """The one plan for ``wish`` on this machine (or for ``platform``): a Planned, or a
    NoPlan that says what conflicts and the ways out. In order: the target, the releases
    that match the wish, those with a wheel here, what stops every build, then the first
    release that fits (or the reasons none does).

    With ``Wish.near`` (--keep) the torch planned also meets what the installed packages
    ask of torch (install.keep), where a release that fits here does."""
    spec, wanted = parse_torch_wish(wish.torch)
    kept = kept_constraints(facts, tables) if wish.near else []
    keeping = narrowed(spec, wanted, kept)
    shown = binding(kept, tables)  # the constraints worth naming in a note
    if keeping is not None:
        plan = _resolve(facts, tables, wish, platform, *keeping)
        if plan.ok:
            return replace(plan, notes=(*plan.notes, f"keeps {said(shown)}")) if shown else plan
    plan = _resolve(facts, tables, wish, platform, spec, wanted)
    if keeping is None or not plan.ok:
        return plan
    note = f"no release that fits here meets {said(shown or kept)}: planned without them"
    return replace(plan, notes=(*plan.notes, note))


def _resolve(
    facts: Facts,
    tables: Tables,
    wish: Wish,
    platform: Union[Platform, str, None],
    spec: Optional[SpecifierSet],
    wanted: str,
) -> InstallPlan:
    target = _platform(wish, facts, platform)
    python = wish.python or _python_here(facts)
    plan = Draft(str(target) if target else None, python, wish)
    _interpreter_into(plan, facts, target)
    if target is None:
        plan.conflicts.append("PyTorch publishes no wheels for this platform")
        plan.ways_out.append("use Linux (x86_64, aarch64), Windows x86_64 or macOS arm64")
        return plan.no_plan(Blocker.NO_WHEEL)
    jetson = target.is_linux and target.arch == "aarch64" and needs_nvidia_wheels(facts, tables)
    if wish.may_be_cuda and jetson:
        return jetson_plan(plan, facts, tables, spec, wanted)  # NVIDIA's builds, not PyTorch's
    pyv = parse_version(python) if python else None  # None for a mangled one: unknown
    matching = [r for r in reversed(tables.releases) if matching_versions(r, spec)]
    if not matching:
        plan.conflicts.append(f"no release in the tables matches {wanted}")
        plan.ways_out.append(
            f"releases known: {tables.releases[0].minor} to {tables.newest_release.minor}"
        )
        return plan.no_plan(Blocker.UNKNOWN)
    usable = [r for r in matching if _has_wheel(r, spec, target, pyv)]
    if not usable:
        python_conflict(plan, matching, target, python, wanted, tables, spec)
        return plan.no_plan(Blocker.NO_WHEEL)
    if unpublished_variant(plan, tables, usable, target, pyv, wish, wanted):
        return plan.no_plan(Blocker.NO_WHEEL)  # said before any driver
    near = parse_version(wish.near)
    if near is not None:
        usable = nearest_first(usable, near)
    gpu = has_nvidia_gpu(facts) and not target.is_macos
    hidden = _hidden_gpus(facts, target)
    stop = first_stop(Situation(facts, tables, wish, target, gpu, hidden, usable[0]))
    if stop is not None:
        return stop.into(plan)
    picks, skipped = _picks(facts, tables, wish, target, spec, near, pyv, gpu, usable, plan)
    # A release known to fit comes before one the tables cannot judge; with none known
    # to fit, the first that may fit is planned, and what is not known is said.
    known = [p for p in picks if not has_unknown(p.why)]
    chosen = next(iter(known or picks), None)
    if chosen is None:
        return no_fit(plan, facts, tables, target, pyv, gpu, matching, usable, near)
    candidate = _planned(plan, facts, tables, chosen, picks, skipped, hidden, near)
    if known or wish.asked_variant is not None or not all(_kernels_unknown(p) for p in picks):
        return candidate  # a build the user named is planned as asked, its unknowns said
    return _not_known_to_fit(plan, candidate, chosen)


class Pick(NamedTuple):
    """A release that may be planned: its version, variant and the reasons."""

    release: Release
    version: Version
    variant: Variant
    why: List[str]


def _has_wheel(
    release: Release, spec: Optional[SpecifierSet], target: Platform, pyv: Optional[Version]
) -> bool:
    return (
        str(target) in release.platforms
        and bool(matching_versions(release, spec, target))
        and (pyv is None or release.supports_python(pyv, str(target)))
    )


def _picks(
    facts: Facts,
    tables: Tables,
    wish: Wish,
    target: Platform,
    spec: Optional[SpecifierSet],
    near: Optional[Version],
    pyv: Optional[Version],
    gpu: bool,
    usable: Sequence[Release],
    plan: Draft,
) -> Tuple[List[Pick], List[str]]:
    """The releases tried in order up to the first known to fit, each with its variant;
    those with none go to ``plan.passed_over``. Also the patch versions the conda channel
    left out (of the last release it was asked about)."""
    picks: List[Pick] = []
    skipped_patches: List[str] = []
    for release in usable:
        version = version_in(release, spec, near, target)
        channel = conda_channel(tables, wish, release)
        if channel is not None:
            found, why_not, skipped = conda_version(channel, release, spec, near, pyv)
            if found is None:
                plan.passed_over.append((str(version), why_not))
                continue
            version = found
            skipped_patches = skipped
        variant, why = pick_variant(facts, tables, release, version, wish, target, gpu)
        if variant is None:
            assert isinstance(why, str)
            plan.passed_over.append((str(version), why))
            continue
        # What the tables do not hold about this platform (its Python range, Windows CUDA
        # builds) counts like unknown kernels: a release known to fit is preferred.
        unknowns = platform_unknowns(release, target, pyv, variant)
        reasons = list(why) + [Unknown(u) for u in unknowns]
        picks.append(Pick(release, version, variant, reasons))
        if not has_unknown(reasons):
            break
    return picks, skipped_patches


def _planned(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    pick: Pick,
    picks: Sequence[Pick],
    skipped: Sequence[str],
    hidden: Optional[str],
    near: Optional[Version],
) -> Planned:
    """The plan for the release picked: its packages, the notes and what it changes."""
    release, version, variant, why = pick
    target = Platform.parse(plan.platform or "")
    plan.torch, plan.variant = str(version), variant
    plan.index_base = release.pip_index.get(str(version))
    # A version served from its own index (1.8.2 LTS) is not on the default one.
    plan.default_index = plan.index_base is None and default_index(version, variant, target, tables)
    plan.reasons = [w for w in why if not isinstance(w, Unknown)]
    plan.unverified = [str(w) for w in why if isinstance(w, Unknown)]
    if hidden and variant.is_cuda:
        plan.unverified.append(
            f"{variant} against this container's GPUs and driver: it was started without "
            f"them ({hidden}), so the build is planned as asked, unchecked"
        )
    for other in picks:
        if other.version != version:
            unknown = next(str(w) for w in other.why if isinstance(w, Unknown))
            plan.notes.append(f"passed over torch {other.version}, not known to fit: {unknown}")
    plan.packages = [Package("torch", str(version))]
    add_companions(plan, facts, tables, release, version, plan.wish, variant)
    conda_plan(plan, tables, release, version, variant, target, skipped)
    add_triton(plan, facts, release, variant)
    pin_local_labels(plan, facts, target)
    ptx_notes(plan, facts, tables, release, variant)
    add_changes(plan, facts, tables, release, version, variant)
    _passed_over_note(plan, near)
    return plan.planned()


def _kernels_unknown(pick: Pick) -> bool:
    return any(isinstance(w, UnknownKernels) for w in pick.why)


def _not_known_to_fit(plan: Draft, candidate: Planned, pick: Pick) -> InstallPlan:
    """No candidate envcheck chose is known to carry kernels for the GPUs here (the tables
    lack every one's architecture list): never printed as a fit. The first candidate is a way out,
    said as unverified, with its command and how to prove it."""
    from .render import render

    unknown = next(str(w) for w in pick.why if isinstance(w, UnknownKernels))
    listed = "gfx list" if candidate.variant.is_rocm else "architecture list"
    plan.conflicts.append(f"no build is known to have kernels for the GPUs here: {unknown}")
    plan.unverified = [w for w in plan.unverified if w != unknown]
    plan.ways_out.extend(
        (
            f"torch {candidate.installs} may have them (not verified): "
            f"{render(candidate, 'pip')}; `envcheck smoke` then proves it or not",
            f"envcheck tables update: newer tables may hold its {listed}",
            CPU_WAY_OUT,
        )
    )
    return plan.no_plan(Blocker.UNKNOWN)


def _passed_over_note(plan: Draft, near: Optional[Version]) -> None:
    """One note for the releases tried before the one planned."""
    tried = plan.passed_over
    if not tried:
        return
    which = "nearer" if near is not None else "newer"
    n = len(tried) - 1
    verb, noun = ("does", "release") if n == 1 else ("do", "releases")
    more = f"; neither {verb} {n} more {which} {noun}" if n else ""
    plan.notes.append(f"{which} releases do not fit: torch {tried[0][0]}: {tried[0][1]}{more}")


def _python_here(facts: Facts) -> Optional[str]:
    return ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None


def _hidden_gpus(facts: Facts, target: Platform) -> Optional[str]:
    """Why this machine's NVIDIA GPUs are expected but not visible (a container started
    without them, containers.started_without_gpus), for a plan for this machine's platform;
    None when they are visible, not expected, or the plan is for another platform."""
    from ..containers import started_without_gpus

    if target != platform_of(facts) or has_nvidia_gpu(facts) or has_amd_gpu(facts):
        return None
    return started_without_gpus(facts)


def _interpreter_into(plan: Draft, facts: Facts, target: Optional[Platform]) -> None:
    """The interpreter the commands must name, and whether it is externally managed, for a
    plan that installs into the described interpreter; none for one made for another
    Python or platform, whose interpreter is not here."""
    py = facts.python
    if not py.executable or plan.python != _python_here(facts) or target != platform_of(facts):
        return
    plan.interpreter = py.executable if py.on_path is False or py.externally_managed else None
    plan.externally_managed = py.externally_managed
    if plan.externally_managed:
        plan.notes.append(
            f"{plan.interpreter} is externally managed (PEP 668): pip refuses to install into "
            "it, so the command makes a virtual environment (.venv) first"
        )


def _platform(wish: Wish, facts: Facts, given: Union[Platform, str, None]) -> Optional[Platform]:
    if wish.platform:
        return Platform.parse(wish.platform)
    if isinstance(given, Platform):
        return given
    if isinstance(given, str):
        return Platform.parse(given)
    return platform_of(facts)
