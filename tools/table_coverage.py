"""Print how much of the compatibility tables is known: per table, its records, the share
with sources, and the coverage of the facts the checks depend on (arch lists per platform,
gfx lists, bundled CUDA updates, per-platform Python ranges, the conda view, GPU names).

    python tools/table_coverage.py [TABLES_DIR]

A gap here is a question envcheck answers with "not known"/"not verified", never a pass.
The figures are for release notes and closing notes; nothing asserts on them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from envcheck.tables import load_tables
from envcheck.tables.model import Release, Tables

ROOT = Path(__file__).resolve().parent.parent


def share(have: int, of: int) -> str:
    return f"{have}/{of} ({100 * have / of:.0f}%)" if of else "0/0"


def records(doc: Any) -> Iterable[Dict[str, Any]]:
    """Every dict in a table that carries its own ``sources``: the sourced records."""
    if isinstance(doc, dict):
        if "sources" in doc and isinstance(doc["sources"], list):
            yield doc
        for value in doc.values():
            yield from records(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from records(value)


def sourced(folder: Path) -> List[Tuple[str, int, int, float]]:
    """(file, records, records with at least one source, mean sources per record)."""
    out = []
    for path in sorted(folder.glob("*.json")):
        found = list(records(json.loads(path.read_text())))
        with_sources = [r for r in found if r["sources"]]
        mean = sum(len(r["sources"]) for r in found) / len(found) if found else 0.0
        out.append((path.name, len(found), len(with_sources), mean))
    return out


def arch_coverage(releases: Iterable[Release]) -> Dict[str, Tuple[int, int]]:
    """Per platform: (CUDA builds with an arch list, CUDA builds)."""
    counts = {"linux-x86_64": [0, 0], "linux-aarch64": [0, 0], "windows-x86_64": [0, 0]}
    for r in releases:
        for v in r.cuda_variants or ():
            counts["linux-x86_64"][1] += 1
            counts["linux-x86_64"][0] += v in r.arch_lists
        for v in r.cuda_aarch64_variants or ():
            counts["linux-aarch64"][1] += 1
            counts["linux-aarch64"][0] += v in r.arch_lists_aarch64
        if "windows-x86_64" in r.platforms:
            for v in r.windows_cuda if r.windows_cuda is not None else r.cuda_variants or ():
                counts["windows-x86_64"][1] += 1
                counts["windows-x86_64"][0] += v in r.arch_lists_windows
    return {k: (v[0], v[1]) for k, v in counts.items()}


def report(tables: Tables, folder: Path) -> List[str]:
    lines = ["records with sources, per file:"]
    for name, n, with_sources, mean in sourced(folder):
        lines.append(
            f"  {name:24} {share(with_sources, n):>16} records sourced, {mean:.1f} per record"
        )
    releases = tables.releases
    lines.append(f"torch releases: {releases[0].minor} to {releases[-1].minor} ({len(releases)})")
    for platform, (have, of) in arch_coverage(releases).items():
        lines.append(f"  CUDA builds with an arch list, {platform:15} {share(have, of)}")
    rocm = [(r, v) for r in releases for v in r.rocm_variants or ()]
    gfx = sum(1 for r, v in rocm if v in r.gfx_lists)
    lines.append(f"  ROCm builds with a gfx list                   {share(gfx, len(rocm))}")
    pairs = [(r, p) for r in releases for p in r.platforms]
    ranged = sum(1 for r, p in pairs if p in r.python_by_platform)
    lines.append(f"  (release, platform) with a checked Python range {share(ranged, len(pairs))}")
    cuda_builds = [(r.minor, v) for r in releases for v in r.cuda_variants or ()]
    bundled = {(b.torch, b.variant) for b in tables.bundled_cuda}
    lines.append(
        f"  CUDA builds whose bundled CUDA update is known {share(len(bundled), len(cuda_builds))}"
    )
    toolkits = tables.toolkits
    floors = sum(1 for t in toolkits if t.linux is not None)
    updates = [u for t in toolkits for u in t.updates]
    lines.append(
        f"CUDA toolkits: {toolkits[0].cuda} to {toolkits[-1].cuda}; Linux GA floor known for "
        f"{share(floors, len(toolkits))}; {len(updates)} update releases, "
        f"{sum(1 for u in updates if u.linux is not None)} with a Linux floor"
    )
    lines.append(f"GPU generations with a first driver: {len(tables.first_drivers)}")
    fc = tables.forward_compat
    lines.append(f"cuda-compat packages: {len(fc.packages) if fc else 0}")
    nvidia = sum(1 for g in tables.gpus if g.capability)
    lines.append(
        f"GPU names: {len(tables.gpus)} ({nvidia} NVIDIA, {len(tables.gpus) - nvidia} AMD)"
    )
    conda = tables.conda
    if conda is not None:
        in_scope = [v for r in releases for v in r.versions if _le(str(v), str(conda.last))]
        lines.append(
            f"conda pytorch channel: {share(len(conda.releases), len(in_scope))} torch versions "
            f"to {conda.last} with commands"
        )
    lines.append(
        f"error messages: {len(tables.messages)}; uv backends: {len(tables.uv_torch_backends)}"
    )
    return lines


def _le(version: str, minor: str) -> bool:
    from packaging.version import Version

    return Version(".".join(version.split(".")[:2])) <= Version(minor)


def main(argv: List[str]) -> None:
    folder: Optional[Path] = Path(argv[0]) if argv else None
    tables = load_tables(folder)
    print("\n".join(report(tables, folder or ROOT / "compat_tables")))


if __name__ == "__main__":
    main(sys.argv[1:])
