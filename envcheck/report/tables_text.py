"""`envcheck tables`: what the compatibility tables hold, where each file comes from and its
age, as JSON (a versioned document) or as text that fits the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from .wrap import wrap

if TYPE_CHECKING:
    from ..tables import Tables

Summary = Dict[str, Dict[str, Any]]  # table file name -> what it holds


def tables_summary(t: Tables) -> Summary:
    """Per table file, the figures that say what it holds (counts and ranges)."""
    newest = t.newest_release
    toolkits = [str(k.cuda) for k in t.toolkits]
    return {
        "torch_releases": {
            "releases": len(t.releases),
            "range": f"{t.releases[0].minor} to {newest.minor}",
            "newest": str(newest.newest),
        },
        "cuda_driver": {
            "toolkits": f"CUDA {toolkits[0]} to {toolkits[-1]}",
            "minor_version_compatibility": sorted(t.minor_compat),
            "driver_branches": f"R{min(t.driver_branches)} to R{max(t.driver_branches)}",
        },
        "gpu_arches": {"families": len(t.families), "gpu_models": len(t.gpus)},
        "installers": {"uv_torch_backends": len(t.uv_torch_backends)},
        "messages": {"messages": len(t.messages)},
        "conda_pytorch": {
            "versions": (
                f"{t.conda.releases[0].torch} to {t.conda.releases[-1].torch}"
                if t.conda is not None and t.conda.releases
                else "none"
            ),
            "channel_last": str(t.conda.last) if t.conda is not None else "unknown",
        },
        "links": {
            "nvlink_generations": sorted(t.links.nvlink) if t.links else [],
            "pcie_generations": sorted(g for _, g, _ in t.links.pcie) if t.links else [],
        },
        "jetpack": {
            "jetpack_releases": [j.jetpack for j in t.jetpacks],
            "with_nvidia_index": [j.jetpack for j in t.jetpacks if j.index],
        },
        "package_builds": {
            "packages": sorted(n for b in t.package_builds.labels for n in b.names),
            "numpy_abi_rules": len(t.package_builds.numpy_abi),
            "cuda_builds": len(t.package_builds.cuda_builds),
            "torch_ranges": sorted({n for r in t.package_builds.torch_ranges for n in r.names}),
            "torch_abi_rules": len(t.package_builds.torch_abi),
        },
    }


def tables_json(t: Tables, today: str) -> Summary:
    """Per table file: its path, whether it is built in, its date and age, what it holds."""
    ages = t.age_days(today)
    info = tables_summary(t)
    return {
        name: {
            "path": str(f.path),
            "builtin": f.builtin,
            "as_of": f.as_of,
            "age_days": ages[name],
            **info[name],
        }
        for name, f in t.files.items()
    }


def tables_blocks(t: Tables, today: str, width: int) -> List[str]:
    """One block of lines per table file: its date and age, its path, what it holds."""
    ages = t.age_days(today)
    info = tables_summary(t)
    blocks = [] if t.origin.describe() == "built-in" else [f"tables in use: {t.origin.describe()}"]
    for name, f in t.files.items():
        where = "built-in" if f.builtin else t.origin.describe()
        lines = wrap(f"{name}  as of {f.as_of} ({ages[name]} days old, {where})", width, rest="  ")
        lines += wrap(str(f.path), width, first="  ")
        for key, value in info[name].items():
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            lines += wrap(f"{key.replace('_', ' ')}: {shown}", width, first="  ", rest="    ")
        blocks.append("\n".join(lines))
    return blocks
