"""The core: ``envcheck.check(...) -> Report``, the one place every front end goes through.

``envcheck check``, ``envcheck diagnose``, ``envcheck.require()`` and ``envcheck
healthcheck --deep`` all call :func:`check`. It runs the checks, the project's
requirements, the smoke tests and the pasted messages into one list of findings;
applies the user's selection once (by code or name, for every family; an unknown
code is itself a finding); groups the findings that follow from another under it
(one root cause, one error); decides the install advice once, from the one
resolver; and the verdict once (envcheck.verdict). The result is a frozen
:class:`~envcheck.core.report.Report` that formats render without judging anything.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from .._record import record
from ..facts import Facts
from ..findings import Finding, Rule, sort_key
from ..rules import RULES, follows, lookup, not_judged, with_details
from ..values import Severity
from ..verdict import decide
from .found import Found
from .report import Advice, NotRun, Report

if TYPE_CHECKING:  # without importing these at run time: the static check stays fast
    from ..checks._util import Planned, PlanOnce
    from ..compat import TorchLabel
    from ..install import InstallPlan
    from ..install.grid import CompatGrid
    from ..requirements import Requirements
    from ..scan import ScanResult
    from ..smoke.runner import SmokeResult
    from ..tables import Tables
    from ..tables.model import MessageRule

# Every live probe fills these sections; the deep probe adds torch_runtime.
LIVE_SECTIONS = frozenset({"system", "python", "nvidia", "amd", "torch", "toolkit"})

# Why a rule was not judged, by the first Facts section (or detail) it needs that is missing.
WHY_NOT_RUN = {
    "torch_runtime": "needs the deep probe (run without --no-deep)",
    "smoke": "needs the smoke tests (--smoke)",
    "requirements": "needs project requirements ([tool.envcheck])",
    "text": "needs a pasted report",
    "code": "needs the code scan (check --code)",
    "nvidia.gpus": "needs the list of GPUs (not in the text)",
    "nvidia.driver": "needs the driver version (not in the text)",
    "system.machine": "needs the OS and its architecture (not in the text)",
    "nvidia.links": "needs the GPUs' PCIe links from Linux sysfs (not read here)",
    "nvidia.topology": "needs NVML's GPU topology and P2P status (not read here)",
}


def selection(codes: Iterable[str]) -> Tuple[List[str], List[str]]:
    """(rule codes, unknown entries) of ``--ignore`` values: codes or names, any case,
    repeated or comma-separated."""
    known: List[str] = []
    unknown: List[str] = []
    for item in codes:
        for part in str(item).split(","):
            part = part.strip()
            if not part:
                continue
            rule = lookup(part)
            if rule is None:
                unknown.append(part)
            elif rule.code not in known:
                known.append(rule.code)
    return known, unknown


def check(
    *,
    facts: Optional[Facts] = None,
    tables: Optional[Tables] = None,
    deep: bool = True,
    timeout: float = 60.0,
    python: Optional[str] = None,
    chosen_because: Optional[str] = None,
    progress: bool = False,
    show_ids: bool = False,
    config: Optional[str] = None,
    requirements: Union[Requirements, bool, None] = None,
    ignore: Sequence[str] = (),
    strict: bool = False,
    smoke: Union[bool, Sequence[SmokeResult]] = False,
    smoke_timeout: float = 120.0,
    on_smoke: Optional[Callable[..., None]] = None,  # run_suite's progress callback
    messages: Sequence[Finding] = (),
    observed: Optional[Iterable[str]] = None,
    unstated: Iterable[str] = (),
    manager: str = "pip",
    command: str = "check",
    diagnosis: Optional[Mapping[str, Any]] = None,
    grid: bool = False,
    wish: Optional[str] = None,
    code: Union[str, ScanResult, None] = None,
) -> Report:
    """Check a machine (this one, or ``facts`` from elsewhere) and decide everything once.

    requirements: None finds [tool.envcheck] from the current folder (or ``config``); False
    uses none; a Requirements value is used as given. smoke: True runs the suite (so does a
    project's ``smoke`` list); a sequence of results joins results already run. python,
    chosen_because: the interpreter to describe (default: this one) and why (envcheck.target).
    progress: show the waits on a terminal's stderr. observed: the Facts sections known (a
    pasted report); rules needing others are not judged. Default: everything a live probe
    fills, torch_runtime when ``deep``. unstated: details of those sections the report lacks
    (rules.DETAILS): the rules that need them are not judged either. grid: also judge the
    newest torch releases in every variant here (Report.grid). wish: the torch specifier the
    install plan keeps to where the requirements give none (diagnose: the release an installer
    was asked for and found no wheel of). Raises ConfigError (bad
    requirements), OverrideError / InterpreterError (a bad override or ``python``) and
    TableError (unreadable tables).
    """
    tables = tables if tables is not None else _tables_in_effect()
    req = _requirements(requirements, config)
    live = facts is None
    if facts is None:
        facts = _probe(deep, timeout, python, show_ids, chosen_because, progress, tables)
    available = _available(facts, observed, unstated, deep or not live)
    # The report's one install plan (every fix naming a build explains it, the command renders
    # it), resolved when a check or the advice first asks: never where nothing needs installing.
    from ..checks._util import PlanOnce

    plan = PlanOnce(lambda: _plan(facts, tables, req, manager, wish))  # resolved if asked
    found = Found.gather(facts, tables, req, available, smoke, smoke_timeout, on_smoke, messages)
    found.add_code(code, facts, tables)
    chosen = _Selection.of(ignore, req)
    skipped = not_judged(available)
    judged = _judge_and_advise(facts, tables, plan, found, chosen, skipped, manager)
    return _report(command, facts, tables, req, found, chosen, judged, strict, diagnosis, grid)


def _tables_in_effect() -> Tables:
    """The tables of a call that names none: ENVCHECK_TABLES's folder, as on the command
    line, else the updated or built-in ones."""
    from ..tables.load import load_tables_of_env

    return load_tables_of_env()


def _probe(
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
    chosen_because: Optional[str],
    progress: bool,
    tables: Tables,
) -> Facts:
    """The live probe, keeping the packages these tables judge (their package_builds)."""
    from ..probes import probe

    return probe(
        deep=deep,
        timeout=timeout,
        python=python,
        show_ids=show_ids,
        chosen_because=chosen_because,
        progress=progress,
        tables=tables,
    )


def _report(
    command: str,
    facts: Facts,
    tables: Tables,
    req: Optional[Requirements],
    found: Found,
    chosen: _Selection,
    judged: _Judged,
    strict: bool,
    diagnosis: Optional[Mapping[str, Any]],
    grid: bool,
) -> Report:
    """The frozen Report of one run, with the verdict (envcheck.verdict) on its findings."""
    return Report(
        command=command,
        facts=facts,
        findings=tuple(judged.findings),
        verdict=decide(judged.findings, strict=strict),
        strict=strict,
        tables_as_of=min(f.as_of for f in tables.files.values()),
        tables_from=tables.origin.describe() if tables.origin.from_cache else None,
        tables={
            name: {"as_of": t.as_of, "path": str(t.path), "builtin": t.builtin}
            for name, t in tables.files.items()
        },
        install=judged.advice,
        smoke=found.results,
        requirements=req.source if req is not None else None,
        ignored=tuple(chosen.codes),
        ignored_findings=judged.dropped,
        not_run=_not_run(judged.skipped, found.available) + _unrecorded(facts, tables),
        diagnosis=diagnosis,
        grid=_grid(facts, tables) if grid else None,
        links=tables.links,
        torch_label=_torch_label(facts, tables),
    )


def _requirements(
    requirements: Union[Requirements, bool, None], config: Optional[str]
) -> Optional[Requirements]:
    """None finds [tool.envcheck] (or reads ``config``); False: none; else as given."""
    from ..requirements import load_requirements

    if requirements is None:
        return load_requirements(config)
    if requirements is False or requirements is True:
        return None
    return requirements


def _available(
    facts: Facts, observed: Optional[Iterable[str]], unstated: Iterable[str], runtime: bool
) -> Set[str]:
    """The Facts sections (and details) the rules may use: what a live probe fills, or what a
    pasted report ``observed``, less the details it left ``unstated``; torch_runtime when the
    deep probe ran (``runtime``: asked for live, or facts given from elsewhere)."""
    if observed is None and facts.nvidia.gpus and all(g.pcie is None for g in facts.nvidia.gpus):
        unstated = [*unstated, "nvidia.links"]  # no sysfs here (not Linux, a bare container)
    pairs_known = any(p.path or p.p2p_read for p in facts.nvidia.pairs)
    if observed is None and len(facts.nvidia.gpus) >= 2 and not pairs_known:
        unstated = [*unstated, "nvidia.topology"]  # NVML did not answer for the pairs
    available = set(with_details(LIVE_SECTIONS if observed is None else observed, unstated))
    if observed is None and runtime:
        available.add("torch_runtime")
    return available


@record(frozen=True)
class _Selection:
    """The user's selection: the codes to drop (``--ignore`` and the project's ``ignore``),
    and the entries that name no finding, with where each list came from."""

    codes: List[str]
    unknown: Tuple[Tuple[List[str], str], ...]

    @classmethod
    def of(cls, ignore: Sequence[str], req: Optional[Requirements]) -> _Selection:
        codes, unknown = selection(ignore)
        from_config, unknown_config = selection(req.ignore if req is not None else ())
        codes += [c for c in from_config if c not in codes]
        where = req.source if req is not None and req.source else ""
        return cls(codes, ((unknown, "--ignore"), (unknown_config, where)))

    def unknown_findings(self) -> List[Finding]:
        """SEL001 for each list of entries that name no finding (unless SEL001 is dropped)."""
        out = []
        for names, where in self.unknown:
            if names and "SEL001" not in self.codes:
                out.append(
                    RULES["SEL001"](
                        f"Nothing to ignore by {', '.join(repr(u) for u in names)}: no such finding code",
                        [f"{where}: {', '.join(names)}"],
                        "Use a code or name from docs/checks.md (e.g. INS004 or no-virtual-environment).",
                    )
                )
        return out


def _judged(
    facts: Facts,
    tables: Tables,
    planned: Planned,
    found: Found,
    chosen: _Selection,
    skipped: Sequence[Rule],
) -> Tuple[List[Finding], Tuple[str, ...]]:
    """The checks' findings with the others, the selection applied, follow-ons grouped;
    and the codes of the findings the selection dropped (one per finding)."""
    from .._clock import today
    from ..checks import run_checks
    from ..checks.tables_age import aged

    skipped_codes = {r.code for r in skipped}
    findings = list(run_checks(facts, tables, planned)) + aged(tables, today()) + found.findings
    findings = [f for f in findings if f.code not in skipped_codes]
    dropped = tuple(f.code for f in findings if f.code in chosen.codes)
    findings = [f for f in findings if f.code not in chosen.codes]
    findings += chosen.unknown_findings()
    return _group(
        findings, {i: m.follows for i, m in _messages_found(tables, findings).items()}
    ), dropped


def _messages_found(tables: Tables, findings: Sequence[Finding]) -> Dict[str, MessageRule]:
    """The catalogue's families of the pasted messages among the findings (MSG001), by id: a
    report that quotes no message never reads the catalogue (see tables.groups)."""
    names = {f.name for f in findings if f.code == "MSG001"}
    return {m.id: m for m in tables.messages if m.id in names} if names else {}


@record(frozen=True)
class _Judged:
    """The findings (sorted, the install command under the first one it fixes), the codes the
    selection dropped, the install advice, and the rules not judged."""

    findings: List[Finding]
    dropped: Tuple[str, ...]
    advice: Optional[Advice]
    skipped: Sequence[Rule]


def _judge_and_advise(
    facts: Facts,
    tables: Tables,
    plan: PlanOnce,
    found: Found,
    chosen: _Selection,
    skipped: Sequence[Rule],
    manager: str,
) -> _Judged:
    """Judge (the checks with the others, the selection applied), decide the install advice,
    and judge again against the torch that stays when nothing is installed after all."""
    from ..checks._util import Planned

    findings, dropped = _judged(facts, tables, Planned(plan), found, chosen, skipped)
    advice = _advice(plan, tables, findings, manager)
    if advice is None:
        # The report installs nothing after all: what must match torch is judged against the
        # torch that stays (the findings that decide the advice do not change).
        planned = Planned(plan, installs=False)
        findings, dropped = _judged(facts, tables, planned, found, chosen, skipped)
    if advice is not None and advice.command:
        first = next(f for f in findings if f.code == advice.fixes[0] and f.caused_by is None)
        findings = [f.but(command=advice.command) if f is first else f for f in findings]
    findings.sort(key=lambda f: (*sort_key(f), f.title))
    return _Judged(findings, dropped, advice, skipped)


def _not_run(skipped: Sequence[Rule], available: Set[str]) -> Tuple[NotRun, ...]:
    """Each rule not judged, with why: the first missing section WHY_NOT_RUN names."""
    return tuple(
        NotRun(
            r.code,
            next((WHY_NOT_RUN[n] for n in sorted(r.needs - available) if n in WHY_NOT_RUN), None)
            or "needs " + ", ".join(sorted(r.needs - available)) + " (not in the facts)",
        )
        for r in skipped
    )


def _unrecorded(facts: Facts, tables: Tables) -> Tuple[NotRun, ...]:
    """PKG007 and PKG009 not judged for a package that records no torch or CUDA it was built
    for (envcheck.cuda_needs.not_checkable)."""
    from ..cuda_needs import not_checkable

    return tuple(NotRun(code, why) for code, why in not_checkable(facts, tables))


def _torch_label(facts: Facts, tables: Tables) -> Optional[TorchLabel]:
    from ..compat import torch_label

    return torch_label(facts, tables)


def _grid(facts: Facts, tables: Tables) -> CompatGrid:
    from ..install.grid import compat_grid

    return compat_grid(facts, tables)


def _group(findings: List[Finding], messages: Mapping[str, Tuple[str, ...]]) -> List[Finding]:
    """Mark each finding that follows from another present one, and raise each root to the
    severity of what follows from it (a missing torch is an error once a required smoke
    test fails for it)."""
    present = {f.code for f in findings}
    cause: Dict[str, Optional[str]] = {}
    for f in findings:
        cause[f.code] = next((c for c in follows(f.code, f.name, messages) if c in present), None)

    def root_of(code: str) -> str:
        """The root cause a chain of follow-ons leads to (REQ001 -> TRC003 -> SYS006): a
        follow-on is shown under a root, never under another follow-on."""
        seen = {code}
        while cause.get(code) and cause[code] not in seen:
            code = cause[code]  # type: ignore[assignment]
            seen.add(code)
        return code

    marked = []
    for f in findings:
        root = next((c for c in follows(f.code, f.name, messages) if c in present), None)
        top = root_of(root) if root else None
        marked.append(f.but(caused_by=top if top != f.code else root) if root else f)
    worst: Dict[str, Severity] = {}
    for f in marked:
        if f.caused_by and f.severity.rank < worst.get(f.caused_by, Severity.INFO).rank:
            worst[f.caused_by] = f.severity
    return [
        f.but(severity=worst[f.code])
        if f.caused_by is None and f.code in worst and worst[f.code].rank < f.severity.rank
        else f
        for f in marked
    ]


def _plan(
    facts: Facts,
    tables: Tables,
    req: Optional[Requirements],
    manager: str,
    wish: Optional[str] = None,
) -> InstallPlan:
    """The report's one install plan: keep what is installed where it fits, else the least
    change (within the project's torch specifier, when it has one), for ``manager``. A
    ``wish`` is kept to where a build of it fits; where none does, the plan is the one
    without it (the finding that carried the wish says why it cannot be had)."""
    from ..install import installed_wish, resolve

    if wish is not None and (req is None or req.torch is None):
        kept = resolve(facts, tables, installed_wish(facts, torch=wish, manager=manager))
        if kept.ok:
            return kept
    torch = str(req.torch) if req is not None and req.torch is not None else "latest"
    return resolve(facts, tables, installed_wish(facts, torch=torch, manager=manager))


def _advice(
    once: PlanOnce,
    tables: Tables,
    findings: List[Finding],
    manager: str,
) -> Optional[Advice]:
    """The plan as the report's install advice, when a root finding is fixed by an install
    (only then is it resolved, unless a check asked for it first)."""

    installs = {i for i, m in _messages_found(tables, findings).items() if m.install}
    fixes = [
        f
        for f in sorted(findings, key=sort_key)
        if RULES[f.code].install_fix or (f.code == "MSG001" and f.name in installs)
    ]
    roots = [f for f in fixes if f.caused_by is None]
    if not roots:  # they all follow from a cause no install fixes (SYS006: a container's GPUs)
        return None
    from ..install import plan_argv, plan_steps, render

    plan = once()
    command = render(plan, manager, tables.uv_torch_backends) if plan.ok else None
    argv = tuple(plan_argv(plan, manager, tables.uv_torch_backends)) if plan.ok else ()
    steps = (
        tuple(map(tuple, plan_steps(plan, manager, tables.uv_torch_backends))) if plan.ok else ()
    )
    return Advice(plan, manager, command, argv, tuple(f.code for f in roots), steps)


__all__ = ["LIVE_SECTIONS", "check", "selection"]
