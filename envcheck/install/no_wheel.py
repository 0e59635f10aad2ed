"""Why no release that matches the wish has a wheel here: none for this platform, none for
this Python, or none in the variant asked for; with the releases that have one."""

from __future__ import annotations

from typing import Optional, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..tables import Tables
from ..tables.model import Release, parse_version
from ..values import Platform
from .draft import Draft
from .reasons import Unknown
from .releases import matching_versions, variants_of
from .wish import Wish


def python_conflict(
    plan: Draft,
    matching: Sequence[Release],
    platform: Platform,
    python: Optional[str],
    wanted: str,
    tables: Tables,
    spec: Optional[SpecifierSet] = None,
) -> None:
    """Why no release that matches the wish has a wheel here: none for this platform (or
    none of the wished patch versions), or none for this Python, with the releases that
    have one. Ranges are the platform's own where the tables hold them."""
    key = str(platform)
    on_platform = [
        r for r in matching if key in r.platforms and matching_versions(r, spec, platform)
    ]
    if not on_platform:
        plan.conflicts.append(f"{wanted} has no wheels for {platform}")
        last = next(
            (r for r in reversed(tables.releases) if key in r.platforms and r.versions_on(key)),
            None,
        )
        if last:
            plan.ways_out.append(
                f"torch {max(last.versions_on(key))} is the newest with {platform} wheels"
            )
        return

    def span(r: Release) -> str:
        low, high = r.python_range(key)
        return f"{low}-{high}"

    ranges = sorted({span(r) for r in on_platform})
    plan.conflicts.append(
        f"{wanted} has no wheels for Python {python} on {platform} "
        f"(it supports {', '.join(ranges)})"
    )
    newest = on_platform[0]
    plan.ways_out.append(
        f"use Python {span(newest)} for torch {max(newest.versions_on(key))} on {platform}"
    )
    _other_release(plan, tables, platform, python)
    unverified = [r.minor for r in on_platform if not r.python_verified(key)]
    if unverified:
        plan.unverified.append(
            Unknown(
                f"the Python range of torch {', '.join(unverified)} wheels for {platform} "
                "is not known to the tables: the release's range was used"
            )
        )


def _other_release(plan: Draft, tables: Tables, platform: Platform, python: Optional[str]) -> None:
    """The newest release with a wheel for this Python here: the other way out."""
    key = str(platform)
    pyv = parse_version(python) or Version("0")
    other = next(
        (
            r
            for r in reversed(tables.releases)
            if key in r.platforms and r.versions_on(key) and r.supports_python(pyv, key)
        ),
        None,
    )
    if other:
        plan.ways_out.append(
            f"or torch {max(other.versions_on(key))}, the newest for Python {python} on {platform}"
        )


def unpublished_variant(
    plan: Draft,
    tables: Tables,
    usable: Sequence[Release],
    target: Platform,
    python: Optional[Version],
    wish: Wish,
    wanted: str,
) -> bool:
    """When the variant asked for (``--variant cu126``) is published for none of the releases
    that match the wish here, say that first (``torch 2.15 has no cu126 build``): the GPUs
    and the driver do not matter to a build that does not exist. True when it said so.
    PyTorch's conda channel has its own variants, judged per release (variant.pick_variant)."""
    asked = wish.asked_variant
    if asked is None or wish.for_conda:
        return False
    if any(asked in variants_of(r, target) for r in usable):
        return False
    published = sorted({v for r in usable for v in variants_of(r, target)})
    plan.conflicts.append(
        f"{wanted} has no {asked} build for {target} "
        f"(published: {', '.join(str(v) for v in published)})"
    )
    having = [
        r
        for r in tables.releases
        if str(target) in r.platforms
        and asked in variants_of(r, target)
        and (python is None or r.supports_python(python, str(target)))
    ]
    if having:
        newest = having[-1]
        plan.ways_out.append(
            f"torch {newest.minor} is the newest release with a {asked} build for {target} "
            f"(--torch {newest.minor})"
        )
    plan.ways_out.append("let envcheck choose the variant (--variant auto)")
    if not asked.is_cpu:
        plan.ways_out.append("use the CPU build (--variant cpu)")
    return True
