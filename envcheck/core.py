"""The core: ``envcheck.check(...) -> Report``, the one place every front end goes through.

``envcheck check``, ``envcheck diagnose``, ``envcheck.require()`` and ``envcheck
healthcheck --deep`` all call :func:`check`. It runs the checks, the project's
requirements, the smoke tests and the pasted messages into one list of findings;
applies the user's selection once (by code or name, for every family; an unknown
code is itself a finding); groups the findings that follow from another under it
(one root cause, one error); decides the install advice once, from the one
resolver; and decides the verdict once. The result is a frozen :class:`Report`
that formats render without judging anything.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
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
    Tuple,
    Union,
)

from .facts import Facts
from .findings import Finding, sort_key
from .rules import NOT_VERIFIED, RULES, follows, lookup, not_judged, with_details
from .values import Severity

if TYPE_CHECKING:  # without importing these at run time: the static check stays fast
    from .compat import TorchLabel
    from .install import InstallPlan
    from .install.grid import CompatGrid
    from .requirements import Requirements
    from .smoke.runner import SmokeResult
    from .tables import Tables
    from .tables.model import LinkTable

# Every live probe fills these sections; the deep probe adds torch_runtime.
LIVE_SECTIONS = frozenset({"system", "python", "nvidia", "amd", "torch", "toolkit"})


class Verdict(str, enum.Enum):
    READY = "ready"
    NOT_READY = "not ready"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Advice:
    """The one install plan of a report, rendered for one manager."""

    plan: InstallPlan
    manager: str
    command: Optional[str]  # None when nothing fits (the plan says why)
    argv: Tuple[str, ...]  # the install command as an argument list (pip and uv)
    fixes: Tuple[str, ...]  # the codes of the findings it fixes
    # every command to run, in order (a venv first for a PEP 668 interpreter); ``command``
    # is these joined as a shell would
    steps: Tuple[Tuple[str, ...], ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {
            "command": self.command,
            "argv": list(self.argv),
            "steps": [list(step) for step in self.steps],
            "manager": self.manager,
            "fixes": list(self.fixes),
            "reason": self.plan.reasons[0] if self.plan.reasons else None,
            "install_args": self.plan.wish.cli_args,
            "plan": self.plan.to_dict(),
        }


@dataclass(frozen=True)
class NotRun:
    code: str
    why: str


@dataclass(frozen=True)
class Report:
    """Everything one run decided. Formats render it; nothing here is recomputed there."""

    command: str  # "check" or "diagnose"
    facts: Facts
    findings: Tuple[Finding, ...]  # sorted; selection applied; follow-ons carry caused_by
    verdict: Verdict
    strict: bool
    tables_as_of: str
    tables: Mapping[str, Mapping[str, Any]]  # name -> as_of, path, builtin
    install: Optional[Advice] = None
    smoke: Tuple[SmokeResult, ...] = ()
    requirements: Optional[str] = None  # the file the project's requirements came from
    ignored: Tuple[str, ...] = ()  # the codes the selection dropped
    # The findings that were there and were dropped by the selection, one code per finding:
    # the verdict says them ("(1 ignored: GPU007)"), so a READY never hides what was ignored.
    ignored_findings: Tuple[str, ...] = ()
    not_run: Tuple[NotRun, ...] = ()  # rules not judged, and why
    diagnosis: Optional[Mapping[str, Any]] = None  # diagnose: what was read from the text
    # check(grid=True): torch releases x variants on this machine (install.grid); the HTML
    # report draws it. None when not asked for (it plans ~50 builds: 30-70 ms).
    grid: Optional[CompatGrid] = None
    # links.json, for the renderers' names of what the facts measured (PCIe 16 GT/s = Gen4)
    links: Optional[LinkTable] = None
    # torch's labelled files beside its plain metadata: one install or two (compat.torch_label,
    # the decision INS002 makes), for the renderers' facts
    torch_label: Optional[TorchLabel] = None

    @property
    def ready(self) -> bool:
        return self.verdict is Verdict.READY

    @property
    def unverified(self) -> Tuple[str, ...]:
        """The codes of findings that say what is not known (ARC004): READY beside them is
        READY as far as the tables know, not verified."""
        return tuple(f.code for f in self.findings if f.code in NOT_VERIFIED)

    @property
    def roots(self) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.caused_by is None)

    def follow_ons(self, root: Finding) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.caused_by == root.code)

    def counts(self) -> Dict[str, int]:
        """Findings per severity, root causes only (follow-ons are counted apart)."""
        out = {s.value: sum(1 for f in self.roots if f.severity is s) for s in Severity}
        out["follow_on"] = len(self.findings) - len(self.roots)
        return out

    def counts_text(self) -> str:
        """ "1 error, 2 warnings, 0 infos (+1 that follow from them) (1 ignored: GPU007)": every
        format says it so."""
        counts = self.counts()
        text = ", ".join(
            f"{counts[s.value]} {s.value}{'' if counts[s.value] == 1 else 's'}" for s in Severity
        )
        if counts["follow_on"]:
            text += f" (+{counts['follow_on']} that follow from them)"
        if self.ignored_findings:
            codes = ", ".join(sorted(set(self.ignored_findings)))
            text += f" ({len(self.ignored_findings)} ignored: {codes})"
        return text

    @property
    def exit_code(self) -> int:
        from . import exitcodes

        return exitcodes.OK if self.ready else exitcodes.NOT_READY


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
) -> Report:
    """Check a machine (this one, or ``facts`` from elsewhere) and decide everything once.

    requirements: None finds [tool.envcheck] from the current folder (or ``config``);
    False uses none; a Requirements value is used as given.
    smoke: True runs the suite (so does a project's ``smoke`` list); a sequence of
    results joins results already run.
    python, chosen_because: the interpreter to describe (default: this one) and why
    (the console script's choice, envcheck.target). progress: show the waits on a
    terminal's stderr.
    observed: the Facts sections known (a pasted report); rules needing others are
    not judged. Default: everything a live probe fills, torch_runtime when ``deep``.
    unstated: details of those sections the report lacks (rules.DETAILS): the rules
    that need them are not judged either.
    grid: also judge the newest torch releases in every variant here (Report.grid).
    Raises ConfigError (bad requirements), OverrideError / InterpreterError (a bad
    override or ``python``) and TableError (unreadable tables).
    """
    from .checks import Planned, run_checks
    from .compat import torch_label
    from .requirements import evaluate, load_requirements

    if tables is None:
        from .tables import load_tables

        tables = load_tables()
    req: Optional[Requirements]
    if requirements is None:
        req = load_requirements(config)
    elif requirements is False:
        req = None
    else:
        req = requirements  # type: ignore[assignment]
    live = facts is None
    if facts is None:
        from .probes import probe

        facts = probe(
            deep=deep,
            timeout=timeout,
            python=python,
            show_ids=show_ids,
            chosen_because=chosen_because,
            progress=progress,
        )
    if observed is None and facts.nvidia.gpus and all(g.pcie is None for g in facts.nvidia.gpus):
        unstated = [*unstated, "nvidia.links"]  # no sysfs here (not Linux, a bare container)
    pairs_known = any(p.path or p.p2p_read for p in facts.nvidia.pairs)
    if observed is None and len(facts.nvidia.gpus) >= 2 and not pairs_known:
        unstated = [*unstated, "nvidia.topology"]  # NVML did not answer for the pairs
    available = set(with_details(LIVE_SECTIONS if observed is None else observed, unstated))
    if observed is None and (deep or not live) and facts.torch_runtime.status != "not_run":
        available.add("torch_runtime")

    # The one install plan of this report, resolved before the checks: every fix that names a
    # torch build or a CUDA version explains this plan, and the command under them renders it.
    plan = _plan(facts, tables, req, manager)
    found: List[Finding] = []
    if req is not None:
        available.add("requirements")
        found += evaluate(req, facts)
    results: Tuple[SmokeResult, ...] = ()
    wanted_smoke = list(req.smoke) if req is not None else []
    if smoke is not True and smoke:
        results = tuple(smoke)  # results already run (a test, a front end that ran them)
    elif smoke is True or wanted_smoke:
        results = tuple(_run_smoke(facts, smoke_timeout, wanted_smoke, on_smoke))
    if results:
        available.add("smoke")
        results = tuple(with_expected(r, facts, tables) for r in results)
        found += smoke_findings(results)
    if messages:
        available.add("text")
        found += list(messages)

    skipped = not_judged(available)
    skipped_codes = {r.code for r in skipped}
    codes, unknown = selection(ignore)
    from_config, unknown_config = selection(req.ignore if req is not None else ())
    codes += [c for c in from_config if c not in codes]

    def judged(planned: Planned) -> Tuple[List[Finding], Tuple[str, ...]]:
        """The checks' findings with the others, the selection applied, follow-ons grouped;
        and the codes of the findings the selection dropped (one per finding)."""
        findings = list(run_checks(facts, tables, planned)) + found
        findings = [f for f in findings if f.code not in skipped_codes]
        dropped = tuple(f.code for f in findings if f.code in codes)
        findings = [f for f in findings if f.code not in codes]
        for names, where in ((unknown, "--ignore"), (unknown_config, req.source if req else "")):
            if names and "SEL001" not in codes:
                findings.append(
                    RULES["SEL001"](
                        f"Nothing to ignore by {', '.join(repr(u) for u in names)}: no such finding code",
                        [f"{where}: {', '.join(names)}"],
                        "Use a code or name from docs/checks.md (e.g. INS004 or no-virtual-environment).",
                    )
                )
        return _group(findings, {m.id: m.follows for m in tables.messages}), dropped

    findings, dropped = judged(Planned(plan))
    advice = _advice(plan, tables, findings, manager)
    if advice is None:
        # The report installs nothing after all: what must match torch is judged against the
        # torch that stays (the findings that decide the advice do not change).
        findings, dropped = judged(Planned(plan, installs=False))
    if advice is not None and advice.command:
        first = next(f for f in findings if f.code == advice.fixes[0] and f.caused_by is None)
        findings = [f.but(command=advice.command) if f is first else f for f in findings]
    findings.sort(key=lambda f: (*sort_key(f), f.title))
    bad = (Severity.ERROR, Severity.WARNING) if strict else (Severity.ERROR,)
    verdict = Verdict.NOT_READY if any(f.severity in bad for f in findings) else Verdict.READY
    why = {
        "torch_runtime": "needs the deep probe (run without --no-deep)",
        "smoke": "needs the smoke tests (--smoke)",
        "requirements": "needs project requirements ([tool.envcheck])",
        "text": "needs a pasted report",
        "nvidia.gpus": "needs the list of GPUs (not in the text)",
        "nvidia.driver": "needs the driver version (not in the text)",
        "system.machine": "needs the OS and its architecture (not in the text)",
        "nvidia.links": "needs the GPUs' PCIe links from Linux sysfs (not read here)",
        "nvidia.topology": "needs NVML's GPU topology and P2P status (not read here)",
    }
    not_run = tuple(
        NotRun(
            r.code,
            next((why[n] for n in sorted(r.needs - available) if n in why), None)
            or "needs " + ", ".join(sorted(r.needs - available)) + " (not in the facts)",
        )
        for r in skipped
    )
    return Report(
        command=command,
        facts=facts,
        findings=tuple(findings),
        verdict=verdict,
        strict=strict,
        tables_as_of=min(f.as_of for f in tables.files.values()),
        tables={
            name: {"as_of": t.as_of, "path": str(t.path), "builtin": t.builtin}
            for name, t in tables.files.items()
        },
        install=advice,
        smoke=results,
        requirements=req.source if req is not None else None,
        ignored=tuple(codes),
        ignored_findings=dropped,
        not_run=not_run,
        diagnosis=diagnosis,
        grid=_grid(facts, tables) if grid else None,
        links=tables.links,
        torch_label=torch_label(facts, tables),
    )


def _grid(facts: Facts, tables: Tables) -> CompatGrid:
    from .install.grid import compat_grid

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


def _plan(facts: Facts, tables: Tables, req: Optional[Requirements], manager: str) -> InstallPlan:
    """The report's one install plan: keep what is installed where it fits, else the least
    change (within the project's torch specifier, when it has one), for ``manager``."""
    from .install import installed_wish, resolve

    torch = str(req.torch) if req is not None and req.torch is not None else "latest"
    return resolve(facts, tables, installed_wish(facts, torch=torch, manager=manager))


def _advice(
    plan: InstallPlan,
    tables: Tables,
    findings: List[Finding],
    manager: str,
) -> Optional[Advice]:
    """The plan as the report's install advice, when a root finding is fixed by an install."""
    from .install import plan_argv, plan_steps, render

    installs = {m.id for m in tables.messages if m.install}
    fixes = [
        f
        for f in sorted(findings, key=sort_key)
        if RULES[f.code].install_fix or (f.code == "MSG001" and f.name in installs)
    ]
    roots = [f for f in fixes if f.caused_by is None]
    if not roots:  # they all follow from a cause no install fixes (SYS006: a container's GPUs)
        return None
    command = render(plan, manager, tables.uv_torch_backends) if plan.ok else None
    argv = tuple(plan_argv(plan, manager, tables.uv_torch_backends)) if plan.ok else ()
    steps = (
        tuple(map(tuple, plan_steps(plan, manager, tables.uv_torch_backends))) if plan.ok else ()
    )
    return Advice(plan, manager, command, argv, tuple(f.code for f in roots), steps)


def smoke_findings(results: Sequence[SmokeResult]) -> List[Finding]:
    """SMK001 for a failed test (SMK003 for torch.compile), SMK002 for one that hung, SMK004
    for an all_reduce well below what its links allow (``with_expected`` put that in)."""
    out = []
    for r in results:
        if r.status == "passed" and r.name == "all_reduce":
            out += _busbw_findings(r)
        if r.status == "failed" and r.name == "compile":
            out.append(
                RULES["SMK003"](
                    f"torch.compile failed on {r.device} in the smoke test",
                    [r.error or ""],
                    "The toolchain finding it follows from (a compiler, Python.h, libcuda.so, "
                    "Triton, a cache folder) names the cause; with none, the error above is "
                    'Inductor\'s own: `backend="aot_eager"` works around it while it is reported.',
                )
            )
        elif r.status == "failed":
            out.append(
                RULES["SMK001"](
                    f"smoke test {r.name} on {r.device} failed",
                    [r.error or ""],
                    "See the error; a kernel or library problem shows here first.",
                )
            )
        elif r.status == "timed_out":
            out.append(
                RULES["SMK002"](
                    f"smoke test {r.name} on {r.device} hung",
                    [r.error or ""],
                    "Try: " + "; ".join(r.hints),
                )
            )
    return out


# SMK004's threshold: NCCL's ring reaches about 75-90% of the link on a healthy machine
# (nccl-tests' published NVLink and PCIe figures), and about a third of it when P2P is off and
# it copies through host memory; half the link separates the two with room for noise.
BUSBW_WARN_FRACTION = 0.5
# Below this size latency, not the link, sets busbw: a sweep stopped earlier is not judged.
BUSBW_JUDGED_BYTES = 64 * 2**20


def with_expected(
    result: SmokeResult, facts: Optional[Facts], tables: Optional[Tables] = None
) -> SmokeResult:
    """An all_reduce result with the busbw its topology should allow: ``expected_busbw_gbps``
    and ``expected_basis``, or ``expected_unknown`` (why there is no figure) in its figures."""
    f = result.figures
    if result.name != "all_reduce" or facts is None or not f.get("backend"):
        return result
    from dataclasses import replace

    from .smoke.expected import expected_busbw

    try:
        table = tables.links if tables is not None else None
        exp = expected_busbw(facts, str(f["backend"]), int(f.get("world_size", 0)), table)
    except (ValueError, TypeError) as exc:  # a link table that does not validate: said
        exp_figures: Dict[str, Any] = {"expected_unknown": str(exc)}
    else:
        exp_figures = (
            {"expected_busbw_gbps": exp.busbw_gbps, "expected_basis": exp.basis}
            if exp.known
            else {"expected_unknown": exp.basis}
        )
    return replace(result, figures={**f, **exp_figures})


def _busbw_findings(r: SmokeResult) -> List[Finding]:
    f = r.figures
    expected, sizes = f.get("expected_busbw_gbps"), f.get("sizes") or []
    if not expected or not sizes or sizes[-1].get("bytes", 0) < BUSBW_JUDGED_BYTES:
        return []
    last = sizes[-1]
    measured = float(last["busbw_gbps"])
    if measured >= BUSBW_WARN_FRACTION * expected:
        return []
    return [
        RULES["SMK004"](
            f"all_reduce over {r.device} reached {measured:g} GB/s bus bandwidth at "
            f"{last['bytes'] / 2**20:g} MiB, {measured / expected:.0%} of the "
            f"{expected:g} GB/s its links allow",
            [
                f"expected {expected:g} GB/s: {f.get('expected_basis', '')}",
                f"measured busbw {measured:g} GB/s (algbw {last.get('algbw_gbps')} GB/s, "
                f"{last.get('time_us')} us) at {last['bytes']} bytes",
            ],
            "Likely causes: peer-to-peer disabled or blocked (PCIe ACS redirecting P2P through "
            "the root complex, an IOMMU translating it: `iommu=pt`, ACS off on the switches), "
            "a GPU link running below its width or speed (reseat the card, check the slot), or "
            "traffic crossing the host bridge or CPUs instead of a switch or NVLink. "
            "`nvidia-smi topo -m` and `nvidia-smi topo -p2p r` show the paths; rerun with "
            "NCCL_DEBUG=INFO to see the transport NCCL chose (P2P, SHM or NET).",
        )
    ]


@dataclass(frozen=True)
class SmokeTargets:
    """Where the smoke tests run, and, when the machine has GPUs they do not run on, why:
    a pass on the CPU says nothing about a GPU that is there (``envcheck smoke --strict``
    fails on it)."""

    devices: Tuple[str, ...]
    gpus_not_exercised: Optional[str] = None  # None: no GPU here, or every test uses them

    def passed(self, results: Sequence[SmokeResult], strict: bool = False) -> bool:
        """The smoke verdict: every test passed and, with ``strict``, the GPUs were used."""
        return not any(r.failed for r in results) and not (strict and self.gpus_not_exercised)


def smoke_targets(facts: Optional[Facts], timeout: float) -> SmokeTargets:
    """The CUDA devices torch sees (from the deep probe, run now if it has not), else the CPU
    with the reason the machine's GPUs (``facts``: NVML and KFD, no torch) are left out.

    The smoke tests run in envcheck's own interpreter, which has envcheck's worker."""
    rt = facts.torch_runtime if facts is not None else None
    if (
        rt is None
        or rt.status != "ok"
        or facts is None
        or facts.python.executable != sys.executable
    ):
        from .probes.torch_deep import probe_torch_deep

        rt = probe_torch_deep(sys.executable, timeout=timeout)
    if rt.status == "ok" and rt.cuda_available and rt.device_count:
        return SmokeTargets(tuple(f"cuda:{i}" for i in range(rt.device_count)))
    return SmokeTargets(("cpu",), _gpus_not_exercised(facts, rt))


def smoke_devices(facts: Optional[Facts], timeout: float) -> List[str]:
    """The devices the smoke tests run on (smoke_targets)."""
    return list(smoke_targets(facts, timeout).devices)


def _gpus_not_exercised(facts: Optional[Facts], rt: Any) -> Optional[str]:
    """Why the GPUs in ``facts`` are not tested when torch (``rt``, envcheck's interpreter)
    offers none to the smoke tests; None when there is no GPU to miss."""
    if facts is None:
        return None
    names = [g.name or "NVIDIA GPU" for g in facts.nvidia.gpus]
    names += [g.gfx or "AMD GPU" for g in facts.amd.gpus]
    if not names:
        return None
    gpus = f"{len(names)}x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    if rt.status != "ok":
        first = (rt.error or rt.status or "").splitlines()[0] if (rt.error or rt.status) else ""
        why = f"torch did not load ({first})"
    elif not rt.cuda and not rt.hip:
        why = f"torch {rt.version} is a CPU build"
    elif not rt.cuda_available:
        why = "torch.cuda.is_available() is False"
    else:
        why = "torch sees no GPU (device_count is 0)"
    return (
        f"the GPU here ({gpus}) was not exercised: {why}, so the tests ran on the CPU; "
        "`envcheck check` says what to install"
    )


def _run_smoke(
    facts: Facts, timeout: float, tests: Sequence[str], progress: Optional[Callable[..., None]]
) -> List[SmokeResult]:
    from .smoke.runner import DEFAULT_TESTS, run_suite

    chosen = tuple(tests) if tests else DEFAULT_TESTS
    devices = smoke_devices(facts, timeout)
    return run_suite(devices, timeout=timeout, progress=progress, tests=chosen)


__all__ = [
    "Advice",
    "NotRun",
    "Report",
    "SmokeTargets",
    "Verdict",
    "check",
    "selection",
    "smoke_findings",
    "smoke_targets",
]
