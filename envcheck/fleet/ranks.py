"""The ranks of a distributed job compared before its first collective.

Every rank puts its Facts in the job's store as it joins (the static probe, and what its own
imported torch says: NCCL, cuDNN, the backends); rank 0 compares them as `envcheck compare`
compares machines and prints the findings before the all_reduce, so that a torch or NCCL
mismatch is named before NCCL hangs on it.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Dict, List, Optional, Tuple

from ..facts import Facts, FactsError
from ..tables import Tables
from .compare import FleetReport, compare
from .inputs import Inputs, Machine, Unreadable


def rank_facts(torch: ModuleType, timeout: float) -> str:
    """This rank's Facts as JSON (the ENVCHECK_* overrides applied, as for a probe); an
    object with an ``error`` when they cannot be taken (a bad override), never an exception."""
    from ..probes import probe
    from ..probes.overrides import OverrideError

    try:
        return probe(deep=True, imported_torch=torch, timeout=timeout).to_json(indent=None)
    except (OverrideError, OSError) as exc:
        return json.dumps({"error": str(exc)[:300]})


def compare_ranks(documents: Dict[int, Tuple[str, str]], tables: Tables) -> FleetReport:
    """``documents``: each rank's host and Facts JSON. The ranks are named ``host:rankN``."""
    inputs = Inputs()
    for rank, (host, text) in sorted(documents.items()):
        name = f"{host}:rank{rank}"
        try:
            data = json.loads(text)
            if "error" in data:
                raise FactsError(data["error"])
            inputs.machines.append(Machine(name, f"rank {rank}", Facts.from_dict(data)))
        except (ValueError, FactsError) as exc:
            inputs.unreadable.append(Unreadable(name, f"its facts could not be taken: {exc}"))
    return compare(inputs, tables)


def rank_lines(report: FleetReport, width: int) -> List[str]:
    """What rank 0 prints before the collectives: the findings, or one line that they agree."""
    from ..report.findings_text import finding_lines
    from ..report.style import Style
    from ..report.wrap import wrap

    ranks = len(report.machines)
    lines = [f"before the collectives, the {ranks} ranks' machines compared:"]
    for f in report.findings:
        lines += finding_lines(f, Style(False), width, width)
    for bad in report.unreadable:
        lines += wrap(f"not compared: {bad.source}: {bad.why}", width, rest="    ")
    if not report.findings and not report.unreadable:
        lines.append("  torch, NCCL, CUDA, Python and GPUs agree across the ranks")
    return lines


def breaks(report: Optional[FleetReport]) -> bool:
    """Whether a difference between the ranks breaks the job (an error finding)."""
    return report is not None and report.breaks


__all__ = ["breaks", "compare_ranks", "rank_facts", "rank_lines"]
