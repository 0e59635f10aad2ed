"""What the tables know of the messages users paste: pattern, meaning, fix, and the cases in
which other facts of the same text change the cause."""

from __future__ import annotations

import re
from typing import Mapping, Tuple

from .._record import record


@record(frozen=True)
class MessageCase:
    """What a message means when other facts of the same text say so: the same words from a
    macOS machine, a Blackwell GPU or a host whose driver works mean another cause."""

    when: Mapping[str, str]  # condition -> value (envcheck.diagnose.CONDITIONS)
    cause: str
    fix: str


@record(frozen=True)
class MessageRule:
    """A family of messages users paste: one cause and one fix met in several wordings (other
    libraries, other versions of the message, locales where the OS translates it); its
    patterns, meaning, fix, and the facts it carries."""

    id: str
    pattern: re.Pattern[str]  # the first wording (``patterns[0]``)
    title: str
    cause: str
    fix: str
    extracts: Mapping[str, str]  # fact -> named group, or a literal value
    sources: Tuple[str, ...]
    examples: Tuple[str, ...] = ()  # real instances (from the threads in sources)
    replaces: Tuple[str, ...] = ()  # less specific messages this one overrides
    follows: Tuple[str, ...] = ()  # finding codes it is the symptom of, when present
    install: bool = False  # installing other torch packages fixes it (the install plan)
    severity: str = "error"  # "warning" for a message that says something may go wrong
    cases: Tuple[MessageCase, ...] = ()  # the first whose conditions hold gives cause and fix
    patterns: Tuple[re.Pattern[str], ...] = ()  # every distinct wording, ``pattern`` first
    langs: Tuple[str, ...] = ("en",)  # the languages its wordings are in ("en", "zh", "de")

    def __post_init__(self) -> None:
        # A rule built with one pattern (tests, older callers) is a family of one wording.
        if not self.patterns:
            object.__setattr__(self, "patterns", (self.pattern,))
