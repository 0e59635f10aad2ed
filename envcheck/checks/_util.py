"""Small questions several checks ask of Facts, and the one way they explain an install fix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from packaging.version import Version

# Re-exported for the checks.
from .._record import record
from ..compat import has_amd_gpu as has_amd_gpu
from ..compat import has_nvidia_gpu as has_nvidia_gpu
from ..compat import platform_of as platform_of
from ..compat import torch_variant as torch_variant
from ..compat import torch_version as torch_version
from ..facts import Facts
from ..tables import Tables
from ..tables.versions import parse_version

if TYPE_CHECKING:
    from ..install import InstallPlan


class PlanOnce:
    """The report's one install plan, resolved by ``resolve`` on first use and then kept.

    Resolving imports the resolver and reads the release tables: on a machine where nothing
    needs installing no check asks for the plan, and the static check pays for neither."""

    def __init__(self, resolve: Callable[[], InstallPlan]) -> None:
        self._resolve: Optional[Callable[[], InstallPlan]] = resolve
        self._plan: Optional[InstallPlan] = None

    def __call__(self) -> InstallPlan:
        if self._plan is None:
            assert self._resolve is not None
            self._plan, self._resolve = self._resolve(), None
        return self._plan


@record(frozen=True)
class Planned:
    """The report's one install plan, as the checks see it (``plan``: resolved on first use).

    ``installs``: whether the report gives it as its install command. The core resolves
    the plan before the checks and knows only after them whether a finding it fixes is
    there; when none is (the installed torch fits, every such finding was ignored), it runs
    the checks again with False: what must match torch (TK001's toolkit) is judged against
    the torch that stays, and only then may a fix name another build as an alternative."""

    once: PlanOnce
    installs: bool = True

    @property
    def plan(self) -> InstallPlan:
        return self.once()


def report_plan(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> Planned:
    """The report's install plan: the core's (resolved once, with the project's torch
    specifier and the manager), or for a check run on its own the plan that keeps the
    installed torch where it fits (``install.installed_wish``)."""
    if planned is not None:
        return planned

    def resolve_installed() -> InstallPlan:
        from ..install import installed_wish, resolve

        return resolve(facts, tables, installed_wish(facts))

    return Planned(PlanOnce(resolve_installed))


def replaces_torch(facts: Facts, planned: Planned) -> bool:
    """Whether following the report leaves another torch here than the installed one (another
    version or another build): then what must match torch (a toolkit) must match the plan's."""
    plan = planned.plan
    if not planned.installs or not plan.ok or not plan.torch or plan.variant is None:
        return False
    version = torch_version(facts)
    if not facts.torch.installed or version is None:
        return True
    return (
        Version(plan.torch) != Version(version.base_version) or torch_variant(facts) != plan.variant
    )


def driver_text(facts: Facts) -> str:
    nv = facts.nvidia
    if nv.driver_version:
        cuda = f", supports CUDA {nv.cuda_driver_version}" if nv.cuda_driver_version else ""
        return f"driver {nv.driver_version} (from {nv.driver_version_source}){cuda}"
    if nv.cuda_driver_version:
        return f"driver supports CUDA {nv.cuda_driver_version}"
    return "driver version unknown"


def gpu_list(facts: Facts) -> str:
    names = [g.name or f"GPU {g.index}" for g in facts.nvidia.gpus]
    if not names:
        return "no GPU listed"
    counts = {n: names.count(n) for n in names}
    return ", ".join(f"{c}x {n}" if c > 1 else n for n, c in counts.items())


def what_fits(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> str:
    """The report's plan for this machine, in a sentence: what fits instead of the
    installed torch, or why nothing of its version does and the nearest way out.

    A check explains; it never builds a command. The command under the finding comes
    from the same plan, attached once by the core (``planned``: the core's, resolved once
    with the project's torch specifier; a check run on its own gets ``report_plan``'s).
    """
    from ..install import driver_upgrade, parse_torch_wish

    version = torch_version(facts)
    if not facts.system.os or not facts.system.machine:
        return _platform_unknown(facts, tables)
    plan = report_plan(facts, tables, planned).plan
    if not plan.ok:
        from ..install import Blocker

        # what the tables or the facts cannot tell (a container's hidden GPUs, a Jetson) is
        # not "nothing fits"
        lead = "No build is known to fit" if plan.blocker == Blocker.UNKNOWN else "Nothing fits"
        return f"{lead}: " + "; ".join(plan.conflicts + plan.ways_out) + "."
    picked = f"torch {plan.torch} ({plan.variant})"
    unknown = f" Not verified: {'; '.join(plan.unverified)}." if plan.unverified else ""
    spec, _ = parse_torch_wish(plan.wish.torch)
    base = Version(version.base_version) if version is not None else None
    if base is not None and spec is not None and not spec.contains(base, prereleases=True):
        # the project's torch specifier rules the installed version out, not this machine
        return (
            f"torch {base} does not satisfy the project's torch{spec}; {picked} "
            f"{'may fit' if unknown else 'fits'}: {plan.reasons[0]}.{unknown}"
        )
    if base is None or Version(plan.torch or "0") == base:
        return f"{picked} {'may fit' if unknown else 'fits'}: {plan.reasons[0]}.{unknown}"
    assert version is not None
    text = f"No build of torch {base} fits this machine"
    why = dict(plan.passed_over).get(str(base))
    passed = f"passed over torch {base}, not known to fit: "
    unknown_here = next((n[len(passed) :] for n in plan.notes if n.startswith(passed)), None)
    if why:
        text += f" ({why})"
    elif unknown_here:  # it may fit: the tables cannot tell, and a known fit comes first
        text = f"No build of torch {base} is known to fit ({unknown_here})"
    text += f"; {picked} is the nearest release that does: {plan.reasons[0]}.{unknown}"
    release = tables.release(version)
    platform = platform_of(facts)
    upgrade = (
        driver_upgrade(facts, tables, release, platform)
        if release and platform and has_nvidia_gpu(facts)
        else None
    )
    python = parse_version(plan.python)
    wheels = release is not None and (
        python is None or release.supports_python(python, str(platform))
    )
    if upgrade and plan.variant != upgrade[0] and wheels and _below(facts, upgrade[1]):
        text += (
            f" Or keep torch {base}: upgrade the driver to {upgrade[1]} or "
            f"newer for its {upgrade[0]} build."
        )
    return text


def _below(facts: Facts, floor: str) -> bool:
    """Whether this machine's driver is known and older than ``floor``: only then is a driver
    upgrade the way to keep a release (else the release is out for another reason, such as
    the Python, and "upgrade the driver" would be a wrong fix)."""
    driver = parse_version(facts.nvidia.driver_version)
    return driver is not None and driver < Version(floor)


def _platform_unknown(facts: Facts, tables: Tables) -> str:
    """A pasted report that names no platform: a resolution would be for a guessed one."""
    unknown = " and ".join(
        n for n, v in (("OS", facts.system.os), ("architecture", facts.system.machine)) if not v
    )
    return f"Which build fits depends on the {unknown}, not known here." + on_x86_64(facts, tables)


def on_x86_64(facts: Facts, tables: Tables) -> str:
    """For a CPU-only torch on an NVIDIA machine whose platform the text leaves open: the CUDA
    build of the same release on x86_64 Linux and Windows (where the text's OS allows), when
    both have it: the newest the driver runs, or the builds to choose from when the driver is
    unknown. Said as a condition, never as this machine's answer. Empty otherwise.

    pip keeps an installed torch whose version satisfies the pin (a local label such as +cpu
    is not compared), so the CPU build has to go first."""
    from ..driver_support import DriverLevel, machine_driver_verdict
    from ..install.cuda import choose_cuda
    from ..install.releases import cuda_names
    from ..install.render import replace_cpu_build
    from ..values import Platform

    version = torch_version(facts)
    variant = torch_variant(facts)
    release = tables.release(version) if version is not None else None
    if release is None or variant is None or not variant.is_cpu or not has_nvidia_gpu(facts):
        return ""
    family = facts.system.family
    platforms = [
        Platform.parse(p)
        for p in ("linux-x86_64", "windows-x86_64")
        if p in release.platforms and (family is None or Platform.parse(p).os is family)
    ]
    names = {tuple(cuda_names(release, p) or ()) for p in platforms}
    if len(names) != 1 or not next(iter(names)):
        return ""
    where = " or ".join(p.os.value.capitalize() for p in platforms)  # Linux, Windows
    base = Version(version.base_version) if version is not None else None
    builds = next(iter(names))
    picks = {choose_cuda(facts, tables, release, p).variant for p in platforms}
    pick = next(iter(picks)) if len(picks) == 1 else None
    if pick is None:
        return ""
    level = machine_driver_verdict(facts, tables, pick.cuda).level if pick.cuda else None
    if level is DriverLevel.UNKNOWN:
        choice = (
            f" torch {base}'s CUDA builds for x86_64 {where}: {', '.join(map(str, builds))}"
            f" (take one the driver runs: nvidia-smi's 'CUDA Version' is the newest it runs)"
        )
        name = "<build>"
    else:
        choice = f" On x86_64 {where}, torch {base}'s {pick} build runs on this driver"
        name = str(pick)
    return (
        f"{choice}: {replace_cpu_build(f'=={base}', name)} (uninstall first: pip counts "
        f"the installed {facts.torch.version} as torch=={base})."
    )


def torch_for_toolkit(
    facts: Facts, tables: Tables, cuda: Version, planned: Optional[Planned] = None
) -> Optional[str]:
    """A torch build for the CUDA of this nvcc that the resolver says runs here, as
    "torch 2.13.0+cu130": a build for the same CUDA minor first; else, of the same major
    (extensions need only the major to match), the installed torch's version in another
    build, else the newest. None when the tables know none that is known to fit: a
    suggestion never names a build that does not exist or cannot run. The report's wish
    (``plan.wish``: the project's torch specifier, the manager) holds for it too."""
    from .._record import replace
    from ..install import known_variants, resolve

    wish = report_plan(facts, tables, planned).plan.wish
    installed = torch_version(facts)
    best = None
    for variant in known_variants(tables):
        if not (variant.is_cuda and variant.cuda and variant.cuda.major == cuda.major):
            continue
        found = resolve(facts, tables, replace(wish, variant=str(variant)))
        if not found.ok or found.unverified or not found.torch:
            continue
        version = Version(found.torch)
        rank = (
            (variant.cuda.major, variant.cuda.minor) == (cuda.major, cuda.minor),
            installed is not None and version == Version(installed.base_version),
            version,
            variant,
        )
        if best is None or rank > best[0]:
            best = (rank, f"torch {found.torch}+{found.variant}")
    return best[1] if best else None
