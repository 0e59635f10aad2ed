"""A plan checked against the index it installs from (`install --online`, `--run`): which
indexes pip would read for the plan's command, their pages for the planned projects, each
pin matched (envcheck.install.index_query), and the releases there that the tables lack.

The indexes are those pip would read for the printed command: its ``--index-url`` (or, for
a plan on the default index, pip's configured index-url), pip's configured extra indexes,
and for 1.x plans (``--extra-index-url``) both. pip's built-in default index is not asked
when no index-url is configured: envcheck names no index the user did not.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from packaging.version import Version

from .._http import redact
from ..tables import Tables
from .commands import legacy, pins
from .index_query import (
    IndexCheck,
    IndexFiles,
    ask_all,
    match_pin,
    pin_names,
    releases_on,
    supported_tags,
)
from .pip_config import PipConfig
from .plan import InstallPlan, Planned

__all__ = ["check_plan", "indexes_for"]

DEFAULT_INDEX = "pip's default index"


def indexes_for(plan: Planned, config: PipConfig) -> Tuple[List[str], bool]:
    """(the index URLs pip reads for the plan's command, whether pip's built-in default index
    is among them and so left unasked)."""
    base = [config.index_url] if config.index_url else []
    extra = list(config.extra_index_urls)
    if plan.index_url is None:  # the default index: pip's configured one replaces it
        return base + extra, not base
    if legacy(plan):  # --extra-index-url: the default index stays
        return base + extra + [plan.index_url], not base
    return [plan.index_url, *extra], False


def check_plan(
    plan: InstallPlan, tables: Tables, config: PipConfig, timeout: Optional[float] = None
) -> IndexCheck:
    """Ask the plan's indexes for its pins; nothing is asked for a plan that has no pip
    command (no plan, a conda plan)."""
    python, platform = plan.python or "", plan.platform or ""
    if not isinstance(plan, Planned) or not plan.torch:
        return IndexCheck((), python, platform, skipped="there is no plan to check")
    if plan.conda is not None:
        return IndexCheck(
            (), python, platform, skipped="conda installs from channels, not an index"
        )
    if not python or not platform:
        return IndexCheck((), python, platform, skipped="the plan names no Python or platform")
    indexes, default_left = indexes_for(plan, config)
    unasked = (
        f"{DEFAULT_INDEX} is not asked (envcheck asks only an index the command or pip's "
        "configuration names: set index-url, or PIP_INDEX_URL)"
    )
    if not indexes:
        return IndexCheck((), python, platform, skipped=unasked)
    planned = pins(plan)
    pages, down = ask_all(indexes, pin_names(planned), config, timeout)
    tags = supported_tags(python, platform)
    return IndexCheck(
        asked=tuple(redact(i) for i in indexes),
        python=python,
        platform=platform,
        wheels=tuple(match_pin(p, pages, tags) for p in planned),
        unknown_releases=tuple(_unknown_releases(pages, pin_names(planned), tables)),
        unavailable=tuple(down),
        skipped=unasked if default_left else None,
    )


def _unknown_releases(
    pages: List[IndexFiles], projects: List[str], tables: Tables
) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(project, versions, newest the tables know) for releases on the indexes newer than
    the tables' newest, compared by minor as envcheck.tables.Tables.knows_torch does."""
    out = []
    for project in projects:
        newest = _newest_known(tables, project)
        if newest is None:
            continue
        newer = [v for v in releases_on(pages, project) if Version(f"{v.major}.{v.minor}") > newest]
        if newer:
            out.append((project, tuple(str(v) for v in newer), str(newest)))
    return out


def _newest_known(tables: Tables, project: str) -> Optional[Version]:
    """The newest minor the tables know of torch or a companion; None for another project."""
    if project == "torch":
        return Version(tables.newest_release.minor)
    if project not in ("torchvision", "torchaudio"):
        return None
    known = [
        Version(v) for release in tables.releases for v in getattr(release, project).values() if v
    ]
    newest = max(known, default=None)
    return Version(f"{newest.major}.{newest.minor}") if newest is not None else None
