"""The ``envcheck`` command: a thin click layer over the Python API.

Commands import what they need when they run, so ``envcheck --help`` and the
static probe stay fast; nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Any, Dict, List, Optional

import click

from . import exitcodes
from ._clickstyle import CONTEXT
from ._version import __version__
from .healthcheck import command as healthcheck
from .probes import DEFAULT_TIMEOUT  # probes/__init__ imports no probe: cheap
from .tables.model import PLATFORMS


@click.group(invoke_without_command=True, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="envcheck")
@click.option(
    "--tables",
    "tables_dir",
    metavar="DIR",
    envvar="ENVCHECK_TABLES",
    help="Use the compatibility tables in DIR (files it lacks come from the built-in ones). "
    "Also ENVCHECK_TABLES.",
)
@click.pass_context
def cli(ctx: click.Context, tables_dir: Optional[str]) -> None:
    """Will this machine run my PyTorch code, and if not, what do I install?

    Run without a command to check this machine (the same as `envcheck check`).
    """
    ctx.obj = {"tables_dir": tables_dir}
    if ctx.invoked_subcommand is None:
        ctx.invoke(check)


def _load_tables(ctx: click.Context):
    from .tables import TableError, load_tables

    try:
        return load_tables((ctx.obj or {}).get("tables_dir"))
    except TableError as exc:
        click.echo(f"envcheck: cannot use the compatibility tables: {exc}", err=True)
        ctx.exit(exitcodes.INTERNAL)


def _target(python: Optional[str]) -> dict:
    """The interpreter the user means (--python, the activated environment, the project's
    .venv, else envcheck's own; see envcheck.target) as probe arguments."""
    import os

    from ._cwd import current
    from .target import choose

    chosen = choose(python, os.environ, current())
    return {"python": chosen.python, "chosen_because": chosen.reason}


def _probe(python: Optional[str] = None, **kwargs):
    from .probes import InterpreterError, OverrideError
    from .probes import probe as run_probe

    try:
        return run_probe(**_target(python), **kwargs)
    except (OverrideError, InterpreterError) as exc:
        raise click.UsageError(str(exc)) from None


def _deep_options(fn):
    fn = click.option(
        "--show-ids",
        is_flag=True,
        help="Keep GPU UUIDs and the host name (redacted by default, so reports can be shared).",
    )(fn)
    fn = click.option(
        "--python",
        "python",
        metavar="PATH",
        help="Describe the environment of another interpreter (e.g. a project's .venv/bin/python).",
    )(fn)
    fn = click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=DEFAULT_TIMEOUT,
        show_default=True,
        help="Seconds the deep probe may take before it is killed.",
    )(fn)
    fn = click.option(
        "--deep/--no-deep",
        default=True,
        show_default=True,
        help="Also import torch in a child process to see what it really loads.",
    )(fn)
    return fn


def _format_option(fn):
    from .report.formats import FORMATS

    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(list(FORMATS)),
        default=None,
        help="What stdout carries: "
        + "; ".join(f"{f.name} {f.description}" for f in FORMATS.values())
        + ".",
    )(fn)
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json)."
    )(fn)


def _output_path(path: Optional[str], what: str) -> Optional[str]:
    """Check an output file before any work is done (envcheck._outfile.check_target decides),
    so a typo, a folder, a link or a FIFO costs nothing: a usage error (exit 2)."""
    if not path:
        return path
    from ._outfile import OutputPathError, check_target

    try:
        check_target(path)
    except OutputPathError as exc:
        raise click.BadParameter(str(exc), param_hint=what) from None
    return path


def _output_option(flag: str, help: str):
    """An output FILE option, checked (``_output_path``) before any work is done."""
    return click.option(
        flag,
        flag.lstrip("-"),
        metavar="FILE",
        callback=lambda ctx, param, value: _output_path(value, flag),
        help=help,
    )


