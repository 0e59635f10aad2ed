"""Recognised error messages: the catalogue's families matched against a pasted text, the
facts each message carries put into the reading, and the case that gives its meaning."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

from .._patterns import compile_on_use
from ..facts import GpuFacts, RuntimeStatus
from ..findings import Finding
from ..probes.nvidia import cuda_version_from_int
from ..rules import RULES
from ..tables import Tables
from ..tables.model import MessageCase, MessageRule
from ..values import Arch, ComputeCapability, Severity
from . import tailored
from .literals import Source, answered_ahead, required_literals
from .reading import Reading, cuda_of_local, key_facts, lowered, record_where
from .scanning import search

MESSAGE = RULES["MSG001"]


def match_messages(text: str, tables: Tables, reading: Reading) -> List[Finding]:
    """Recognised error messages as findings; the facts they carry go into reading.facts.
    A message that ``replaces`` another (the path or symbol names the cause: torchvision's
    ``_C.so`` rather than any "undefined symbol") hides it."""
    matched: List[Tuple[MessageRule, re.Match[str]]] = []
    hay = _Haystack(text)
    for rule in tables.messages:
        match = _first_wording(rule, hay)
        if match:
            matched.append((rule, match))
    hidden = {old for rule, _ in matched for old in rule.replaces}
    shown = [(rule, match) for rule, match in matched if rule.id not in hidden]
    for rule, match in shown:  # every message's facts first: a case may turn on another's
        before = key_facts(reading.facts)
        _apply(rule, match, reading)
        record_where(reading, before, f"message {rule.id}")
    cases = [case_of(rule, reading) for rule, _ in shown]
    catalogue = [(c.cause, c.fix) if c else (r.cause, r.fix) for (r, _), c in zip(shown, cases)]
    explained = tailored.explain_all(
        [(rule.id, match, said) for (rule, match), said in zip(shown, catalogue)],
        text,
        reading,
        tables,
    )
    findings = []
    for (rule, match), (cause, fix) in zip(shown, explained):
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


class _Haystack:
    """The text as the wordings are searched in: itself, and with every run of white space
    made one space (a message wrapped across lines by a terminal or an editor); its words;
    and which required literals it holds, each looked for once."""

    def __init__(self, text: str) -> None:
        words = text.split()  # str.split's white space is the \s of a str pattern
        self.text, self.flat = text, _flat(text, words)
        self.words: Dict[bool, Set[str]] = {False: set(words)}
        self.vocabulary: Dict[bool, str] = {}
        self.held: Dict[Tuple[str, bool], bool] = {}

    def holds(self, literal: str, fold: bool, lines: bool) -> bool:
        """Whether the text (a wording that names line structure) or the flat text holds
        the literal (lower-cased text when ``fold``).

        A literal whose only white space is single spaces is in the flat text when it is in
        the text, so the flat text alone answers. Its parts between spaces are then parts of
        the text's words: a part between two spaces a whole word, so the set of words rules
        it out, and the first and last parts in the text's distinct words (one string, a
        fraction of a long log's length), which alone answer for a literal of one part."""
        if any(c.isspace() for c in literal.replace(" ", "")) or "  " in literal:
            where = (self.text, self.flat) if lines else (self.flat,)
            return any(literal in (lowered(t) if fold else t) for t in where)
        key = (literal, fold)
        if key not in self.held:
            if fold not in self.words:
                self.words[fold] = {w.lower() for w in self.words[False]}
            words = self.words[fold]
            if fold not in self.vocabulary:
                self.vocabulary[fold] = "\n".join(words)
            parts = literal.split(" ")
            self.held[key] = (
                all(w in words for w in parts[1:-1])
                and all(p in self.vocabulary[fold] for p in (parts[0], parts[-1]) if p)
                and (len(parts) == 1 or literal in (lowered(self.flat) if fold else self.flat))
            )
        return self.held[key]


def _flat(text: str, words: List[str]) -> str:
    """The text with every run of white space made one space (what a regular expression
    substitution of runs of white space gives, in a
    third of its time)."""
    if not words:
        return " " if text else ""
    head = " " if text[0].isspace() else ""
    return head + " ".join(words) + (" " if text[-1].isspace() else "")


def _first_wording(rule: MessageRule, hay: _Haystack) -> Optional[re.Match[str]]:
    """The match of the family's first wording (in the catalogue's order) that the text
    holds, or else the text with every run of white space made one space.

    A wording whose required literal (literals.py) the text lacks is not searched. One that
    names no line structure (no newline, tab, anchor or run of spaces) matches the flat text
    wherever it matches the text, so it is searched there first, once: most wordings match
    neither, and searching them is the cost of diagnose."""
    text, flat = hay.text, hay.flat
    for wording in rule.patterns:
        lines = _needs_lines(wording)
        literals = required_literals(wording)
        fold = bool(wording.flags & re.IGNORECASE)
        # a match in the text holds the literal there, one in the flat text holds it there
        if literals is not None and not any(hay.holds(x, fold, lines) for x in literals):
            continue
        pattern = wording.compiled  # compiled here, the first time a text may hold it
        if lines:
            match = search(pattern, text) or search(pattern, flat)
        else:
            match = search(pattern, flat)
            match = (search(pattern, text) or match) if match else None
        if match:
            return match
    return None


_LINE_SYNTAX = compile_on_use(r"\\[ntr]|(?<!\[)\^|(?<!\\)\$|  |\\s\{[2-9]|\\s\\s| \{[2-9]|\\Z|\\A")
_CLASS = compile_on_use(r"\[(?:\\.|[^\]\\])*\]")


@answered_ahead
def _needs_lines(pattern: Source) -> bool:
    """Whether the wording names line structure, which the flat text has lost."""
    # a class such as [^\n] matches in the flat text whatever it matched in the text
    return bool(_LINE_SYNTAX.search(_CLASS.sub("", pattern.pattern)))


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


_DOTTED = compile_on_use(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?")
_TORCH = compile_on_use(r"\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]+\d*)?(?:\+[a-z0-9.]{1,20})?")


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
