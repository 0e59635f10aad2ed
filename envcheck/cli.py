"""The ``envcheck`` command: a thin click layer over the Python API.

Commands import what they need when they run, so ``envcheck --help`` and the
static probe stay fast; nothing here imports torch.
"""

from __future__ import annotations

import sys
import traceback
from typing import Optional

import click

from . import exitcodes
from ._version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


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


def _probe(**kwargs):
    from .probes import InterpreterError, OverrideError
    from .probes import probe as run_probe

    try:
        return run_probe(**kwargs)
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
        default=60.0,
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


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (docs/checks.md).")
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only on errors.")
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="CODE",
    help="Drop findings with this code or name (repeat, or separate with commas).",
)
@_deep_options
@click.pass_context
def check(
    ctx: click.Context,
    as_json: bool,
    strict: bool,
    ignore: tuple,
    deep: bool,
    timeout: float,
    python: Optional[str],
    show_ids: bool,
) -> None:
    """Check this machine against the compatibility tables: what is wrong, why, and the fix.

    Exit codes: 0 ready, 1 not ready (an error finding; with --strict, a warning too),
    2 usage error, 3 envcheck could not run (e.g. unreadable tables).
    """
    import json

    from .checks import run_checks
    from .report.findings_text import ready, render_findings, report_dict
    from .report.style import use_color

    tables = _load_tables(ctx)
    facts = _probe(deep=deep, timeout=timeout, python=python, show_ids=show_ids)
    codes = [c.strip() for item in ignore for c in item.split(",") if c.strip()]
    findings = run_checks(facts, tables, ignore=codes)
    if as_json:
        click.echo(json.dumps(report_dict(facts, findings, tables, strict), indent=2))
    else:
        color = use_color(sys.stdout)
        text = render_findings(facts, findings, tables, color=color, strict=strict)
        click.echo(text, nl=False, color=color)
    ctx.exit(exitcodes.OK if ready(findings, strict) else exitcodes.NOT_READY)


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
    info = {
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
        click.echo(json.dumps(out, indent=2))
        return
    for name, f in t.files.items():
        where = "built-in" if f.builtin else "from --tables"
        click.echo(f"{name}  as of {f.as_of} ({ages[name]} days old, {where})")
        click.echo(f"  {f.path}")
        for key, value in info[name].items():
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            click.echo(f"  {key.replace('_', ' ')}: {shown}")


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the Facts record as JSON.")
@_deep_options
def probe(as_json: bool, deep: bool, timeout: float, python: Optional[str], show_ids: bool) -> None:
    """Observe this machine: system, Python, NVIDIA driver and GPUs, torch, CUDA toolkit.

    Nothing is judged here (that is `envcheck check`); every fact is reported as
    seen, and every probe failure is recorded rather than raised.

    Hardware facts can be overridden for simulation: ENVCHECK_DRIVER_VERSION,
    ENVCHECK_CUDA_DRIVER_VERSION, ENVCHECK_GPUS and ENVCHECK_FACT_<SECTION>_<FIELD>
    (see docs/facts.md).
    """
    facts = _probe(deep=deep, timeout=timeout, python=python, show_ids=show_ids)
    if as_json:
        click.echo(facts.to_json())
        return
    from .report.facts_text import render_facts
    from .report.style import use_color

    color = use_color(sys.stdout)
    click.echo(render_facts(facts, color=color), nl=False, color=color)


def main(argv: Optional[list] = None) -> None:
    """Console entry point: click's own exit codes, and 3 for an envcheck bug."""
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
