"""Machines compared: `envcheck compare` and the core any script can call.

    from envcheck.fleet import compare_reports
    report = compare_reports(["reports/"], load_tables())
    report.exit_code, report.findings

inputs.py reads the reports, aspects.py says what is compared and what a difference does,
compare.py finds the differences and each machine's own errors, fixes.py says what to change,
hostlist.py names machines the way Slurm does.
"""

from __future__ import annotations

from typing import IO, Iterable, Optional

from ..tables import Tables
from .compare import Difference, FleetReport, compare
from .inputs import Inputs, Machine, Unreadable, read_inputs


def compare_reports(
    paths: Iterable[str], tables: Tables, stdin: Optional[IO[str]] = None
) -> FleetReport:
    """Read the reports (files, folders, ``-`` for ``stdin``) and compare the machines."""
    return compare(read_inputs(paths, stdin), tables)


__all__ = [
    "Difference",
    "FleetReport",
    "Inputs",
    "Machine",
    "Unreadable",
    "compare",
    "compare_reports",
    "read_inputs",
]
