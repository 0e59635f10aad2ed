"""What ``@pytest.mark.envcheck(...)`` decides, kept apart from pytest's hooks
(envcheck.pytest_plugin) so that it is plain Python a test can call.

One :class:`MarkerJudge` lives in each pytest process (each xdist worker has its own): it
probes this machine at most once statically and once deeply (the deep probe only when a
marker needs torch's own answers: gpus, dtypes, backend), runs the core's judgement
(envcheck.core.script.judge, the one behind ``envcheck.require()``) once per distinct set of
keywords, and words the outcome as one line: the unmet requirement, the root cause it follows
from and the command or fix that ends it.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ._record import record
from ._text import one_line


class MarkerError(ValueError):
    """A marker that cannot be read (an unknown keyword, a bad value): the test's own bug,
    whatever the machine."""


@record(frozen=True)
class Outcome:
    """One marker's answer: ``met``, or the one-line ``reason`` it is not (or, with
    ``broken``, why envcheck could not tell: the test then runs unless strict)."""

    met: bool
    reason: str = ""
    broken: bool = False


def marker_source(args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """``@pytest.mark.envcheck(gpus=1, bf16=True)``: how the requirement is named in a reason."""
    given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"@pytest.mark.envcheck({given})"


class MarkerJudge:
    """Facts probed lazily and once; one judgement per distinct marker."""

    def __init__(self, markers: Sequence[Mapping[str, Any]] = ()) -> None:
        """``markers``: the keywords of every marker this process will judge, so that the
        machine is probed once, deeply if any of them needs torch's answers."""
        self._markers = list(markers)
        self._facts: Dict[bool, Any] = {}  # deep -> Facts
        self._outcomes: Dict[str, Outcome] = {}
        self._broken: Optional[str] = None
        self._any_deep: Optional[bool] = None
        self.probes = 0  # how many times this process probed the machine (tests read it)

    def judge(self, args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> Outcome:
        """The outcome of one marker. Raises MarkerError for a marker that cannot be read."""
        if args:
            from .requirements import CONFIG_KEYS

            raise MarkerError(
                f"{marker_source(args, kwargs)}: takes keywords only "
                f"({', '.join(CONFIG_KEYS)}), not {args!r}"
            )
        where = marker_source(args, kwargs)
        if where not in self._outcomes:
            self._outcomes[where] = self._judge(kwargs, where)
        return self._outcomes[where]

    def _judge(self, kwargs: Mapping[str, Any], where: str) -> Outcome:
        from ._toml import ConfigError
        from .core.script import judge, requirements_of

        try:
            req = requirements_of(kwargs, where)
        except ConfigError as exc:
            raise MarkerError(str(exc)) from None
        facts = self.facts(req.needs_deep or self.any_deep)
        if facts is None:
            return Outcome(False, f"envcheck could not check this machine: {self._broken}", True)
        try:
            unmet = judge(req, facts)
        except Exception as exc:  # a broken envcheck must not break the suite
            return Outcome(False, f"envcheck could not judge {where}: {_error(exc)}", True)
        return Outcome(True) if not unmet else Outcome(False, reason(unmet))

    @property
    def any_deep(self) -> bool:
        """Whether any marker of this process needs torch's answers: then the one probe is
        the deep one."""
        if self._any_deep is None:
            self._any_deep = self._needs_deep()
        return self._any_deep

    def _needs_deep(self) -> bool:
        from ._toml import ConfigError
        from .core.script import requirements_of

        for kwargs in self._markers:
            try:
                if requirements_of(kwargs, "marker").needs_deep:
                    return True
            except ConfigError:
                continue  # judged, and failed, when its own test runs
        return False

    def facts(self, deep: bool) -> Any:
        """This machine's Facts (deep ones serve a static question too); None when the
        probe failed (``broken`` says why)."""
        if deep in self._facts or True in self._facts:
            return self._facts.get(deep, self._facts.get(True))
        if self._broken is not None:
            return None
        try:
            from .probes import probe

            self.probes += 1
            # torch's facts from a child, even where the suite imported torch: asking it here
            # would initialise CUDA in pytest's own process (fatal to fork-based tests)
            self._facts[deep] = probe(deep=deep)
        except Exception as exc:  # OverrideError, TableError, or an envcheck bug
            self._broken = _error(exc)
            return None
        return self._facts[deep]

    @property
    def broken(self) -> Optional[str]:
        return self._broken

    def summary(self) -> str:
        """``envcheck: torch 2.13.0+cpu · Python 3.11.7 · no driver · no GPU · READY``: the
        machine as the markers saw it, for pytest's header."""
        facts = self.facts(self.any_deep)
        if facts is None:
            return f"envcheck: could not check this machine ({self._broken}): marked tests run"
        try:
            from .core import check
            from .report.findings_text import machine_line

            report = check(facts=facts, requirements=False)
            verdict = str(report.verdict)
            return f"envcheck: {machine_line(facts)} · {verdict} ({report.counts_text()})"
        except Exception as exc:
            return f"envcheck: could not check this machine ({_error(exc)})"


def reason(unmet: Tuple[Any, ...]) -> str:
    """The unmet requirements (root causes first, as judge() gives them) as one line:
    ``REQ004 0 GPU(s) here; 1 required by ... — because TRC001 torch 2.13.0+cpu is CPU-only,
    but this machine has an NVIDIA GPU — $ pip install ...``."""
    causes = {f.code: f for f in unmet if not f.code.startswith("REQ")}
    parts = []
    for f in unmet:
        if not f.code.startswith("REQ"):
            continue
        text = f"{f.code} {f.title}"
        cause = causes.get(f.caused_by or "")
        ending = cause or f
        if cause is not None:
            text += f" — because {cause.code} {cause.title}"
        if ending.command:
            text += f" — $ {ending.command}"
        elif ending.fix:
            text += f" — fix: {ending.fix}"
        parts.append(text)
    return one_line("; ".join(parts))


def _error(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}") if str(exc) else type(exc).__name__


__all__ = ["MarkerError", "MarkerJudge", "Outcome", "marker_source", "reason"]