def _emit(report, fmt: str, junit: Optional[str]) -> bool:
    """Exactly one format on stdout; the JUnit file, GitHub annotations (stderr) and step
    summary beside it. A format renders the Report; it decides nothing. The runner shows
    stdout and stderr in one log: when stdout already carries the annotations (--format
    github), they are not repeated on stderr, so each is shown once."""
    from .report import ci
    from .report.formats import render
    from .report.style import use_color

    color = fmt == "text" and use_color(sys.stdout)
    click.echo(render(report, fmt, color=color), nl=False, color=color)
    written = True
    if junit:
        written = _write(junit, render(report, "junit"), "--junit")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        if fmt != "github":
            click.echo(render(report, "github"), nl=False, err=True)
        try:
            ci.write_step_summary(render(report, "markdown"))
        except OSError as exc:
            click.echo(
                f"envcheck: cannot write GITHUB_STEP_SUMMARY: {exc.strerror or exc}", err=True
            )
    return written


def _write(path: str, text: str, what: str) -> bool:
    """Write an output file the user asked for; False (and a line on stderr) if it failed."""
    from ._outfile import write_text

    try:
        write_text(path, text)
    except OSError as exc:
        click.echo(f"envcheck: cannot write {what} {path}: {exc.strerror or exc}", err=True)
        return False
    return True


def _run_core(ctx: click.Context, **kwargs):
    """envcheck.check() with its errors mapped to exit codes: usage 2, tables 3."""
    from .core import check as run_check
    from .probes import InterpreterError, OverrideError
    from .requirements import ConfigError
    from .tables import TableError

    try:
        return run_check(tables=_load_tables(ctx), **kwargs)
    except (ConfigError, OverrideError, InterpreterError) as exc:
        raise click.UsageError(str(exc)) from None
    except TableError as exc:  # pragma: no cover - _load_tables reports these first
        click.echo(f"envcheck: cannot use the compatibility tables: {exc}", err=True)
        ctx.exit(exitcodes.INTERNAL)


@cli.command(context_settings=CONTEXT)
@_format_option
@_output_option("--junit", "Also write a JUnit XML report to FILE (its folder is made if missing).")
@click.option(
    "--config",
    "config",
    metavar="FILE",
    help="Project requirements ([tool.envcheck] in pyproject.toml, or envcheck.toml); "
    "found from the current folder upwards by default.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only on errors.")
@click.option(
    "--smoke", "with_smoke", is_flag=True, help="Also run the smoke test and join its results."
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="CODE",
    help="Drop findings with this code or name (repeat, or separate with commas).",
)
@click.option(
    "--manager",
    default="pip",
    show_default=True,
    type=click.Choice(["pip", "uv", "conda", "requirements", "uv-project", "poetry"]),
    help="Render the install fix for this tool or project file.",
)
@_deep_options
@click.pass_context
def check(
    ctx: click.Context,
    as_json: bool,
    fmt: Optional[str],
    junit: Optional[str],
    config: Optional[str],
    strict: bool,
    with_smoke: bool,
    ignore: tuple,
    manager: str,
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
) -> None:
    """Check this machine against the compatibility tables: what is wrong, why, and the fix.

    Exit codes: 0 ready, 1 not ready (an error finding; with --strict, a warning too),
    2 usage error (e.g. a --junit FILE that is a folder, a link or a FIFO: refused before
    any work), 3 envcheck could not run or finish (e.g. unreadable tables, a --junit file
    whose writing failed after the run).
    """
    from .report import progress as waits

    fmt = "json" if as_json else (fmt or "text")
    show = waits.on_terminal()

    def progress(kind, label, elapsed, result) -> None:
        if kind == "tick" and show:
            waits.show(f"running {label}", elapsed)
        elif kind == "done" and show:
            waits.clear()

    report = _run_core(
        ctx,
        deep=deep,
        timeout=timeout,
        **_target(python),
        show_ids=show_ids,
        config=config,
        ignore=ignore,
        strict=strict,
        smoke=with_smoke,
        smoke_timeout=timeout,
        on_smoke=progress,
        manager=manager,
        progress=True,
        grid=fmt == "html",  # the page draws the releases x variants grid
    )
    if not _emit(report, fmt, junit):
        ctx.exit(exitcodes.INTERNAL)  # the report asked for is missing: CI must not pass
    ctx.exit(report.exit_code)


