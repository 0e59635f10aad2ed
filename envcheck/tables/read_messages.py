"""messages.json: what known error messages mean, with the facts that decide between cases."""

from __future__ import annotations

import re
from typing import Any, Dict, Tuple

from ..values import Severity
from .message_records import Wording
from .model import (
    MessageCase,
    MessageRule,
)
from .reader import Reader, TableError

# --------------------------------------------------------------------------- messages

MESSAGE_FACTS = (
    "gpu_capability",  # "sm_120" / "12.0" / "120": a GPU of that capability is here
    "gpu_name",  # a GPU's name, as the message prints it
    "arch_list",  # the architectures the build carries ("sm_50 sm_60 sm_70")
    "cuda_driver_version",  # the CUDA the driver supports: 12020 or 12.2
    "nvcc_version",
    "torch_cuda",
    "torch_version",
    "companion_cuda",  # the CUDA a companion (torchvision) was built with
    "python_version",
    "package",  # the package whose file failed (torchvision, torchaudio, an extension)
    "nvml_error",
    "torch_variant",
    "os",  # Linux, Windows, Darwin: the message exists only there
)


# The conditions a message's case may put on the other facts of the text (evaluated by
# envcheck.diagnose.messages.case_of).
MESSAGE_CONDITIONS = (
    "os",  # Linux | Windows | Darwin
    "driver",  # stated | absent: the text gives a driver version or the CUDA it supports
    "gpu_capability_at_least",  # "10.0": some GPU of at least this compute capability
    "gpu_capability_below",  # "7.0": some GPU below it
    "wsl",  # "any": the text shows Windows Subsystem for Linux
)


def read_messages(
    data: Dict[str, Any], file: str, compile_now: bool = True
) -> Tuple[MessageRule, ...]:
    """The catalogue's message families; each wording compiled now (a bad one refused), or
    with ``compile_now`` False (a built-in file, which the test suite compiled) when the
    engine is first asked to match it (:class:`Wording`)."""
    sources = data.get("sources")
    if not isinstance(sources, dict):
        raise TableError(f"{file}: 'sources' must map source keys to references")
    r = Reader(file, sources)
    r.strings(sources, "sources")
    out = []
    seen = set()
    for i, raw in enumerate(r.get(data, "messages", "document", list)):
        where = f"messages[{i}]"
        ident = r.get(raw, "id", where, str)
        where = f"{where} ({ident})"
        if ident in seen:
            raise r.fail(where, "id is listed twice")
        seen.add(ident)
        out.append(_message(r, raw, where, ident, compile_now))
    for rule in out:
        unknown = [x for x in rule.replaces if x not in seen]
        if unknown:
            raise r.fail(f"messages ({rule.id}).replaces", f"no message {unknown[0]!r}")
    return tuple(out)


def _message(r: Reader, raw: Any, where: str, ident: str, now: bool) -> MessageRule:
    pattern = _pattern(r, r.get(raw, "pattern", where, str), f"{where}.pattern", now)
    lang = r.get(raw, "lang", where, str, optional=True) or "en"
    more, langs = _wordings(r, raw, where, now)
    extracts = r.strings(r.get(raw, "extracts", where, dict), f"{where}.extracts")
    for fact in extracts:
        if fact not in MESSAGE_FACTS:
            raise r.fail(f"{where}.extracts", f"{fact!r} is not one of {', '.join(MESSAGE_FACTS)}")
    examples = r.get(raw, "examples", where, list, optional=True) or []
    replaces = r.get(raw, "replaces", where, list, optional=True) or []
    follows = r.get(raw, "follows", where, list, optional=True) or []
    for name, items in (("examples", examples), ("replaces", replaces), ("follows", follows)):
        if not all(isinstance(x, str) and x for x in items):
            raise r.fail(f"{where}.{name}", "expected a list of strings")
    install = r.get(raw, "install", where, bool, optional=True) or False
    cases = _cases(r, raw, where)
    severity = r.get(raw, "severity", where, str, optional=True) or "error"
    if severity not in {s.value for s in Severity}:
        raise r.fail(f"{where}.severity", f"{severity!r} is not error, warning or info")
    prov = r.provenance(raw, where, ["id", "pattern", "title", "cause", "fix", "extracts"])
    return MessageRule(
        id=ident,
        pattern=pattern,
        title=r.get(raw, "title", where, str),
        cause=r.get(raw, "cause", where, str),
        fix=r.get(raw, "fix", where, str),
        extracts=dict(extracts),
        sources=prov.sources,
        examples=tuple(examples),
        replaces=tuple(replaces),
        follows=tuple(follows),
        install=install,
        severity=severity,
        cases=cases,
        # one pattern may serve several wordings (locales of one alternation): tried once
        patterns=tuple({p.pattern: p for p in (pattern, *more)}.values()),
        langs=tuple(dict.fromkeys((lang, *langs))),
    )


def _wordings(
    r: Reader, raw: Any, where: str, now: bool
) -> Tuple[Tuple[Wording, ...], Tuple[str, ...]]:
    """The family's other wordings (another library's, an older version's, a translated
    locale's): each a pattern, its language, a real example and the thread it was seen in."""
    patterns, langs = [], []
    for j, wording in enumerate(r.get(raw, "wordings", where, list, optional=True) or []):
        at = f"{where}.wordings[{j}]"
        patterns.append(_pattern(r, r.get(wording, "pattern", at, str), f"{at}.pattern", now))
        lang = r.get(wording, "lang", at, str)
        if not _LANG.fullmatch(lang):
            raise r.fail(f"{at}.lang", f"{lang!r} is not a language code (en, zh, de, pt-BR)")
        langs.append(lang)
        r.get(wording, "example", at, str)
        source = r.get(wording, "source", at, str)
        if source not in r.sources and "://" not in source:
            raise r.fail(f"{at}.source", f"{source!r} is neither a known key nor a reference")
    return tuple(patterns), tuple(langs)


_LANG = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?")


def _pattern(r: Reader, text: str, where: str, now: bool) -> Wording:
    if not now:
        return Wording(text)
    try:
        return Wording(text, re.compile(text))
    except (re.error, OverflowError) as exc:
        raise r.fail(where, f"not a regular expression: {exc}") from None
    except RecursionError:
        raise r.fail(where, "not a regular expression: nested too deeply") from None


def _cases(r: Reader, raw: Any, where: str) -> Tuple[MessageCase, ...]:
    """The message's cases: a cause and fix that replace the general ones when the text's
    facts meet every condition."""
    cases = []
    for j, case in enumerate(r.get(raw, "cases", where, list, optional=True) or []):
        at = f"{where}.cases[{j}]"
        if not isinstance(case, dict):
            raise r.fail(at, "expected an object")
        when = r.strings(r.get(case, "when", at, dict), f"{at}.when")
        unknown = [k for k in when if k not in MESSAGE_CONDITIONS]
        if unknown or not when:
            raise r.fail(f"{at}.when", f"conditions are {', '.join(MESSAGE_CONDITIONS)}")
        cases.append(
            MessageCase(dict(when), r.get(case, "cause", at, str), r.get(case, "fix", at, str))
        )
    return tuple(cases)
