"""PyTorch's own conda channel, up to its last release: which versions and builds its
pages give a command for, and the channels, build package and companion pins of that
command (tables.conda). After the channel's last release, conda-forge builds torch itself."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import replace
from ..tables import Tables
from ..tables.model import CondaChannel, Release
from ..values import Platform, Variant
from .companions import COMPANIONS
from .draft import Draft
from .plan import CondaCommand
from .reasons import Blocker, Unknown, Why
from .releases import matching_versions
from .wish import Wish


def conda_channel(tables: Tables, wish: Wish, release: Release) -> Optional[CondaChannel]:
    """PyTorch's conda channel when the plan is for conda and it published this minor."""
    channel = tables.conda
    if not wish.for_conda or channel is None or not channel.publishes(release.minor):
        return None
    return channel


def conda_version(
    channel: CondaChannel,
    release: Release,
    spec: Optional[SpecifierSet],
    near: Optional[Version],
    python: Optional[Version],
) -> Tuple[Optional[Version], str, List[str]]:
    """(version, "", newer versions left out) among those the conda view knows, or
    (None, why, []). A version PyTorch's pages give no conda command for is not known."""
    versions = matching_versions(release, spec)
    known = [v for v in versions if channel.release(v) is not None]
    if not known:
        return (
            None,
            Unknown(
                f"not known whether the {channel.name} conda channel has it: "
                "PyTorch's pages give no conda command for it"
            ),
            [],
        )
    pick = known[-1]
    if near is not None and Version(near.base_version) in known:
        pick = Version(near.base_version)
    record = channel.release(pick)
    assert record is not None
    limit = record.python_max
    if (
        limit is not None
        and python is not None
        and Version(f"{python.major}.{python.minor}") > limit
    ):
        return (
            None,
            Why(
                f"the conda build of torch {pick} supports Python {limit} and older only "
                "(PyTorch's page)",
                Blocker.NO_WHEEL,
            ),
            [],
        )
    skipped = [str(v) for v in versions if v > pick and channel.release(v) is None]
    return pick, "", skipped


def conda_offered(
    channel: CondaChannel, version: Version, platform: Platform
) -> Tuple[Optional[List[Variant]], str]:
    """(the variants the channel has for this version and platform, "") or (None, why not)."""
    record = channel.release(version)
    builds = record.builds_for(str(platform)) if record is not None else None
    if builds is None:
        return None, Unknown(
            f"not known whether the {channel.name} conda channel has it for {platform}: "
            "PyTorch's pages give no conda command for that platform"
        )
    if not builds:
        return None, Why(
            f"the {channel.name} conda channel has no torch {version} for {platform}",
            Blocker.NO_WHEEL,
        )
    return [b.variant for b in builds], ""


def conda_plan(
    plan: Draft,
    tables: Tables,
    release: Release,
    version: Version,
    variant: Variant,
    platform: Platform,
    skipped: Sequence[str],
) -> None:
    """The channels, build package and companions of the conda command, from the tables."""
    if not plan.wish.for_conda:
        return
    channel = tables.conda
    if channel is None:
        plan.unverified.append("the conda command: the tables hold no view of PyTorch's channel")
        return
    if not channel.publishes(release.minor):
        plan.notes.append(
            f"the {channel.name} conda channel ended with torch {channel.last}; "
            f"conda-forge builds torch {release.minor} itself"
        )
        plan.unverified.append(
            f"a conda-forge build of pytorch {version} ({variant}): the tables do not list "
            "conda-forge's builds"
        )
        return
    record = channel.release(version)
    builds = record.builds_for(str(platform)) if record is not None else None
    build = next((b for b in builds or () if b.variant == variant), None)
    if record is None or build is None:  # pick_variant refused these
        raise AssertionError(f"no conda build of {version} {variant} for {platform}")
    plan.conda = CondaCommand(tuple(build.channels), build.package)
    for i, package in enumerate(plan.packages):
        if package.name not in COMPANIONS:
            continue
        pinned = record.companion(package.name)
        if pinned and pinned != package.version:
            plan.notes.append(
                f"conda pairs {package.name} {pinned} with torch {version} "
                f"(the pip wheels: {package.version})"
            )
            plan.packages[i] = replace(package, version=pinned)
    for other in skipped:
        plan.notes.append(
            f"torch {other} left out: PyTorch's pages give no conda command for it, so whether "
            f"the {channel.name} channel has it is not known"
        )
    plan.unverified.append(
        f"that the {channel.name} channel still serves these packages: PyTorch deprecated it "
        f"after {channel.last} (pytorch/pytorch#138506); the tables hold PyTorch's published "
        "commands, not the channel's current files"
    )
