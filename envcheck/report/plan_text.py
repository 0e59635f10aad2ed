"""An install plan as text (`envcheck install`): what it installs and why, notes, what is
not verified, what changes against the installed torch, and the command; or why no torch
fits, with the ways out."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from .wrap import command_lines, command_width, terminal_width, wrap

if TYPE_CHECKING:
    from ..install import InstallPlan


def render_plan(plan: InstallPlan, command: Optional[str]) -> str:
    """The plan in lines that fit the terminal (envcheck.report.wrap); the command is never
    broken inside an argument, and a long one is continued with `` \\``."""
    width = terminal_width()
    where = f"Python {plan.python} on {plan.platform}"
    out: List[str] = []
    if not plan.ok:
        # The machine, not only the Python: the conflict may be the driver or the board.
        out += wrap(f"No torch fits this machine ({where}):", width, rest="  ")
        out += [x for c in plan.conflicts for x in wrap(c, width, first="  - ")]
        if plan.ways_out:
            out.append("Ways out:")
            out += [x for w in plan.ways_out for x in wrap(w, width, first="  - ")]
        return "\n".join(out)
    out += wrap(f"torch {plan.installs} for {where}", width, rest="  ")
    out += [x for r in plan.reasons for x in wrap(r, width, first="  ", rest="    ")]
    out += [x for n in plan.notes for x in wrap(n, width, first="  note: ", rest="        ")]
    out += [
        x for u in plan.unverified for x in wrap(u, width, first="  not verified: ", rest="    ")
    ]
    if plan.changes:
        out += wrap("what changes against the installed torch:", width, first="  ", rest="    ")
        out += [x for c in plan.changes for x in wrap(c, width, first="    - ")]
    out.append("")
    out += command_lines(command or "", command_width(width), first="", rest="")
    return "\n".join(out)