@cli.command(context_settings=CONTEXT)
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
@click.option(
    "--manager",
    default="pip",
    show_default=True,
    type=click.Choice(["pip", "uv", "conda", "requirements", "uv-project", "poetry"]),
    help="Render the plan for this tool or project file.",
)
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
    help="Keep the installed torch (version, build, companions) where it fits, else change as "
    "little as fits: the plan `envcheck check` gives.",
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
@click.pass_context
def install(
    ctx, torch_spec, variant, manager, with_, keep, python, python_version, platform, as_json, run
) -> None:
    """Print the right install command for this machine (or another one). Installs nothing
    unless --run is given.

    Picks the newest torch that satisfies --torch and has a wheel for this Python and
    platform (with --keep: the installed one, or the nearest that fits), and the variant
    that fits the driver and every GPU. With --python-version, --platform and a --variant
    other than auto, nothing is probed.
    """
    import json

    from .facts import Facts, PythonFacts
    from .install import Wish, WishError, check_wish, installed_wish, render, resolve
    from .install.plan import parse_python

    companions = (
        tuple(
            c.strip()
            for item in with_
            for c in item.split(",")
            if c.strip() and c.strip() != "none"
        )
        if with_
        else None
    )
    python, python_version = _python_or_version(python, python_version)
    try:
        wish = Wish(
            torch=torch_spec,
            variant=variant,
            companions=companions,
            python=parse_python(python_version),
            platform=platform,
            manager=manager,
        )
        tables = _load_tables(ctx)
        check_wish(wish, PLATFORMS, tables)
    except WishError as exc:
        raise click.UsageError(str(exc)) from None
    if run and manager not in ("pip", "uv"):
        raise click.UsageError("--run works with --manager pip or uv")
    if wish.python and wish.platform and wish.variant != "auto" and not keep:
        facts = Facts(python=PythonFacts(version=wish.python))  # planning for elsewhere: no probe
    else:
        facts = _probe(python, deep=False)  # --python PATH: that interpreter, as check does
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
    if as_json:
        from .install import plan_argv, plan_steps
        from .report.documents import plan_document

        backends = tables.uv_torch_backends
        argv = plan_argv(plan, manager, backends) if plan.ok else []
        steps = plan_steps(plan, manager, backends) if plan.ok else []
        click.echo(json.dumps(plan_document(plan, manager, command, argv, steps), indent=2))
        ctx.exit(exitcodes.OK if plan.ok else exitcodes.NOT_READY)
    _print_plan(plan, command)
    if not plan.ok:
        ctx.exit(exitcodes.NOT_READY)
    if run:
        ctx.exit(_run_install(plan, manager, facts, tables))


def _python_or_version(python: Optional[str], version: Optional[str]):
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


def _refuse_foreign(wish, facts) -> None:
    """--run installs into this interpreter: a plan for another Python or platform is not
    for it."""
    from .compat import platform_of

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


def _print_plan(plan, command) -> None:
    """The plan in lines that fit the terminal (envcheck.report.wrap); the command is never
    broken inside an argument, and a long one is continued with `` \\``."""
    from .report.wrap import command_lines, command_width, terminal_width, wrap

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
        click.echo("\n".join(out))
        return
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
    out += command_lines(command, command_width(width), first="", rest="")
    click.echo("\n".join(out))


def _run_install(plan, manager, facts, tables) -> int:
    """Run the plan's pip or uv command (an argument list, no shell), then probe the
    interpreter again: success only when what is installed is what the plan said."""
    import shutil
    import subprocess

    from .install import plan_argv

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
        return exitcodes.NOT_READY
    wrong = installed_mismatches(plan, _probe(deep=False, python=python))
    if wrong:
        click.echo(f"{manager} succeeded, but this is not what the plan said:", err=True)
        for line in wrong:
            click.echo(f"  - {line}", err=True)
        return exitcodes.NOT_READY
    click.echo(
        f"installed torch {plan.installs} (checked: "
        + ", ".join(f"{p.name} {p.version}" for p in plan.packages)
        + ")"
    )
    return exitcodes.OK


def installed_mismatches(plan, facts) -> list:
    """What the interpreter has that differs from the plan (versions and the torch build)."""
    from packaging.version import Version

    from .compat import torch_variant

    have = {p.name: p.version for p in facts.torch.companions}
    if facts.torch.installed:
        have["torch"] = facts.torch.version
    wrong = []
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


def _with_expected(tables, facts):
    """The all_reduce result with the busbw this machine's links allow (core.with_expected),
    as `check --smoke` shows it, from the machine's static facts (NVML and sysfs, no torch)."""
    from .core import with_expected

    def add(result):
        if result.name != "all_reduce" or result.status != "passed":
            return result
        return with_expected(result, facts, tables)

    return add


