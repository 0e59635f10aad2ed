"""``--keep`` (and every report's install advice, ``installed_wish``) keeps the stack working,
not only torch: the torch it plans must meet what the installed packages require of torch
(xFormers' ``torch==2.4.1``) and be the minor their compiled extensions were built for
(PyG's ``+pt21cu121``). Where no release that fits this machine does, the plan is made
without them and says so: a machine is never left without a plan for a pin.

The constraints come from envcheck.pins, the one reader of pins and build labels.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from packaging.specifiers import SpecifierSet

from ..facts import Facts
from ..pins import recorded_builds, torch_pins
from ..tables import Tables

Kept = List[Tuple[str, SpecifierSet]]  # (who asks it, what it asks of torch)


def kept_constraints(facts: Facts, tables: Tables) -> Kept:
    """What the installed packages ask of torch: each pin that applies here, and the torch
    minor (``==2.1.*``) of each build the table can read the label of."""
    out: Kept = [
        (f"{p.package.name} {p.package.version}", p.requirement.specifier)
        for p in torch_pins(facts, tables)[0]
    ]
    for r in recorded_builds(facts, tables):
        if r.made is not None:
            who = f"{r.package.name} {r.package.version}"
            out.append((who, SpecifierSet(f"=={r.made.torch}.*")))
    return out


def narrowed(
    spec: Optional[SpecifierSet], wanted: str, kept: Kept
) -> Optional[Tuple[SpecifierSet, str]]:
    """The wish's specifier with every kept constraint added, and the words for it; None
    when nothing is kept."""
    if not kept:
        return None
    both = spec if spec is not None else SpecifierSet()
    for _, asked in kept:
        both = both & asked  # a new set: the wish's is left as it was
    return both, f"{wanted}, meeting {said(kept)}"


def binding(kept: Kept, tables: Tables) -> Kept:
    """The constraints that rule out the newest torch in the tables: the ones worth saying
    (a hundred packages asking ``torch>=2.0`` narrow nothing a reader needs to hear)."""
    newest = tables.newest_release.newest
    return [(who, asked) for who, asked in kept if not asked.contains(newest, prereleases=True)]


def said(kept: Kept, most: int = 3) -> str:
    """``xformers 0.0.28's torch==2.4.1 and torch-scatter 2.1.2+pt21cu121's torch==2.1.*``,
    the first ``most`` of them and how many more."""
    words = [f"{who}'s torch{asked}" for who, asked in kept[:most]]
    if len(kept) > most:
        words.append(f"{len(kept) - most} more")
    return " and ".join(words)
