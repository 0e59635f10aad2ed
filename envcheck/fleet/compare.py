"""Compare machines: for each fact a multi-node job depends on, the value most machines
hold and the machines that differ from it, as findings of the one rule registry.

A machine whose report does not say a fact is counted as unknown, never as agreeing: a fact no
report holds is listed as not compared. Each machine's own errors (a driver under the build's
floor on one node) come from the same checks `envcheck check` runs, run once per distinct set
of facts, so a fleet of identical machines costs one check.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from .._record import field, record
from ..facts import Facts, RuntimeStatus
from ..findings import Finding, sort_key
from ..rules import RULES
from ..tables import Tables
from ..values import Severity
from .aspects import Aspect, aspects
from .fixes import fix_for
from .hostlist import count, fold
from .inputs import Inputs, Machine, Unreadable


@record(frozen=True)
class Difference:
    aspect: Aspect
    majority: Optional[str]  # None when no value is held by more machines than any other
    groups: Tuple[Tuple[str, Tuple[str, ...]], ...]  # value and its machines, most first
    unknown: Tuple[str, ...]  # machines whose report does not say

    def odd(self) -> List[str]:
        """The machines that differ from the majority (all of them, without one)."""
        return [n for value, names in self.groups if value != self.majority for n in names]


@record(frozen=True)
class FleetReport:
    machines: Tuple[str, ...]
    findings: Tuple[Finding, ...]
    differences: Tuple[Difference, ...]
    not_compared: Tuple[str, ...]  # facts no report holds
    unreadable: Tuple[Unreadable, ...] = ()
    notes: Tuple[str, ...] = ()
    values: Dict[str, Dict[str, str]] = field(default_factory=dict)  # machine -> fact -> value

    @property
    def breaks(self) -> bool:
        """A difference, or a machine's own error, breaks a job across these machines."""
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def verdict(self) -> str:
        """NOT COMPARED (fewer than two machines read), DIFFER (something breaks a job) or
        COMPATIBLE."""
        if len(self.machines) < 2:
            return "NOT COMPARED"
        return "DIFFER" if self.breaks else "COMPATIBLE"

    @property
    def exit_code(self) -> int:
        """2: an input could not be read (the rest were compared) or fewer than two were;
        1: something breaks the job; 0 otherwise."""
        if self.unreadable or len(self.machines) < 2:
            return 2
        return 1 if self.breaks else 0


def compare(inputs: Inputs, tables: Tables) -> FleetReport:
    """The differences between the machines read, and each machine's own errors."""
    machines = inputs.machines
    rows = aspects([m.facts for m in machines])
    differences: List[Difference] = []
    not_compared: List[str] = []
    values: Dict[str, Dict[str, str]] = {m.name: {} for m in machines}
    for aspect in rows:
        read = {m.name: aspect.read(m.facts) for m in machines}
        for name, value in read.items():
            if value is not None:
                values[name][aspect.label] = value
        if all(v is None for v in read.values()):
            not_compared.append(aspect.label)
            continue
        difference = _difference(aspect, read)
        if difference is not None:
            differences.append(difference)
    by_name = {m.name: m for m in machines}
    differences, with_torch = _follow_torch(differences)
    findings = [_finding(d, by_name, tables, with_torch) for d in differences]
    findings += _machine_errors(machines, tables)
    findings.sort(key=lambda f: (*sort_key(f), f.title))
    return FleetReport(
        machines=tuple(m.name for m in machines),
        findings=tuple(findings),
        differences=tuple(differences),
        not_compared=tuple(dict.fromkeys(not_compared)),
        unreadable=tuple(inputs.unreadable),
        notes=tuple(inputs.notes),
        values=values,
    )


def _difference(aspect: Aspect, read: Dict[str, Optional[str]]) -> Optional[Difference]:
    known = {n: v for n, v in read.items() if v is not None}
    counts = Counter(known.values())
    if len(counts) < 2:
        return None
    ranked = counts.most_common()
    majority = ranked[0][0] if ranked[0][1] > ranked[1][1] else None
    groups = tuple(
        (value, tuple(sorted(n for n, v in known.items() if v == value))) for value, _ in ranked
    )
    unknown = tuple(sorted(n for n, v in read.items() if v is None))
    return Difference(aspect, majority, groups, unknown)


# differences that come with another torch build (its wheel carries its CUDA, NCCL and cuDNN)
_WITH_TORCH = ("CMP002", "CMP003", "CMP005", "CMP008", "CMP009")


