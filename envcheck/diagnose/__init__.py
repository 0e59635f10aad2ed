"""`envcheck diagnose`: the same checks and install advice, on a report pasted from elsewhere.

Text -> Facts (reading.py, and a reader per kind of text) -> checks + recognised error messages -> findings.
A check whose facts the text does not contain is not run on guesses: its
findings are dropped and the report says what was missing, so "not in the
text" never reads as "fine" or as "broken".
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from .._record import field, record, replace
from ..facts import Facts, RuntimeStatus
from ..findings import Finding
from ..rules import DETAILS, RULES, with_details
from ..tables import Tables
from .collect_env import read_collect_env
from .dumps import read_dumps
from .fragments import read_fragments
from .installers import read_installers
from .json_report import read_json
from .labelled import read_labelled
from .mentions import read_mentions
from .messages import case_of as case_of
from .messages import match_messages as match_messages
from .nvidia_smi import read_nvidia_smi
from .reading import Reading, clean, forget_texts, key_facts, record_where

if TYPE_CHECKING:
    from ..core import Report

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
    "torch.dependents": "what the other installed packages require of torch (envcheck check)",
}
KEY_FACTS = [
    ("torch", "torch version and build"),
    ("nvidia", "NVIDIA driver and GPUs"),
    ("python", "Python version"),
    ("system", "operating system"),
    ("torch_runtime", "whether CUDA initialised in torch"),
    ("toolkit", "CUDA toolkit (nvcc)"),
]


@record
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
        read_installers,  # conda's virtual packages and subdir, uv's interpreter
        read_labelled,  # what reporters type: templates, label lines, sentences, JSON keys
        read_mentions,  # a GPU or OS named once, paths, pip's own words, a library's banner
    ):
        before, pieces = key_facts(facts), len(reading.pieces)
        reader(text, reading)
        where = ", ".join(reading.pieces[pieces:]) or reader.__name__
        record_where(reading, before, where)
    for gpu in facts.nvidia.gpus:
        if gpu.name and not gpu.compute_capability:
            gpu.compute_capability = tables.capability_of(gpu.name)
    facts.source = "+".join(reading.pieces) or "text"
    return reading


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
        "torch.dependents": bool(f.torch.dependents),
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
    try:
        return _diagnosed(text, tables, ignore, strict, notes)
    finally:
        forget_texts()


def _diagnosed(
    text: str, tables: Tables, ignore: Sequence[str], strict: bool, notes: Sequence[str]
) -> Report:
    from ..core import check

    reading = read_text(text, tables)
    reading.notes[:0] = list(notes)
    messages = match_messages(clean(text), tables, reading)
    observed = set(reading.observed)
    lacking = unstated(reading)
    missing = [label for section, label in KEY_FACTS if section not in observed]
    # the GPUs' links and the packages' own requirements are never in a pasted report: their
    # checks are listed as not run, and the reply does not ask every reporter for them
    missing += [
        DETAIL_LABELS[d]
        for d in lacking
        if DETAILS[d] in observed
        and d not in ("nvidia.links", "nvidia.topology", "torch.dependents")
    ]
    judged = observed | ({"text"} if messages else set())
    families = sorted({r.family for r in RULES.values()})
    have = with_details(judged, lacking)
    not_judged = []
    for fam in families:
        if fam in ("SMK", "REQ", "MSG", "SEL", "INT", "CMP", "COD"):  # no text holds these
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
        wish=_asked_of_the_installer(text, reading, messages),
        ignore=ignore,
        strict=strict,
        messages=messages,
        observed=observed,
        unstated=lacking,
        command="diagnose",
        diagnosis=_diagnosis(reading, pieces, observed, lacking, missing, not_judged, messages),
    )
    return _for_the_reporter(report, reading, lacking)


def _asked_of_the_installer(
    text: str, reading: Reading, messages: Sequence[Finding]
) -> Optional[str]:
    """The torch version an installer was asked for when it found no wheel ("torch==2.1.2+cu118"):
    the report's install plan keeps to it, so that the command under the finding installs what
    its fix says (the release asked for, in a build that exists there), not another release."""
    from . import no_wheel

    if not any(m.name in no_wheel.EXPLAINS for m in messages):
        return None
    version = no_wheel.asked(text, reading).version
    if not version:
        return None
    return f"=={version}"


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
    needs = command_needs(reading, lacking)
    if report.install is None or not needs:
        return report
    diagnosis = dict(report.diagnosis or {}, command_needs=needs)
    findings = tuple(f.but(command=None) if f.command else f for f in report.findings)
    return replace(report, install=None, findings=findings, diagnosis=diagnosis)


def explain(message: str, tables: Tables) -> Optional[Explanation]:
    """`envcheck explain "MESSAGE"`: what one message means, and the facts it carries."""
    reading = Reading(facts=Facts(source="message"))
    found = match_messages(clean(message), tables, reading)
    if not found:
        return None
    return Explanation(reading.facts, found, sorted(reading.observed))