def _run_smoke(targets, timeout: float, extras, show_progress: bool, on_result=None):
    """Run the suite on ``targets.devices``; on a terminal show what runs and for how long,
    and hand each finished result to ``on_result`` (so results appear as they come)."""
    from .report import progress as waits
    from .smoke.runner import DEFAULT_TESTS, run_suite

    def progress(kind, label, elapsed, result):
        if kind == "tick" and show_progress:
            waits.show(f"running {label}", elapsed)
        elif kind == "done":
            if show_progress:
                waits.clear()
            if on_result is not None:
                on_result(result)

    return run_suite(
        list(targets.devices),
        timeout=timeout,
        extras=extras,
        progress=progress,
        tests=DEFAULT_TESTS,
    )


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds each test may run before it is killed.",
)
@click.option("--memory", is_flag=True, help="Also write and read back part of free device memory.")
@click.option("--compile", "compile_", is_flag=True, help="Also torch.compile a tiny function.")
@click.option(
    "--distributed",
    is_flag=True,
    help="Run across nodes: every rank of a torchrun or srun job (ranks, nodes and the "
    "rendezvous from torchrun's or Slurm's variables).",
)
@_output_option(
    "--html", "With --distributed: rank 0 also writes a page with a bar per rank to FILE."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 1) when the machine has a GPU the tests could not use (a CPU build of "
    "torch), not only when a test fails.",
)
@click.pass_context
def smoke(ctx, as_json, timeout, memory, compile_, distributed, html, strict) -> None:
    """Prove the stack works: matmul, AMP and all_reduce, each in a child with a timeout.

    On GPUs: every visible GPU, NCCL all_reduce over all of them. On the CPU: bf16,
    and a 2-process gloo all_reduce; a GPU that torch cannot use is said to be left out.
    Exit 1 when a test fails or hangs (with --strict, also when a GPU was left out).
    """
    import json

    if html and not distributed:
        raise click.UsageError(
            "--html is for --distributed; this machine's page: envcheck check --smoke --format html"
        )
    if distributed:
        from .smoke.distributed import LaunchError, launched, run

        try:
            launch = launched()
        except LaunchError as exc:
            raise click.UsageError(f"--distributed runs under torchrun or srun: {exc}") from None
        ctx.exit(run(timeout, launch, html))
    from .core import smoke_targets
    from .probes import OverrideError, probe
    from .report.progress import on_terminal
    from .report.smoke_text import note_lines, result_lines, verdict_line
    from .report.style import use_color

    extras = [n for n, on in (("memory", memory), ("compile", compile_)) if on]
    color = use_color(sys.stdout)

    tables = _load_tables(ctx)
    try:  # the machine's GPUs and links (NVML, KFD, sysfs; no torch): what the tests should use
        facts = probe(deep=False, timeout=timeout)
    except OverrideError as exc:
        raise click.UsageError(str(exc)) from None
    targets = smoke_targets(facts, timeout)
    expected = _with_expected(tables, facts)

    def show(result) -> None:  # each result as soon as its test is done
        for line in result_lines(expected(result), color):
            click.echo(line, color=color)

    results = _run_smoke(
        targets,
        timeout,
        extras,
        show_progress=on_terminal(),
        on_result=None if as_json else show,
    )
    results = [expected(r) for r in results]
    passed = targets.passed(results, strict)
    if as_json:
        from .report.documents import smoke_document

        click.echo(json.dumps(smoke_document(results, targets, strict), indent=2))
    else:
        for line in note_lines(targets, color):
            click.echo(line, color=color)
        click.echo(verdict_line(results, color, targets, strict), color=color)
    ctx.exit(exitcodes.OK if passed else exitcodes.NOT_READY)


# One definition, in envcheck.healthcheck: the console script runs it without this group.
cli.add_command(healthcheck)


