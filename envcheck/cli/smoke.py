"""`envcheck smoke`: the smoke suite on this machine's devices (or this rank's part of a
distributed job), each result shown as it comes, the verdict envcheck.verdict's."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence

import click

from .._clickstyle import CONTEXT
from ..values import SmokeStatus
from .options import Seconds, load_tables, output_option

if TYPE_CHECKING:
    from ..core import SmokeTargets
    from ..facts import Facts
    from ..smoke.runner import SmokeResult
    from ..tables import Tables


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option(
    "--timeout",
    type=Seconds(min=1),
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
@output_option(
    "--html", "With --distributed: rank 0 also writes a page with a bar per rank to FILE."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 1) when the machine has a GPU the tests could not use (a CPU build of "
    "torch), not only when a test fails.",
)
@click.pass_context
def smoke(
    ctx: click.Context,
    as_json: bool,
    timeout: float,
    memory: bool,
    compile_: bool,
    distributed: bool,
    html: Optional[str],
    strict: bool,
) -> None:
    """Prove the stack works: matmul, AMP and all_reduce, each under its own timeout.

    A device's tests run in one child (torch imported once; one that hangs is killed and
    the rest go on in a new child). On GPUs: every visible GPU, NCCL all_reduce over all of
    them, a fresh child per GPU. On the CPU: bf16, and a gloo all_reduce over two ranks
    forked by the CPU's child; a GPU that torch cannot use is said to be left out.
    Exit 1 when a test fails or hangs (with --strict, also when a GPU was left out).
    """
    if html and not distributed:
        raise click.UsageError(
            "--html is for --distributed; this machine's page: envcheck check --smoke --format html"
        )
    if distributed:
        ctx.exit(_distributed(timeout, html, as_json))
    from ..core import smoke_targets
    from ..report.progress import on_terminal
    from ..report.smoke_text import result_lines
    from ..report.style import use_color

    extras = [n for n, on in (("memory", memory), ("compile", compile_)) if on]
    color = use_color(sys.stdout)
    tables = load_tables(ctx)
    facts = _static_facts(timeout)
    targets = smoke_targets(facts, timeout)
    expected = _with_expected(tables, facts)

    def show(result: SmokeResult) -> None:  # each result as soon as its test is done
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
    _print_results(results, targets, strict, as_json, color)
    ctx.exit(targets.verdict(results, strict).exit_code)


def _distributed(timeout: float, html: Optional[str], as_json: bool) -> int:
    """`smoke --distributed`: this rank's part of the job (envcheck.smoke.distributed)."""
    from ..smoke.distributed import LaunchError, launched, run

    try:
        launch = launched()
    except LaunchError as exc:
        raise click.UsageError(f"--distributed runs under torchrun or srun: {exc}") from None
    return run(timeout, launch, html, as_json)


def _static_facts(timeout: float) -> Facts:
    """The machine's GPUs and links (NVML, KFD, sysfs; no torch): what the tests should use."""
    from ..probes import OverrideError, probe

    try:
        return probe(deep=False, timeout=timeout)
    except OverrideError as exc:
        raise click.UsageError(str(exc)) from None


def _print_results(
    results: List[SmokeResult], targets: SmokeTargets, strict: bool, as_json: bool, color: bool
) -> None:
    """The results as JSON, or (each result already shown as it came) the notes and the
    verdict line."""
    if as_json:
        import json

        from ..report.documents import smoke_document

        click.echo(json.dumps(smoke_document(results, targets, strict), indent=2))
        return
    from ..report.smoke_text import note_lines, verdict_line

    for line in note_lines(targets, color):
        click.echo(line, color=color)
    click.echo(verdict_line(results, color, targets, strict), color=color)


def _with_expected(tables: Tables, facts: Facts) -> Callable[[SmokeResult], SmokeResult]:
    """The all_reduce result with the busbw this machine's links allow (core.with_expected),
    as `check --smoke` shows it, from the machine's static facts (NVML and sysfs, no torch)."""
    from ..core import with_expected

    def add(result: SmokeResult) -> SmokeResult:
        if result.name != "all_reduce" or result.status != SmokeStatus.PASSED:
            return result
        return with_expected(result, facts, tables)

    return add


def _run_smoke(
    targets: SmokeTargets,
    timeout: float,
    extras: Sequence[str],
    show_progress: bool,
    on_result: Optional[Callable[[SmokeResult], None]] = None,
) -> List[SmokeResult]:
    """Run the suite on ``targets.devices``; on a terminal show what runs and for how long,
    and hand each finished result to ``on_result`` (so results appear as they come)."""
    from ..report import progress as waits
    from ..smoke.runner import DEFAULT_TESTS, run_suite

    def progress(kind: str, label: str, elapsed: float, result: Optional[SmokeResult]) -> None:
        if kind == "tick" and show_progress:
            waits.show(f"running {label}", elapsed)
        elif kind == "done":
            if show_progress:
                waits.clear()
            if on_result is not None and result is not None:
                on_result(result)

    return run_suite(
        list(targets.devices),
        timeout=timeout,
        extras=extras,
        progress=progress,
        tests=DEFAULT_TESTS,
    )
