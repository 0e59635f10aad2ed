"""An install plan as text (`envcheck install`): what it installs and why, notes, what is
not verified, what changes against the installed torch, and the command; or why no torch
fits, with the ways out."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from ..install.reasons import Blocker
from .wrap import command_lines, command_width, terminal_width, wrap

if TYPE_CHECKING:
    from ..install import InstallPlan
    from ..install.index_query import IndexCheck
    from ..tables import Tables


def render_plan(plan: InstallPlan, command: Optional[str], latest: Optional[str] = None) -> str:
    """The plan in lines that fit the terminal (envcheck.report.wrap); the command is never
    broken inside an argument, and a long one is continued with `` \\``. ``latest``: what
    "latest" meant (:func:`latest_line`), said after the notes."""
    width = terminal_width()
    where = f"Python {plan.python} on {plan.platform}"
    out: List[str] = []
    if not plan.ok:
        # The machine, not only the Python: the conflict may be the driver or the board.
        fits = "is known to fit" if plan.blocker is Blocker.UNKNOWN else "fits"
        out += wrap(f"No torch {fits} this machine ({where}):", width, rest="  ")
        out += [x for c in plan.conflicts for x in wrap(c, width, first="  - ")]
        if plan.ways_out:
            out.append("Ways out:")
            out += [x for w in plan.ways_out for x in wrap(w, width, first="  - ")]
        return "\n".join(out)
    out += wrap(f"torch {plan.installs} for {where}", width, rest="  ")
    out += [x for r in plan.reasons for x in wrap(r, width, first="  ", rest="    ")]
    out += [x for n in plan.notes for x in wrap(n, width, first="  note: ", rest="        ")]
    out += wrap(latest, width, first="  ", rest="    ") if latest else []
    out += [
        x for u in plan.unverified for x in wrap(u, width, first="  not verified: ", rest="    ")
    ]
    if plan.changes:
        out += wrap("what changes against the installed torch:", width, first="  ", rest="    ")
        out += [x for c in plan.changes for x in wrap(c, width, first="    - ")]
    out.append("")
    out += command_lines(command or "", command_width(width), first="", rest="")
    return "\n".join(out)


def latest_line(plan: InstallPlan, tables: Tables) -> Optional[str]:
    """For a wish of "latest" (no torch version asked): what latest means, the newest
    release in the tables as of their date, since newer ones may exist. None otherwise."""
    if not plan.ok or plan.wish.torch != "latest":
        return None
    table = tables.files.get("torch_releases")
    as_of = f" (as of {table.as_of})" if table is not None else ""
    return (
        f"latest: torch {tables.newest_release.minor} is the newest release in these "
        f"tables{as_of}; newer releases may exist: envcheck tables update"
    )


def index_check_lines(check: IndexCheck) -> List[str]:
    """`install --online`: one line per pin (its wheel, or NO wheel), per release the
    index has and the tables lack, and per index that did not answer."""
    where = ", ".join(check.asked)
    target = f"cp{check.python.replace('.', '')}"
    missing = {w.pin for w in check.missing}
    silent = {u.url for u in check.unavailable}
    answered = [url for url in check.asked if url not in silent]
    out: List[str] = []
    for w in check.wheels:
        if w.found is not None:
            out.append(f"index check ({w.index}): {w.pin} has a wheel for {w.found}")
        elif w.pin in missing:
            on = "that index" if len(check.asked) == 1 else "those indexes"
            out.append(
                f"index check ({where}): NO wheel of {w.pin} for {target} on "
                f"{check.platform} on {on} ({w.detail})"
            )
        elif answered:  # one index silent: the wheel may be there, not said to be missing
            out.append(
                f"index check ({', '.join(answered)}): no wheel of {w.pin} for {target} on "
                f"{check.platform} on the indexes that answered ({w.detail})"
            )
    for name, versions, newest in check.unknown_releases:
        verb = "is" if len(versions) == 1 else "are"
        out.append(
            f"{name} {', '.join(versions)} {verb} on the index but not in these tables "
            f"(newest known: {newest}): run `envcheck tables update`"
        )
    out += [f"index check skipped: {u.url}: {u.reason}" for u in check.unavailable]
    if check.skipped:
        out.append(f"index check skipped: {check.skipped}")
    return out
