"""`envcheck diagnose`: the same checks and install advice, on a report pasted from elsewhere.

Text -> Facts (reading.py, and a reader per kind of text) -> checks + recognised error messages -> findings.
A check whose facts the text does not contain is not run on guesses: its
findings are dropped and the report says what was missing, so "not in the
text" never reads as "fine" or as "broken".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from ..facts import Facts, GpuFacts, RuntimeStatus
from ..findings import Finding
from ..probes.nvidia import cuda_version_from_int
from ..rules import DETAILS, RULES, with_details
from ..tables import Tables
from ..tables.model import MessageCase, MessageRule
from ..values import Arch, ComputeCapability, Severity
from . import no_wheel
from .collect_env import read_collect_env
from .dumps import read_dumps
from .fragments import read_fragments
from .json_report import read_json
from .labelled import read_labelled
from .literals import required_literals
from .mentions import read_mentions
from .nvidia_smi import read_nvidia_smi
from .reading import Reading, clean, cuda_of_local

if TYPE_CHECKING:
    from ..core import Report

MESSAGE = RULES["MSG001"]
MAX_INPUT = 4 * 1024 * 1024  # characters of a file or stdin that diagnose reads
NOTHING_READ = (
    "envcheck found nothing it can read in this text (collect_env, nvidia-smi, pip or conda "
    "lists, nvcc -V, a library's env dump, envcheck JSON, or a known error message). Run "
    "`python -m torch.utils.collect_env` and `nvidia-smi` on the machine and diagnose their output."
)
DETAIL_LABELS = {
    "nvidia.gpus": "the GPUs (their names)",
    "nvidia.driver": "the NVIDIA driver version",
    "system.machine": "the machine's architecture (x86_64, aarch64)",
    "nvidia.links": "the GPUs' PCIe links (envcheck probe on the machine)",
    "nvidia.topology": "the GPUs' topology and P2P status (nvidia-smi topo -m)",
    "torch.build": "which torch build is installed (collect_env, or torch.version.cuda)",
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
class Explanation:
    """`envcheck explain`: the messages recognised in one text, and the facts they carry."""

    facts: Facts
    findings: List[Finding]
    observed: List[str] = field(default_factory=list)


def read_source(source: IO[str]) -> Tuple[str, List[str]]:
    """At most MAX_INPUT characters of an open file or stdin, and notes on what was not
    read: the rest of a longer input, or the whole of one that fails to read (a
    ``read()`` that raises OSError gives no text; the caller then finds nothing to read)."""
    name = getattr(source, "name", None) or "the input"
    try:
        text = source.read(MAX_INPUT + 1)
    except OSError as exc:
        return "", [f"cannot read {name}: {exc.strerror or exc}"]
    if len(text) <= MAX_INPUT:
        return text, []
    return text[:MAX_INPUT], [
        f"read only the first {MAX_INPUT // 2**20} MiB of {name}; the rest was not diagnosed"
    ]


def unjudged_json(report: Report, error: str) -> str:
    """``diagnose --json`` when nothing in the text could be read: the report's document,
    with the verdict "not judged" and ``ready`` false (nothing read is never ready, as the
    exit code 2 says), and the error.
    """
    import json

    from ..report.findings_text import report_dict

    out = report_dict(report)
    out.update(verdict="not judged", ready=False, error=error)
    return json.dumps(out, indent=2) + "\n"


def read_text(text: str, tables: Tables) -> Reading:
    """Every fact the text carries, and which sections of Facts it covered."""
    text = clean(text)
    errors: List[str] = []
    from_json = read_json(text, errors)
    if from_json is not None:
        reading = Reading(facts=from_json, pieces=["envcheck JSON"])
        reading.observed = {"torch", "nvidia", "python", "system", "torch_runtime", "toolkit"}
        reading.stated = set(DETAILS)
        return reading
    facts = Facts(source="text")
    facts.python.env_kind = "unknown"  # a report does not say; INS004 must not guess "none"
    reading = Reading(facts=facts, errors=errors)
    for reader in (
        read_collect_env,
        read_nvidia_smi,
        read_fragments,  # nvcc -V, package lists, torch's print, uname, sw_vers
        read_dumps,  # detectron2/mmcv, transformers/Lightning, paths, pip's list, typed lines
        read_labelled,  # what reporters type: templates, label lines, sentences, JSON keys
        read_mentions,  # a GPU or OS named once, paths, pip's own words, a library's banner
    ):
        before, pieces = key_facts(facts), len(reading.pieces)
        reader(text, reading)
        where = ", ".join(reading.pieces[pieces:]) or reader.__name__
        _record(reading, before, where)
    for gpu in facts.nvidia.gpus:
        if gpu.name and not gpu.compute_capability:
            gpu.compute_capability = tables.capability_of(gpu.name)
    facts.source = "+".join(reading.pieces) or "text"
    return reading


def key_facts(f: Facts) -> Dict[str, object]:
    """The facts a diagnosis turns on, by name, for recording which fragment gave each."""
    return {
        "torch.version": f.torch.version,
        "torch.cuda": f.torch.cuda,
        "python.version": f.python.version or None,
        "system.os": f.system.os or None,
        "system.machine": f.system.machine or None,
        "nvidia.driver_version": f.nvidia.driver_version,
        "nvidia.cuda_driver_version": f.nvidia.cuda_driver_version,
        "nvidia.gpus": tuple((g.name, g.compute_capability) for g in f.nvidia.gpus) or None,
        "toolkit.nvcc_version": f.toolkit.nvcc_version,
    }


def _record(reading: Reading, before: Dict[str, object], where: str) -> None:
    """Each key fact a reader (or message) set or changed: where it was read."""
    for key, now in key_facts(reading.facts).items():
        if now is not None and now != before.get(key):
            reading.where[key] = where


def unstated(reading: Reading) -> List[str]:
    """The details (rules.DETAILS) of observed sections the text does not state: a cut
    collect_env shows torch and a driver but no GPU list, an OS line no architecture."""
    f = reading.facts
    known = {
        "system.machine": bool(f.system.os and f.system.machine),
        "nvidia.driver": bool(f.nvidia.driver_version or f.nvidia.cuda_driver_version),
        "nvidia.gpus": bool(f.nvidia.gpus),
        "nvidia.links": any(g.pcie is not None for g in f.nvidia.gpus),
        "nvidia.topology": bool(f.nvidia.pairs) or any(g.nvlinks for g in f.nvidia.gpus),
        "torch.build": _build_known(reading),
    }
    return sorted(d for d, ok in known.items() if not ok and d not in reading.stated)


def _build_known(reading: Reading) -> bool:
    """Whether the text says which build its torch is: a local label (+cu121, +cpu), the CUDA
    it was built with, a ROCm version, or collect_env (whose "None" means a CPU build)."""
    t = reading.facts.torch
    if t.version is None:
        return True  # no torch: nothing to tell
    return bool(
        "+" in t.version
        or t.cuda
        or t.hip
        or t.conda_packages
        or "collect_env" in reading.pieces
        or reading.facts.torch_runtime.status is not RuntimeStatus.SKIPPED
    )


def match_messages(text: str, tables: Tables, reading: Reading) -> List[Finding]:
    """Recognised error messages as findings; the facts they carry go into reading.facts.
    A message that ``replaces`` another (the path or symbol names the cause: torchvision's
    ``_C.so`` rather than any "undefined symbol") hides it."""
    matched: List[Tuple[MessageRule, re.Match[str]]] = []
    flat = _WHITE.sub(" ", text)  # a message wrapped across lines by a terminal or an editor
    for rule in tables.messages:
        match = _first_wording(rule, text, flat)
        if match:
            matched.append((rule, match))
    hidden = {old for rule, _ in matched for old in rule.replaces}
    shown = [(rule, match) for rule, match in matched if rule.id not in hidden]
    for rule, match in shown:  # every message's facts first: a case may turn on another's
        before = key_facts(reading.facts)
        _apply(rule, match, reading)
        _record(reading, before, f"message {rule.id}")
    findings = []
    for rule, match in shown:
        case = case_of(rule, reading)
        cause, fix = (case.cause, case.fix) if case else (rule.cause, rule.fix)
        if rule.id in no_wheel.EXPLAINS:
            cause, fix = no_wheel.explain(text, reading, tables) or (cause, fix)
        findings.append(
            Finding(
                MESSAGE.code,
                rule.id,
                Severity.parse(rule.severity),
                rule.title,
                (match.group(0).strip()[:300],),
                f"{cause} {fix}",
            )
        )
    return findings


def _first_wording(rule: MessageRule, text: str, flat: str) -> Optional[re.Match[str]]:
    """The match of the family's first wording (in the catalogue's order) that the text
    holds, or else the text with every run of white space made one space.

    A wording whose required literal (literals.py) the text lacks is not searched. One that
    names no line structure (no newline, tab, anchor or run of spaces) matches the flat text
    wherever it matches the text, so it is searched there first, once: most wordings match
    neither, and searching them is the cost of diagnose."""
    for pattern in rule.patterns:
        literals = required_literals(pattern)
        if literals is not None and not any(_holds(x, pattern, text, flat) for x in literals):
            continue
        if _needs_lines(pattern):
            match = pattern.search(text) or pattern.search(flat)
        else:
            match = pattern.search(flat)
            match = (pattern.search(text) or match) if match else None
        if match:
            return match
    return None


def _holds(literal: str, pattern: re.Pattern[str], text: str, flat: str) -> bool:
    if pattern.flags & re.IGNORECASE:
        return literal in _lower(flat) or literal in _lower(text)
    return literal in flat or literal in text


@functools.lru_cache(maxsize=4)
def _lower(text: str) -> str:
    return text.lower()


_LINE_SYNTAX = re.compile(r"\\[ntr]|(?<!\[)\^|(?<!\\)\$|  |\\s\{[2-9]|\\s\\s| \{[2-9]|\\Z|\\A")
_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]")
_NEEDS_LINES: Dict[str, bool] = {}


def _needs_lines(pattern: re.Pattern[str]) -> bool:
    """Whether the wording names line structure, which the flat text has lost."""
    found = _NEEDS_LINES.get(pattern.pattern)
    if found is None:
        # a class such as [^\n] matches in the flat text whatever it matched in the text
        outside = _CLASS.sub("", pattern.pattern)
        found = _NEEDS_LINES[pattern.pattern] = bool(_LINE_SYNTAX.search(outside))
    return found


def case_of(rule: MessageRule, reading: Reading) -> Optional[MessageCase]:
    """The first of the message's cases whose conditions the text's facts meet (an unknown
    fact meets no condition, so the general meaning stands)."""
    f = reading.facts
    caps = [g.compute_capability for g in f.nvidia.gpus]
    known = [c for c in caps if c is not None]

    def holds(name: str, want: str) -> bool:
        if name == "os":
            return f.system.os == want
        if name == "wsl":
            return f.system.wsl is not None or bool(reading.extra.get("wsl"))
        if name == "driver":
            stated = bool(f.nvidia.driver_version or f.nvidia.cuda_driver_version)
            return stated if want == "stated" else not stated and "nvidia.driver" in reading.stated
        limit = ComputeCapability.maybe(want)
        if limit is None or not known:
            return False
        if name == "gpu_capability_at_least":
            return any(c >= limit for c in known)
        return any(c < limit for c in known)  # gpu_capability_below

    return next((c for c in rule.cases if all(holds(k, v) for k, v in c.when.items())), None)


def _digits(raw: Optional[str]) -> str:
    """``raw`` when it is a short number in ASCII digits (a table's pattern may capture
    anything), else ""."""
    return raw if raw and raw.isascii() and raw.isdigit() and len(raw) <= 9 else ""


_WHITE = re.compile(r"\s+")
_DOTTED = re.compile(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?")
_TORCH = re.compile(r"\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]+\d*)?(?:\+[a-z0-9.]{1,20})?")


def _apply(rule: MessageRule, match: re.Match[str], reading: Reading) -> None:
    """The facts a recognised message carries (its rule's ``extracts``: a fact's name and
    the pattern's group that holds it, or a literal value), into the reading's Facts: each
    where it belongs."""
    groups = match.groupdict()
    named = {name for pattern in rule.patterns for name in pattern.groupindex}
    for fact, source in rule.extracts.items():
        # a group of another wording that this one lacks carries nothing; else a literal value
        raw = groups.get(source) if source in named else source
        if raw is None:
            continue
        _nvidia_fact(fact, raw, reading)
        _torch_fact(fact, raw, reading)
        _host_fact(fact, raw, reading)


def _nvidia_fact(fact: str, raw: str, reading: Reading) -> None:
    """A fact of the GPUs, the driver or NVML, as a message gives it."""
    f = reading.facts
    number = _digits(raw)
    if fact == "gpu_capability":
        cc = ComputeCapability.maybe(_capability(raw))
        if cc and not any(g.compute_capability == cc for g in f.nvidia.gpus):
            if f.nvidia.gpus and not any(g.compute_capability for g in f.nvidia.gpus):
                f.nvidia.gpus[0].compute_capability = cc
            elif not f.nvidia.gpus:
                name = reading.extra.get("gpu_named") or f"a GPU of {cc} (from the error)"
                f.nvidia.gpus = [GpuFacts(index=0, name=name, compute_capability=cc)]
            reading.observed.add("nvidia")
    elif fact == "gpu_name" and raw.strip():
        name = raw.strip()
        if not f.nvidia.gpus:
            f.nvidia.gpus = [GpuFacts(index=0, name=name)]
        elif f.nvidia.gpus[0].name and f.nvidia.gpus[0].name.endswith("(from the error)"):
            f.nvidia.gpus[0].name = name
        reading.observed.add("nvidia")
    elif fact == "cuda_driver_version":
        if number:
            f.nvidia.cuda_driver_version = cuda_version_from_int(int(number))
        elif _DOTTED.fullmatch(raw):
            f.nvidia.cuda_driver_version = raw
        else:
            return
        reading.observed.add("nvidia")
    elif fact == "nvml_error":
        f.nvidia.nvml.ok, f.nvidia.nvml.error = False, raw
        f.nvidia.nvml.message = "Driver/library version mismatch"
        reading.observed.add("nvidia")
        reading.stated.add("nvidia.gpus")  # NVML failed: no GPU list can exist


def _torch_fact(fact: str, raw: str, reading: Reading) -> None:
    """A fact of the torch build, its companions or the CUDA toolkit, as a message gives it."""
    f = reading.facts
    if fact == "arch_list":
        arches = re.findall(r"sm_\d{2,3}a?|compute_\d{2,3}", raw)
        if arches:
            reading.extra["arch_list"] = arches[:40]
            rt = f.torch_runtime
            if not rt.arch_list and rt.status in (RuntimeStatus.SKIPPED, RuntimeStatus.OK):
                # torch printed its get_arch_list(): the deep probe's own fact
                rt.status, rt.arch_list = RuntimeStatus.OK, [Arch.parse(a) for a in arches[:40]]
    elif fact == "nvcc_version" and _DOTTED.fullmatch(raw):
        f.toolkit.nvcc_version = f.toolkit.nvcc_version or raw
        reading.observed.add("toolkit")
    elif fact == "torch_cuda" and _DOTTED.fullmatch(raw) and not f.torch.cuda:
        f.torch.cuda = raw
    elif fact == "torch_version" and _TORCH.fullmatch(raw) and f.torch.version is None:
        f.torch.installed, f.torch.version, f.torch.dist_version = True, raw, raw
        f.torch.cuda = f.torch.cuda or cuda_of_local(raw)
        reading.observed.add("torch")
    elif fact == "companion_cuda" and _DOTTED.fullmatch(raw):
        reading.extra["companion_cuda"] = raw
    elif fact == "torch_variant" and raw == "cpu" and not f.torch.cuda:
        reading.notes.append("the error says this torch is a CPU-only build")


def _host_fact(fact: str, raw: str, reading: Reading) -> None:
    """A fact of the Python, the OS or the site-packages a message names."""
    f = reading.facts
    if fact == "python_version" and re.fullmatch(r"\d\.\d{1,2}", raw):
        if not f.python.version:
            f.python.version = raw
            reading.observed.add("python")
    elif fact == "package":
        packages = reading.extra.setdefault("packages", [])
        if raw not in packages:
            packages.insert(0, raw)
    elif fact == "os" and raw in ("Linux", "Windows", "Darwin") and not f.system.os:
        f.system.os = raw


def _capability(raw: str) -> Optional[str]:
    """ "sm_120", "120", "12.0", "8.6" -> "12.0", "8.6"; None for anything else."""
    raw = raw.strip().lower()
    if raw.startswith("sm_"):
        raw = raw[3:]
    if re.fullmatch(r"\d{1,2}\.\d", raw):
        return raw
    if re.fullmatch(r"\d{2,3}a?", raw):
        return str(ComputeCapability.from_number(raw.rstrip("a")))
    return None


def diagnose_text(
    text: str,
    tables: Tables,
    ignore: Sequence[str] = (),
    strict: bool = False,
    notes: Sequence[str] = (),
) -> Report:
    """The Report for a pasted text: the same core as `envcheck check`, on the facts the
    text carries; rules whose facts it lacks are not judged (``Report.not_run``).
    ``notes`` (from read_source: input left unread) join the diagnosis's notes."""
    from ..core import check

    reading = read_text(text, tables)
    reading.notes[:0] = list(notes)
    messages = match_messages(clean(text), tables, reading)
    observed = set(reading.observed)
    lacking = unstated(reading)
    missing = [label for section, label in KEY_FACTS if section not in observed]
    # the GPUs' links are never in a pasted report: their checks are listed as not run, and
    # the reply does not ask every reporter for them
    missing += [
        DETAIL_LABELS[d]
        for d in lacking
        if DETAILS[d] in observed and d not in ("nvidia.links", "nvidia.topology")
    ]
    judged = observed | ({"text"} if messages else set())
    families = sorted({r.family for r in RULES.values()})
    have = with_details(judged, lacking)
    not_judged = []
    for fam in families:
        if fam in ("SMK", "REQ", "MSG", "SEL", "INT"):
            continue
        rules = [r for r in RULES.values() if r.family == fam]
        skipped = [r for r in rules if not r.needs <= have]
        if skipped:
            not_judged.append(fam if len(skipped) == len(rules) else f"{fam} (partly)")
    pieces = reading.pieces + ([f"{len(messages)} error message(s)"] if messages else [])
    report = check(
        facts=reading.facts,
        tables=tables,
        requirements=False,
        ignore=ignore,
        strict=strict,
        messages=messages,
        observed=observed,
        unstated=lacking,
        command="diagnose",
        diagnosis=_diagnosis(reading, pieces, observed, lacking, missing, not_judged, messages),
    )
    return _for_the_reporter(report, reading, lacking)


def _diagnosis(
    reading: Reading,
    pieces: List[str],
    observed: Set[str],
    lacking: List[str],
    missing: List[str],
    not_judged: List[str],
    messages: List[Finding],
) -> Dict[str, object]:
    """What the diagnosis says of the text itself: what was read and where, what is missing."""
    return {
        "read": pieces,
        "observed": sorted(observed),
        "unstated": lacking,
        "read_from": dict(reading.where),
        "missing": missing,
        "not_judged": not_judged,
        "notes": list(reading.notes),
        "stated": dict(reading.extra.get("stated", {})),
        "errors": list(reading.errors),
        "messages": [m.name for m in messages],
    }


def command_needs(reading: Reading, lacking: Sequence[str]) -> List[str]:
    """What the install resolver needs to know of the reporter's machine and the text does
    not say. With any of it missing, a command would be resolved for a guessed machine (no
    GPU, another platform): none is printed, and the report says what is missing."""
    f = reading.facts
    needs = []
    if "system.machine" in lacking or "system" not in reading.observed:
        needs.append("the architecture" if f.system.os else "the OS and its architecture")
    if "python" not in reading.observed:
        needs.append("the Python version")
    if f.system.os != "Darwin" and ("nvidia" not in reading.observed or "nvidia.driver" in lacking):
        needs.append("the NVIDIA driver (or that there is no NVIDIA GPU)")
    return needs


def _for_the_reporter(report: Report, reading: Reading, lacking: Sequence[str]) -> Report:
    """The report with its install command only when it is resolved for the reporter's
    machine as the text describes it; otherwise no command, and what it needs."""
    import dataclasses

    needs = command_needs(reading, lacking)
    if report.install is None or not needs:
        return report
    diagnosis = dict(report.diagnosis or {}, command_needs=needs)
    findings = tuple(f.but(command=None) if f.command else f for f in report.findings)
    return dataclasses.replace(report, install=None, findings=findings, diagnosis=diagnosis)


def explain(message: str, tables: Tables) -> Optional[Explanation]:
    """`envcheck explain "MESSAGE"`: what one message means, and the facts it carries."""
    reading = Reading(facts=Facts(source="message"))
    found = match_messages(clean(message), tables, reading)
    if not found:
        return None
    return Explanation(reading.facts, found, sorted(reading.observed))
