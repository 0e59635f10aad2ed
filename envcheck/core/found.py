"""The findings that come from outside the checks, gathered once per run by the core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Set, Tuple, Union

from .._record import field, record
from ..facts import Facts
from ..findings import Finding
from .smoke import run_smoke, smoke_findings, with_expected

if TYPE_CHECKING:
    from ..requirements import Requirements
    from ..scan import ScanResult
    from ..smoke.runner import SmokeResult
    from ..tables import Tables


@record
class Found:
    """The findings that come from outside the checks: unmet requirements, smoke results (and
    the results themselves, with the busbw their links allow), pasted messages and the code
    scan's uses."""

    available: Set[str]  # the sections the rules may use, with those these fill
    findings: List[Finding] = field(default_factory=list)
    results: Tuple[SmokeResult, ...] = ()

    @classmethod
    def gather(
        cls,
        facts: Facts,
        tables: Tables,
        req: Optional[Requirements],
        available: Set[str],
        smoke: Union[bool, Sequence[SmokeResult]],
        smoke_timeout: float,
        on_smoke: Optional[Callable[..., None]],
        messages: Sequence[Finding],
    ) -> Found:
        """Evaluate the requirements, run (or join) the smoke tests and add the pasted
        messages; ``available`` gains the sections they fill."""
        from ..requirements import evaluate

        found = cls(available)
        if req is not None:
            available.add("requirements")
            found.findings += evaluate(req, facts)
        wanted_smoke = list(req.smoke) if req is not None else []
        results: Tuple[SmokeResult, ...] = ()
        if smoke is not True and smoke:
            results = tuple(smoke)  # results already run (a test, a front end that ran them)
        elif smoke is True or wanted_smoke:
            results = tuple(run_smoke(facts, smoke_timeout, wanted_smoke, on_smoke))
        if results:
            available.add("smoke")
            found.results = tuple(with_expected(r, facts, tables) for r in results)
            found.findings += smoke_findings(found.results)
        if messages:
            available.add("text")
            found.findings += list(messages)
        return found

    def add_code(self, code: Union[str, ScanResult, None], facts: Facts, tables: Tables) -> None:
        """The code scan's uses as findings (``code``: a folder to scan against the torch
        of ``facts``, or a scan already run); ``available`` gains the "code" stage."""
        if code is None:
            return
        from ..checks.code import code_findings, scan_for
        from ..tables.origin import TablesKind

        if isinstance(code, str):
            folder = tables.origin.folder if tables.origin.kind is TablesKind.FOLDER else None
            code = scan_for(facts, code, str(folder) if folder else None)
        self.available.add("code")
        self.findings += code_findings(code)


__all__ = ["Found"]
