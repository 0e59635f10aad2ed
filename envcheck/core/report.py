"""The core's result: a frozen :class:`Report` of everything one run decided, and the install
:class:`Advice` in it. Formats render these; nothing here is recomputed there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from .._record import record
from ..facts import Facts
from ..findings import Finding
from ..rules import NOT_VERIFIED
from ..values import Severity
from ..verdict import Verdict

if TYPE_CHECKING:  # without importing these at run time: the static check stays fast
    from ..compat import TorchLabel
    from ..install import InstallPlan
    from ..install.grid import CompatGrid
    from ..smoke.runner import SmokeResult
    from ..tables.model import LinkTable


@record(frozen=True)
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


@record(frozen=True)
class NotRun:
    code: str
    why: str


@record(frozen=True)
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
    tables_from: Optional[str] = None  # updated tables in the cache: "updated ... from URL"
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
        return self.verdict.exit_code


__all__ = ["Advice", "NotRun", "Report", "Verdict"]
