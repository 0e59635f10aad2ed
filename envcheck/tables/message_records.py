"""What the tables know of the messages users paste: pattern, meaning, fix, and the cases in
which other facts of the same text change the cause."""

from __future__ import annotations

import re
from typing import Callable, Iterator, Mapping, Optional, Sequence, Tuple, Union, overload

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


class MessageCatalogue(Sequence[MessageRule]):
    """The message families, read and compiled when first asked for.

    Compiling the catalogue's few hundred patterns is most of what loading the tables costs
    (about 100 ms), and only ``diagnose``, ``explain`` and a report that quotes a pasted
    message use it: ``check``, ``install`` and the healthcheck never pay for it. Only the
    built-in catalogue is read this way (the test suite validates it); a catalogue in a folder
    the user gives is read, and refused if it does not validate, when the tables load."""

    def __init__(self, read: Callable[[], Tuple[MessageRule, ...]]) -> None:
        self._read: Optional[Callable[[], Tuple[MessageRule, ...]]] = read
        self._rules: Tuple[MessageRule, ...] = ()

    def _loaded(self) -> Tuple[MessageRule, ...]:
        if self._read is not None:
            self._rules, self._read = self._read(), None
        return self._rules

    @overload
    def __getitem__(self, index: int) -> MessageRule: ...
    @overload
    def __getitem__(self, index: slice) -> Tuple[MessageRule, ...]: ...
    def __getitem__(self, index: Union[int, slice]) -> Union[MessageRule, Tuple[MessageRule, ...]]:
        return self._loaded()[index]

    def __len__(self) -> int:
        return len(self._loaded())

    def __iter__(self) -> Iterator[MessageRule]:
        return iter(self._loaded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (MessageCatalogue, tuple)):
            return self._loaded() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._loaded())

    def __repr__(self) -> str:
        state = "not read yet" if self._read is not None else f"{len(self._rules)} families"
        return f"MessageCatalogue({state})"
