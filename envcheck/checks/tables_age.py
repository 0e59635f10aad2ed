"""Say so when this machine has something newer than the tables know: never a silent pass."""

from __future__ import annotations

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