@cli.command(context_settings=CONTEXT)
@click.argument(
    "source", metavar="FILE|-", type=click.File("r", encoding="utf-8", errors="replace")
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default=None,
    help="text (default), json, markdown: a reply to paste into the reporter's issue, or "
    "html: one self-contained page.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@click.option(
    "--ignore", multiple=True, metavar="CODE", help="Drop findings with this code or name."
)
@click.pass_context
def diagnose(ctx, source, as_json, fmt, strict, ignore) -> None:
    """Diagnose a report pasted from another machine: `collect_env` output, `nvidia-smi`
    (table, -L or --query-gpu CSV), an envcheck JSON report, error messages, or any mix.

    Runs the same checks and install advice as `envcheck check`, on the facts the text
    contains, and says which facts were missing (so which checks could not run).
    Exit codes as for `check`; 2 when nothing in the text can be read (not judged).
    """
    from .diagnose import NOTHING_READ, diagnose_text, read_source, unjudged_json

    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format markdown/text: give one")
    fmt = "json" if as_json else (fmt or "text")
    as_json = fmt == "json"
    text, notes = read_source(source)  # at most 4 MiB; notes say what was not read
    for note in notes:
        click.echo(f"envcheck: {note}", err=True)
    report = diagnose_text(text, _load_tables(ctx), ignore, strict, notes)
    diagnosis = report.diagnosis or {}
    if not diagnosis.get("read"):  # no facts: not judged, never "ready"
        why = "; ".join(diagnosis.get("errors") or []) or NOTHING_READ
        if as_json:
            click.echo(unjudged_json(report, why), nl=False)
        click.echo(f"envcheck: {why}" if why != NOTHING_READ else why, err=as_json)
        ctx.exit(exitcodes.USAGE)
    _emit(report, fmt, None)
    ctx.exit(report.exit_code)


