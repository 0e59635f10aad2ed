"""Say so when this machine has something newer than the tables know: never a silent pass."""

from __future__ import annotations

from datetime import date
from typing import List

from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tables.model import parse_version
from ._util import torch_version

_UPDATE = (
    "Checks that need these facts were skipped or are approximate. Upgrade envcheck, or "
    "point it at newer tables with --tables DIR (or ENVCHECK_TABLES)."
)


def check(facts: Facts, tables: Tables) -> List[Finding]:
    findings = []
    version = torch_version(facts)
    releases = tables.files["torch_releases"]
    if version is not None and not tables.knows_torch(version):
        findings.append(
            RULES["TBL001"](
                f"torch {version} is newer than the tables (torch releases as of {releases.as_of})",
                [f"newest release in the tables: {tables.newest_release.minor}"],
                _UPDATE,
            )
        )
    cuda = parse_version(facts.torch.cuda) if facts.torch.installed else None
    drivers = tables.files["cuda_driver"]
    if cuda is not None and tables.toolkit(cuda) is None and cuda.major not in tables.minor_compat:
        findings.append(
            RULES["TBL001"](
                f"CUDA {cuda} is newer than the tables (CUDA and drivers as of {drivers.as_of})",
                [f"torch {facts.torch.version}"],
                _UPDATE,
            )
        )
    driver = parse_version(facts.nvidia.driver_version)
    if driver is not None and driver.major > tables.newest_driver_branch:
        findings.append(
            RULES["TBL001"](
                f"Driver {driver} is newer than the tables (CUDA and drivers as of {drivers.as_of})",
                [f"newest driver branch in the tables: R{tables.newest_driver_branch}"],
                _UPDATE,
            )
        )
    gpus = tables.files["gpu_arches"]
    for gpu in facts.nvidia.gpus:
        if gpu.compute_capability and not tables.knows_capability(gpu.compute_capability):
            findings.append(
                RULES["TBL001"](
                    f"{gpu.name} (compute capability {gpu.compute_capability}) is newer than the tables "
                    f"(GPU architectures as of {gpus.as_of})",
                    [f"GPU {gpu.index}"],
                    _UPDATE,
                )
            )
    return findings


_REFRESH = (
    "Newer PyTorch, CUDA, driver and GPU releases may exist that these tables do not know "
    "(the install advice names the newest they hold): run `envcheck tables update`, or "
    "upgrade envcheck."
)


def aged(tables: Tables, today: date) -> List[Finding]:
    """TBL002 when the tables' torch releases are older than the refresh age the tables
    give; TBL003 when updated tables in the cache were found but cannot be used. Not one of
    the pure checks: it depends on the date of the run, which the core passes in."""
    findings = []
    releases = tables.files["torch_releases"]
    age = tables.age_days(today.isoformat())["torch_releases"]
    if tables.refresh_after_days is not None and age > tables.refresh_after_days:
        findings.append(
            RULES["TBL002"](
                f"The compatibility tables are {age} days old (torch releases as of {releases.as_of})",
                [
                    f"tables in use: {tables.origin.describe()}",
                    f"the tables ask to be refreshed after {tables.refresh_after_days} days",
                ],
                _REFRESH,
            )
        )
    if tables.origin.unused:
        findings.append(
            RULES["TBL003"](
                "Updated tables in the cache folder were not used; the built-in ones were",
                [tables.origin.unused],
                "Run `envcheck tables update` to fetch tables this envcheck reads, or "
                "`envcheck tables update --remove` to forget the unusable ones.",
            )
        )
    return findings
