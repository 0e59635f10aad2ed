"""`envcheck diagnose`: the same checks and install advice, on a report pasted from elsewhere.

Text -> Facts (parsers.py) -> checks + recognised error messages -> findings.
A check whose facts the text does not contain is not run on guesses: its
findings are dropped and the report says what was missing, so "not in the
text" never reads as "fine" or as "broken".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from ..checks import run_checks
from ..facts import Facts, GpuFacts
from ..findings import Finding, Rule, sort_key
from ..probes.nvidia import cuda_version_from_int
from ..tables import Tables
from ..tables.model import MessageRule
from .parsers import Reading, clean, read_collect_env, read_json, read_nvidia_smi

MESSAGE = Rule("MSG001", "pasted-error", "error", "an error message in the pasted text")

# Facts sections each finding family needs; a family whose sections the text lacks is not judged.
REQUIRES: Dict[str, Set[str]] = {
    "TRC": {"torch", "nvidia"},
    "DRV": {"nvidia"},
    "ARC": {"torch", "nvidia"},
    "PY": {"python", "system"},
    "PKG": {"torch"},
    "INS": {"torch", "python"},
    "RUN": {"torch_runtime"},
    "TK": {"toolkit", "torch"},
    "GPU": {"nvidia"},
    "SYS": {"system"},
    "MAC": {"system", "torch_runtime"},
    "TBL": set(),
}
KEY_FACTS = [
    ("torch", "torch version and build"),
    ("nvidia", "NVIDIA driver and GPUs"),
    ("python", "Python version"),
    ("system", "operating system"),
    ("torch_runtime", "whether CUDA initialised in torch"),
    ("toolkit", "CUDA toolkit (nvcc)"),
]


@dataclass
class Diagnosis:
    facts: Facts
    findings: List[Finding]
    pieces: List[str]
    observed: List[str]
    missing: List[str]  # key facts the text did not contain
    skipped: List[str] = field(default_factory=list)  # finding codes not judged for lack of facts
    notes: List[str] = field(default_factory=list)
    messages: List[str] = field(default_factory=list)  # ids of recognised error messages


def read_text(text: str, tables: Tables) -> Reading:
    """Every fact the text carries, and which sections of Facts it covered."""
    text = clean(text)
    from_json = read_json(text)
    if from_json is not None:
        reading = Reading(facts=from_json, pieces=["envcheck JSON"])
        reading.observed = {"torch", "nvidia", "python", "system", "torch_runtime", "toolkit"}
        return reading
    facts = Facts(source="text")
    facts.python.env_kind = "unknown"  # a report does not say; INS004 must not guess "none"
    reading = Reading(facts=facts)
    read_collect_env(text, reading)
    read_nvidia_smi(text, reading)
    for gpu in facts.nvidia.gpus:
        if gpu.name and not gpu.compute_capability:
            gpu.compute_capability = tables.capability_of(gpu.name)
    facts.source = "+".join(reading.pieces) or "text"
    return reading


def match_messages(text: str, tables: Tables, reading: Reading) -> List[Finding]:
    """Recognised error messages as findings; the facts they carry go into reading.facts."""
    findings = []
    for rule in tables.messages:
        match = rule.pattern.search(text)
        if not match:
            continue
        _apply(rule, match, reading)
        evidence = [match.group(0).strip()[:300]]
        findings.append(
            Finding(
                MESSAGE.code,
                rule.id,
                MESSAGE.severity,
                rule.title,
                evidence,
                f"{rule.cause} {rule.fix}",
            )
        )
    return findings


def _apply(rule: MessageRule, match: re.Match[str], reading: Reading) -> None:
    f = reading.facts
    groups = match.groupdict()
    for fact, source in rule.extracts.items():
        raw = groups.get(source, source)
        if fact == "gpu_capability" and raw and raw.isdigit():
            cc = f"{raw[:-1]}.{raw[-1]}"
            if not any(g.compute_capability for g in f.nvidia.gpus):
                if f.nvidia.gpus:
                    f.nvidia.gpus[0].compute_capability = cc
                else:
                    f.nvidia.gpus = [
                        GpuFacts(
                            index=0,
                            name=f"a GPU with sm_{raw} (from the error)",
                            compute_capability=cc,
                        )
                    ]
            reading.observed.add("nvidia")
        elif fact == "cuda_driver_version" and raw and raw.isdigit():
            f.nvidia.cuda_driver_version = cuda_version_from_int(int(raw))
            reading.observed.add("nvidia")
        elif fact == "nvcc_version" and raw:
            f.toolkit.nvcc_version = raw
            reading.observed.add("toolkit")
        elif fact == "torch_cuda" and raw and not f.torch.cuda:
            f.torch.cuda = raw
        elif fact == "nvml_error":
            f.nvidia.nvml.ok, f.nvidia.nvml.error = False, raw
            f.nvidia.nvml.message = "Driver/library version mismatch"
            reading.observed.add("nvidia")
        elif fact == "torch_variant" and raw == "cpu" and not f.torch.cuda:
            reading.notes.append("the error says this torch is a CPU-only build")


def diagnose_text(text: str, tables: Tables, ignore: List[str] = ()) -> Diagnosis:
    reading = read_text(text, tables)
    messages = match_messages(clean(text), tables, reading)
    checked = run_checks(reading.facts, tables, ignore=ignore)
    kept, skipped = [], set()
    for finding in checked:
        family = finding.code.rstrip("0123456789")
        if REQUIRES.get(family, set()) <= reading.observed:
            kept.append(finding)
        else:
            skipped.add(finding.code)
    ignored = {c.lower() for c in ignore}
    kept += [m for m in messages if m.code.lower() not in ignored and m.name not in ignored]
    missing = [label for section, label in KEY_FACTS if section not in reading.observed]
    not_judged = sorted(
        family for family, needs in REQUIRES.items() if needs and not needs <= reading.observed
    )
    return Diagnosis(
        facts=reading.facts,
        findings=sorted(kept, key=sort_key),
        pieces=reading.pieces + ([f"{len(messages)} error message(s)"] if messages else []),
        observed=sorted(reading.observed),
        missing=missing,
        skipped=not_judged,
        notes=reading.notes,
        messages=[m.name for m in messages],
    )


def explain(message: str, tables: Tables) -> Optional[Diagnosis]:
    """`envcheck explain "MESSAGE"`: what one message means, and the facts it carries."""
    reading = Reading(facts=Facts(source="message"))
    found = match_messages(clean(message), tables, reading)
    if not found:
        return None
    return Diagnosis(
        reading.facts,
        found,
        ["message"],
        sorted(reading.observed),
        [],
        messages=[f.name for f in found],
    )