@cli.command(context_settings=CONTEXT)
@click.argument("message")
@click.pass_context
def explain(ctx, message) -> None:
    """Explain one error message: what it means, the fix, and the facts it carries.
    MESSAGE `-` reads it from standard input (as `diagnose -` does).

    Exit 0 when the message is recognised, 1 when it is not, 2 for an empty message.
    """
    from .diagnose import explain as explain_message
    from .diagnose import read_source

    if message == "-":
        import io

        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        message, notes = read_source(stdin)  # bounded, as diagnose reads it
        for note in notes:
            click.echo(f"envcheck: {note}", err=True)
    if not message.strip():
        raise click.UsageError("the message is empty: give it as an argument, or `-` for stdin")
    tables = _load_tables(ctx)
    result = explain_message(message, tables)
    if result is None:
        from .report.wrap import terminal_width, wrap

        click.echo(
            "\n".join(
                wrap(
                    "envcheck does not recognise this message (see `envcheck tables` for the "
                    "catalogue's age).\nNext: give envcheck the whole log or report, `envcheck "
                    "diagnose FILE` (or `-` for stdin): it reads collect_env, nvidia-smi and pip "
                    "output around the message; on the machine that printed it, run `envcheck "
                    "check`. A PyTorch or CUDA error envcheck should know is worth an issue in "
                    "envcheck's tracker, with the message.",
                    terminal_width(),
                    rest="  ",
                )
            )
        )
        ctx.exit(exitcodes.NOT_READY)
        return
    from .report.wrap import terminal_width, wrap

    width = terminal_width()
    for finding in result.findings:
        lines = wrap(f"{finding.name}: {finding.title}", width, rest="  ")
        lines += wrap(finding.evidence[0], width, first="  matched: ", rest="    ")
        lines += wrap(finding.fix or "", width, first="  ")
        click.echo("\n".join(lines))
    f = result.facts
    maybe = [
        f"the driver supports CUDA {f.nvidia.cuda_driver_version}"
        if f.nvidia.cuda_driver_version
        else None,
        f"GPU compute capability {f.nvidia.gpus[0].compute_capability}" if f.nvidia.gpus else None,
        f"nvcc is CUDA {f.toolkit.nvcc_version}" if f.toolkit.nvcc_version else None,
        f"torch was built with CUDA {f.torch.cuda}" if f.torch.cuda else None,
    ]
    carried: List[str] = [c for c in maybe if c]
    if carried:
        click.echo(
            "\n".join(
                wrap("; ".join(carried), width, first="  facts in the message: ", rest="    ")
            )
        )


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def tables(ctx: click.Context, as_json: bool) -> None:
    """Show what the compatibility tables hold, where they come from, and their age."""
    import datetime
    import json

    t = _load_tables(ctx)
    today = datetime.date.today().isoformat()
    ages = t.age_days(today)
    newest = t.newest_release
    toolkits = [str(k.cuda) for k in t.toolkits]
    info: Dict[str, Dict[str, Any]] = {
        "torch_releases": {
            "releases": len(t.releases),
            "range": f"{t.releases[0].minor} to {newest.minor}",
            "newest": str(newest.newest),
        },
        "cuda_driver": {
            "toolkits": f"CUDA {toolkits[0]} to {toolkits[-1]}",
            "minor_version_compatibility": sorted(t.minor_compat),
            "driver_branches": f"R{min(t.driver_branches)} to R{max(t.driver_branches)}",
        },
        "gpu_arches": {"families": len(t.families), "gpu_models": len(t.gpus)},
        "installers": {"uv_torch_backends": len(t.uv_torch_backends)},
        "messages": {"messages": len(t.messages)},
        "conda_pytorch": {
            "versions": (
                f"{t.conda.releases[0].torch} to {t.conda.releases[-1].torch}"
                if t.conda is not None and t.conda.releases
                else "none"
            ),
            "channel_last": str(t.conda.last) if t.conda is not None else "unknown",
        },
        "links": {
            "nvlink_generations": sorted(t.links.nvlink) if t.links else [],
            "pcie_generations": sorted(g for _, g, _ in t.links.pcie) if t.links else [],
        },
    }
    if as_json:
        out = {
            name: {
                "path": str(f.path),
                "builtin": f.builtin,
                "as_of": f.as_of,
                "age_days": ages[name],
                **info[name],
            }
            for name, f in t.files.items()
        }
        from .report.documents import tables_document

        click.echo(json.dumps(tables_document(out), indent=2))
        return
    from .report.wrap import terminal_width, wrap

    width = terminal_width()
    for name, f in t.files.items():
        where = "built-in" if f.builtin else "from --tables"
        lines = wrap(f"{name}  as of {f.as_of} ({ages[name]} days old, {where})", width, rest="  ")
        lines += wrap(str(f.path), width, first="  ")
        for key, value in info[name].items():
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            lines += wrap(f"{key.replace('_', ' ')}: {shown}", width, first="  ", rest="    ")
        click.echo("\n".join(lines))


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the Facts record as JSON.")
@_deep_options
@click.pass_context
def probe(
    ctx: click.Context,
    as_json: bool,
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
) -> None:
    """Observe this machine: system, Python, NVIDIA driver and GPUs, torch, CUDA toolkit.

    Nothing is judged here (that is `envcheck check`); every fact is reported as
    seen, and every probe failure is recorded rather than raised.

    Hardware facts can be overridden for simulation: ENVCHECK_DRIVER_VERSION,
    ENVCHECK_CUDA_DRIVER_VERSION, ENVCHECK_GPUS and ENVCHECK_FACT_<SECTION>_<FIELD>
    (see docs/facts.md).
    """
    facts = _probe(deep=deep, timeout=timeout, python=python, show_ids=show_ids, progress=True)
    if as_json:
        click.echo(facts.to_json())
        return
    from .report.facts_text import render_facts
    from .report.style import use_color
    from .tables import TableError, load_tables

    # The tables name the PCIe generations, and say whether torch's labelled files beside
    # its plain metadata are PyPI's one build; the facts print without them (said, not known).
    tables = None
    t = facts.torch
    if any(gpu.pcie for gpu in facts.nvidia.gpus) or t.version != t.dist_version:
        with contextlib.suppress(TableError):
            tables = load_tables((ctx.obj or {}).get("tables_dir"))
    link_table = tables.links if tables is not None else None
    color = use_color(sys.stdout)
    click.echo(
        render_facts(facts, color=color, link_table=link_table, tables=tables),
        nl=False,
        color=color,
    )


def main(argv: Optional[list] = None) -> None:
    """Console entry point: click's own exit codes, and 3 for an envcheck bug."""
    from ._stdout import guard_stdout

    guard_stdout()
    try:
        cli.main(args=argv, prog_name="envcheck", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception:  # an envcheck bug: say so plainly, keep the traceback for the report
        click.echo("envcheck failed unexpectedly; please report this:", err=True)
        click.echo(traceback.format_exc(), err=True)
        sys.exit(exitcodes.INTERNAL)
