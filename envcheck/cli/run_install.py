"""`envcheck install --run`: run the plan's pip or uv command (an argument list, no shell)
and verify what it installed, by probing the interpreter again against the plan. The exit
is envcheck.verdict's: a failed install or a mismatch is NOT_READY."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Dict, List, Optional

import click

from .. import exitcodes
from ..verdict import decide
from .options import probe_facts

if TYPE_CHECKING:
    from ..facts import Facts
    from ..findings import Finding
    from ..install import InstallPlan
    from ..tables import Tables


def run_install(plan: InstallPlan, manager: str, facts: Facts, tables: Tables) -> int:
    """Run the plan's pip or uv command (an argument list, no shell), then probe the
    interpreter again: success only when what is installed is what the plan said."""
    import shutil
    import subprocess

    from ..install import plan_argv

    python = facts.python.executable or sys.executable
    if facts.python.externally_managed:
        click.echo(
            f"{python} is externally managed (PEP 668): pip refuses to install into it. Make a "
            f"virtual environment first (`{python} -m venv .venv`) and run envcheck with "
            "--python .venv/bin/python",
            err=True,
        )
        return exitcodes.USAGE
    argv = plan_argv(plan, manager, tables.uv_torch_backends, python=python)
    if manager == "uv":
        uv = shutil.which("uv")
        if uv is None:
            click.echo("uv is not on PATH; use --manager pip", err=True)
            return exitcodes.USAGE
        argv[0] = uv
    click.echo("$ " + " ".join(argv))
    result = subprocess.run(argv, check=False)  # an argument list: no shell
    if result.returncode != 0:
        click.echo(f"the install failed (exit {result.returncode})", err=True)
        return decide(failures=[result.returncode]).exit_code
    after = probe_facts(deep=False, python=python)
    wrong = installed_mismatches(plan, after)
    if wrong:
        click.echo(f"{manager} succeeded, but this is not what the plan said:", err=True)
        for line in wrong:
            click.echo(f"  - {line}", err=True)
    else:
        click.echo(
            f"installed torch {plan.installs} (checked: "
            + ", ".join(f"{p.name} {p.version}" for p in plan.packages)
            + ")"
        )
    stack = stack_findings(after, tables)
    for finding in stack:
        click.echo(f"  - {finding.code} ({finding.severity.value}): {finding.title}", err=True)
    if not stack:
        click.echo("the installed packages check out on the new environment (PKG and INS checks)")
    return decide(stack, failures=wrong).exit_code


def stack_findings(facts: Facts, tables: Tables) -> List[Finding]:
    """The whole stack checked again on the environment the install left: the same checks
    as `envcheck check` (duplicate installs, companions, runtime wheels, pins, builds, NumPy,
    CUDA majors), so a package the new torch broke is said now, not at its first import."""
    from ..checks import run_checks

    return [f for f in run_checks(facts, tables) if f.code[:3] in ("PKG", "INS")]


def installed_mismatches(plan: InstallPlan, facts: Facts) -> List[str]:
    """What the interpreter has that differs from the plan (versions and the torch build)."""
    from packaging.version import Version

    from ..compat import torch_variant

    have: Dict[str, Optional[str]] = {p.name: p.version for p in facts.torch.companions}
    if facts.torch.installed:
        have["torch"] = facts.torch.version
    wrong: List[str] = []
    for p in plan.packages:
        got = have.get(p.name)
        try:
            same = got is not None and Version(Version(got).base_version) == Version(p.version)
        except ValueError:  # InvalidVersion, or a number of 4300+ digits
            same = False
        if not same:
            wrong.append(f"{p.name}: planned {p.version}, installed {got or 'nothing'}")
    built = torch_variant(facts)
    if facts.torch.installed and built is not None and built != plan.variant:
        wrong.append(
            f"torch build: planned {plan.variant}, installed {facts.torch.version} ({built})"
        )
    return wrong


__all__ = ["installed_mismatches", "run_install", "stack_findings"]
