"""`envcheck install`: the options as a Wish, the one resolver's plan for the machine meant
(probed, or described by the options), shown by envcheck.report.plan_text or as JSON; with
--run, the plan run and checked by envcheck.cli.run_install."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Tuple

import click

from .._clickstyle import CONTEXT
from ..tables.model import PLATFORMS
from ..verdict import Verdict, decide
from .options import load_tables, manager_option, probe_facts
from .run_install import run_install

if TYPE_CHECKING:
    from ..facts import Facts
    from ..install import InstallPlan, Wish
    from ..install.index_query import IndexCheck
    from ..tables import Tables


@click.command(context_settings=CONTEXT)
@click.option(
    "--torch",
    "torch_spec",
    default="latest",
    show_default=True,
    metavar="SPEC",
    help="latest, a minor (2.5), an exact version (2.5.1) or a specifier (>=2.4,<2.7).",
)
@click.option(
    "--variant",
    default="auto",
    show_default=True,
    metavar="VARIANT",
    help="auto, cpu, cuXYZ (cu128), rocmX.Y or xpu.",
)
@manager_option("the plan")
@click.option(
    "--with",
    "with_",
    metavar="PKGS",
    multiple=True,
    help="Companions to pin, e.g. torchvision,torchaudio (repeat, or separate with commas; "
    "default: those installed now; none: no companion).",
)
@click.option(
    "--keep",
    is_flag=True,
    help="Keep the installed torch (version, build, companions) and the packages that pin or "
    "were built for it working where a release fits, else change as little as fits: the plan "
    "`envcheck check` gives.",
)
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Plan for another interpreter (e.g. a project's .venv/bin/python): its Python "
    "version, platform and installed torch.",
)
@click.option(
    "--python-version",
    "python_version",
    metavar="X.Y",
    help="Plan for another machine's Python version (nothing of it is probed).",
)
@click.option(
    "--platform",
    metavar="PLATFORM",
    type=click.Choice(list(PLATFORMS)),
    help="Plan for another platform.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "--run",
    is_flag=True,
    help="Run the pip or uv command for the interpreter planned for (--python, else this "
    "one), then check what was installed.",
)
@click.option(
    "--online",
    is_flag=True,
    help="Ask the index the command installs from (pip's configured index for the default "
    "one) whether the planned wheels exist for this Python and platform, and which newer "
    "releases it has (--run does too). Without it nothing is fetched.",
)
@click.pass_context
def install(
    ctx: click.Context,
    torch_spec: str,
    variant: str,
    manager: str,
    with_: Tuple[str, ...],
    keep: bool,
    python: Optional[str],
    python_version: Optional[str],
    platform: Optional[str],
    as_json: bool,
    run: bool,
    online: bool,
) -> None:
    """Print the right install command for this machine (or another one). Installs nothing
    unless --run is given.

    Picks the newest torch that satisfies --torch and has a wheel for this Python and
    platform (with --keep: the installed one, or the nearest that fits), and the variant
    that fits the driver and every GPU. With --python-version, --platform and a --variant
    other than auto, nothing is probed.
    """
    from ..install import installed_wish, render, resolve

    python, python_version = _python_or_version(python, python_version)
    wish, tables = _wish(ctx, torch_spec, variant, manager, with_, python_version, platform)
    if run and manager not in ("pip", "uv"):
        raise click.UsageError("--run works with --manager pip or uv")
    facts = _facts_for(wish, keep, python)
    if run:
        _refuse_foreign(wish, facts)
    if keep:
        wish = installed_wish(
            facts,
            torch=wish.torch,
            variant=wish.variant,
            companions=wish.companions,
            python=wish.python,
            platform=wish.platform,
            manager=wish.manager,
        )
    plan = resolve(facts, tables, wish)
    command = render(plan, manager, tables.uv_torch_backends) if plan.ok else None
    ctx.exit(_answer(plan, manager, command, tables, facts, as_json, run, online))


def _answer(
    plan: InstallPlan,
    manager: str,
    command: Optional[str],
    tables: Tables,
    facts: Facts,
    as_json: bool,
    run: bool,
    online: bool,
) -> int:
    """Print the plan (with --online or --run, what the index says of it), run it with
    --run; the exit code. A planned wheel the index answered it lacks is not ready (and
    --run runs nothing); an index that did not answer changes no exit code."""
    from ..report.plan_text import index_check_lines, latest_line, render_plan

    check = _index_check(plan, tables, facts) if (online or run) and plan.ok else None
    failures: List[object] = [] if plan.ok else [plan]
    failures += list(check.missing) if check is not None else []
    fits = decide(failures=failures)
    lines = index_check_lines(check) if check is not None else []
    if as_json:
        _print_json(plan, manager, command, tables)
        for line in lines:  # stdout is the JSON document
            click.echo(line, err=True)
        return fits.exit_code
    click.echo(render_plan(plan, command, latest_line(plan, tables)))
    lines += _code_notes(plan, facts)
    if lines:
        click.echo("\n".join(["", *lines]))
    if fits is not Verdict.READY or not run:
        return fits.exit_code
    return run_install(plan, manager, facts, tables)


def _code_notes(plan: InstallPlan, facts: Facts) -> List[str]:
    """Where the plan changes the installed torch (a plan for another machine changes
    nothing here) to a newer release and this folder is in a project: what the
    releases crossed changed that the project's code uses (only their changes are read)."""
    from packaging.version import InvalidVersion, Version

    from .._cwd import current
    from ..compat import torch_version
    from ..report.scan_text import upgrade_notes
    from ..scan import TableError, load_changes, minor, scan
    from ..scan.files import project_root

    installed, cwd = torch_version(facts), current()
    root = project_root(cwd) if cwd else None
    if not plan.ok or not plan.changes or installed is None or root is None:
        return []
    try:
        planned = Version(plan.torch or "")
        table = load_changes()
    except (InvalidVersion, TableError):
        return []
    if minor(planned) <= minor(installed):
        return []
    return upgrade_notes(scan(root, planned, table, since=minor(installed), torch_from="the plan"))