def _follow_torch(differences: List[Difference]) -> Tuple[List[Difference], List[str]]:
    """The differences less those the torch difference explains (they are on its machines
    only), and those as lines of its evidence: one cause, one finding."""
    torch = next((d for d in differences if d.aspect.code == "CMP001"), None)
    if torch is None or torch.majority is None:
        return differences, []
    odd = set(torch.odd())
    follow = [
        d
        for d in differences
        if d.aspect.code in _WITH_TORCH and d.majority is not None and set(d.odd()) <= odd
    ]
    lines = [f"with it, {d.aspect.label}: {_others(d)} (the others: {d.majority})" for d in follow]
    return [d for d in differences if d not in follow], lines


def _finding(
    d: Difference, machines: Dict[str, Machine], tables: Tables, with_torch: Sequence[str]
) -> Finding:
    label = d.aspect.label
    differ = f"{label} {'differ' if label.endswith('s') else 'differs'}"
    if d.majority is not None:
        majority_names = dict(d.groups)[d.majority]
        odd = d.odd()
        title = (
            f"{differ}: {_few(odd)} {_held(_others(d), len(odd))}; "
            f"the other {len(majority_names)} {_held(d.majority, len(majority_names))}"
        )
    else:
        title = f"{differ}, with no majority: " + "; ".join(
            f"{value} on {_few(names)}" for value, names in d.groups
        )
    evidence = [f"{value}: {count(names)}" for value, names in d.groups]
    if d.aspect.code == "CMP001":
        evidence += with_torch
    if d.unknown:
        evidence.append(f"not in the report: {count(d.unknown)}")
    evidence.append(f"why it matters: {d.aspect.why}")
    fix, command = fix_for(d, machines, tables)
    return RULES[d.aspect.code](title, evidence, fix, command)


def _held(value: str, machines: int) -> str:
    """'has 2.12.0+cu126', 'have 1', or 'leave it unset' (a variable)."""
    if value == "unset":
        return "leaves it unset" if machines == 1 else "leave it unset"
    return f"{'has' if machines == 1 else 'have'} {value}"


def _few(names: Sequence[str]) -> str:
    return fold(names) if len(names) <= 3 else f"{len(names)} machines ({fold(names)})"


def _others(d: Difference) -> str:
    values = [value for value, _ in d.groups if value != d.majority]
    return values[0] if len(values) == 1 else " or ".join(values)


def _machine_errors(machines: Sequence[Machine], tables: Tables) -> List[Finding]:
    """Each machine's own errors, one finding per error shared by machines (the machines
    named), from its check --json report or from the checks run on its facts."""
    cache: Dict[str, Tuple[Finding, ...]] = {}
    shared: Dict[Tuple[str, str], Tuple[Finding, List[str]]] = {}
    for m in machines:
        own = m.findings if m.checked else _checked(m.facts, tables, cache)
        for f in own:
            if f.severity is Severity.ERROR and f.caused_by is None:
                shared.setdefault((f.code, f.title), (f, []))[1].append(m.name)
    return [_own_error(f, names, len(machines)) for f, names in shared.values()]


_ALONE = (
    " Across these machines, another torch on {names} alone would make them differ from the "
    "rest: fix the machine itself, or change every machine."
)


def _own_error(f: Finding, names: List[str], machines: int) -> Finding:
    """A machine's error as a fleet finding. The install command that fixes it on one machine
    is kept only when every machine has the error: on some alone it would put another torch
    there, a difference that breaks the job (CMP001)."""
    command, fix = f.command, f.fix
    rule = RULES.get(f.code)
    if command and rule is not None and rule.install_fix and len(names) < machines:
        command, fix = None, (fix or "") + _ALONE.format(names=fold(names))
    return RULES["CMP015"](
        f"{f.code} on {_few(names)}: {f.title}",
        [*f.evidence, f"machines: {count(names)}"],
        fix,
        command,
    )


# what differs between identical machines: not part of what decides their findings
_VOLATILE = ("hostname", "memory_available", "shm_free", "disks", "cpus_affinity")


def _checked(
    facts: Facts, tables: Tables, cache: Dict[str, Tuple[Finding, ...]]
) -> Tuple[Finding, ...]:
    from ..core import check

    data = facts.to_dict()
    data.pop("collected_at", None)
    for key in _VOLATILE:
        data.get("system", {}).pop(key, None)
    for gpu in data.get("nvidia", {}).get("gpus", []):
        for volatile in ("uuid", "memory_used", "temperature_c"):
            gpu.pop(volatile, None)
    key = json.dumps(data, sort_keys=True, default=str)
    if key not in cache:
        deep = facts.torch_runtime.status is not RuntimeStatus.SKIPPED
        report = check(facts=facts, tables=tables, deep=deep, requirements=False)
        cache[key] = report.findings
    return cache[key]


__all__ = ["Difference", "FleetReport", "compare"]
