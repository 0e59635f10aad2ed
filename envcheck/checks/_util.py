"""Small questions several checks ask of Facts, and the one way they explain an install fix."""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from ..compat import (  # noqa: F401 - re-exported for the checks
    has_amd_gpu,
    has_nvidia_gpu,
    platform_of,
    torch_variant,
    torch_version,
)
from ..facts import Facts
from ..tables import Tables


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


def what_fits(facts: Facts, tables: Tables) -> str:
    """The resolver's answer for this machine, in a sentence: what fits instead of the
    installed torch, or why nothing of its version does and the nearest way out.

    A check explains; it never builds a command. The command under the finding comes
    from the same plan (``install.installed_wish``), attached once by the core.
    """
    from ..install import installed_wish, resolve
    from ..install.plan import driver_upgrade

    version = torch_version(facts)
    if not facts.system.os or not facts.system.machine:
        # a pasted report that names no platform: a resolution would be for a guessed one
        return "Which build fits depends on the OS and architecture, which are not known here."
    plan = resolve(facts, tables, installed_wish(facts))
    if not plan.ok:
        return "Nothing fits: " + "; ".join(plan.conflicts + plan.ways_out) + "."
    picked = f"torch {plan.torch} ({plan.variant})"
    unknown = f" Not verified: {'; '.join(plan.unverified)}." if plan.unverified else ""
    if version is None or Version(plan.torch or "0") == Version(version.base_version):
        return f"{picked} {'may fit' if unknown else 'fits'}: {plan.reasons[0]}.{unknown}"
    text = f"No build of torch {version.base_version} fits this machine"
    why = dict(plan.passed_over).get(version.base_version)
    passed = f"passed over torch {version.base_version}, not known to fit: "
    unknown_here = next((n[len(passed) :] for n in plan.notes if n.startswith(passed)), None)
    if why:
        text += f" ({why})"
    elif unknown_here:  # it may fit: the tables cannot tell, and a known fit comes first
        text = f"No build of torch {version.base_version} is known to fit ({unknown_here})"
    text += f"; {picked} is the nearest release that does: {plan.reasons[0]}.{unknown}"
    release = tables.release(version)
    platform = platform_of(facts)
    upgrade = (
        driver_upgrade(facts, tables, release, platform)
        if release and platform and has_nvidia_gpu(facts)
        else None
    )
    if upgrade is not None and plan.variant != str(upgrade[0]):
        text += (
            f" Or keep torch {version.base_version}: upgrade the driver to {upgrade[1]} or "
            f"newer for its {upgrade[0]} build."
        )
    return text


def torch_for_toolkit(facts: Facts, tables: Tables, cuda: Version) -> Optional[str]:
    """A torch build for the CUDA of this nvcc that the resolver says runs here, as
    "torch 2.13.0+cu130": a build for the same CUDA minor first; else, of the same major
    (extensions need only the major to match), the installed torch's version in another
    build, else the newest. None when the tables know none that is known to fit: a
    suggestion never names a build that does not exist or cannot run."""
    from ..install import installed_wish, resolve
    from ..install.plan import known_variants

    installed = torch_version(facts)
    best = None
    for variant in known_variants(tables):
        if not (variant.is_cuda and variant.cuda and variant.cuda.major == cuda.major):
            continue
        plan = resolve(facts, tables, installed_wish(facts, variant=str(variant)))
        if not plan.ok or plan.unverified or not plan.torch:
            continue
        version = Version(plan.torch)
        rank = (
            (variant.cuda.major, variant.cuda.minor) == (cuda.major, cuda.minor),
            installed is not None and version == Version(installed.base_version),
            version,
            variant,
        )
        if best is None or rank > best[0]:
            best = (rank, f"torch {plan.torch}+{plan.variant}")
    return best[1] if best else None