def _index_check(plan: InstallPlan, tables: Tables, facts: Facts) -> IndexCheck:
    """The plan asked of its index, with pip's configuration for the interpreter planned
    for (its sys.prefix holds its site pip.conf)."""
    from ..install.online import check_plan
    from ..install.pip_config import read_pip_config

    return check_plan(plan, tables, read_pip_config(facts.python.prefix))


def _companions(with_: Tuple[str, ...]) -> Optional[Tuple[str, ...]]:
    """--with: the companions to pin (repeated or comma-separated; none: no companion);
    None when not given (those installed now)."""
    if not with_:
        return None
    return tuple(
        c.strip() for item in with_ for c in item.split(",") if c.strip() and c.strip() != "none"
    )


def _wish(
    ctx: click.Context,
    torch_spec: str,
    variant: str,
    manager: str,
    with_: Tuple[str, ...],
    python_version: Optional[str],
    platform: Optional[str],
) -> Tuple[Wish, Tables]:
    """The options as a Wish, checked against the tables (loaded here, once the wish is
    made): a bad one is a usage error."""
    from ..install import Wish, WishError, check_wish
    from ..install.plan import parse_python

    try:
        wish = Wish(
            torch=torch_spec,
            variant=variant,
            companions=_companions(with_),
            python=parse_python(python_version),
            platform=platform,
            manager=manager,
        )
        tables = load_tables(ctx)
        check_wish(wish, PLATFORMS, tables)
    except WishError as exc:
        raise click.UsageError(str(exc)) from None
    return wish, tables


def _facts_for(wish: Wish, keep: bool, python: Optional[str]) -> Facts:
    """The machine planned for: none probed when the wish names its Python, platform and
    variant (and --keep asks for nothing installed), else the interpreter --python names."""
    from ..facts import Facts, PythonFacts

    if wish.python and wish.platform and wish.variant != "auto" and not keep:
        return Facts(python=PythonFacts(version=wish.python))  # planning for elsewhere: no probe
    return probe_facts(python, deep=False)  # --python PATH: that interpreter, as check does


def _print_json(plan: InstallPlan, manager: str, command: Optional[str], tables: Tables) -> None:
    """`install --json`: the plan's document, with its command as text, argv and steps."""
    import json

    from ..install import plan_argv, plan_steps
    from ..report.documents import plan_document

    backends = tables.uv_torch_backends
    argv = plan_argv(plan, manager, backends) if plan.ok else []
    steps = plan_steps(plan, manager, backends) if plan.ok else []
    click.echo(json.dumps(plan_document(plan, manager, command, argv, steps), indent=2))


def _python_or_version(
    python: Optional[str], version: Optional[str]
) -> Tuple[Optional[str], Optional[str]]:
    """(interpreter, version) from ``install --python PATH`` and ``--python-version X.Y``.

    --python names an interpreter, as it does for check and probe. Before, install took a
    version there: a value that looks like one (and is no file) is still read as
    --python-version, with a one-line note on stderr, for a deprecation period."""
    import re

    looks_like_version = python is not None and re.fullmatch(r"\d+(\.\d+){0,2}", python.strip())
    if python is not None and looks_like_version and not os.path.exists(python):
        if version is not None:
            raise click.UsageError("--python-version and a version in --python: give one")
        click.echo(
            f"envcheck: `install --python {python}` is deprecated: a Python version is "
            f"--python-version {python}; --python now names an interpreter",
            err=True,
        )
        return None, python
    if python is not None and version is not None:
        raise click.UsageError(
            "--python plans for that interpreter's own version; --python-version is for "
            "another machine: give one"
        )
    return python, version


def _refuse_foreign(wish: Wish, facts: Facts) -> None:
    """--run installs into this interpreter: a plan for another Python or platform is not
    for it."""
    from ..compat import platform_of

    here_py = ".".join((facts.python.version or "").split(".")[:2])
    here = platform_of(facts)
    if wish.python and wish.python != here_py:
        raise click.UsageError(
            f"--run installs into this interpreter (Python {here_py}); the plan is for Python {wish.python}"
        )
    if wish.platform and (here is None or str(here) != wish.platform):
        raise click.UsageError(
            f"--run installs on this machine ({here or 'an unsupported platform'}); "
            f"the plan is for {wish.platform}"
        )
