"""`envcheck healthcheck`'s click command: its options, help and usage errors.

Registered in the CLI group (envcheck.cli.healthcheck) and run on its own by the console
script (envcheck._entry) when the command line is not one that
:func:`envcheck.healthcheck.plain_options` reads without click: ``--help``, a bad option,
an unusual value. Either way a bad option is one ``unhealthy:`` line and exit 1."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import click

from ._clickstyle import CONTEXT
from .healthcheck import (
    DEFAULT_TIMEOUT,
    HEALTHY,
    UNHEALTHY,
    bad_gpus,
    bad_timeout,
    flush_stdout,
    run,
    say,
)


def _refuse(why: Callable[[Any], Optional[str]]) -> Callable[..., Any]:
    """A click callback that refuses a value ``why`` finds fault with: the same rule that
    :func:`check` applies to the Python API's arguments."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        reason = None if value is None else why(value)
        if reason:
            raise click.BadParameter(reason, ctx=ctx, param=param)
        return value

    return callback


class _OneLine(click.Command):
    """A click command whose bad options are one line and exit 1.

    Docker reserves exit 2 for HEALTHCHECK, which is click's exit for a usage
    error, and a probe's output is one line: so a bad option prints
    ``unhealthy: <click's message>`` on stdout and exits 1, whichever way the
    command was reached (the console script's fast path, or the CLI group as in
    ``envcheck --tables DIR healthcheck``). Click takes no abbreviations, so
    ``--gpu 2`` is an error ("Did you mean '--gpus'?"), not ``--gpus 2``.
    """

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            say("unhealthy: " + " ".join(exc.format_message().split()))
            ctx.exit(UNHEALTHY)
        except BrokenPipeError:  # --help into a reader that has gone
            flush_stdout()
            ctx.exit(HEALTHY)
        raise AssertionError("unreachable")  # pragma: no cover - ctx.exit raises


@click.command(cls=_OneLine, name="healthcheck", context_settings=CONTEXT)
@click.option(
    "--gpus",
    type=int,
    default=None,
    metavar="N",
    callback=_refuse(bad_gpus),
    help="GPUs that must be visible. Default: the number listed in NVIDIA_VISIBLE_DEVICES; "
    "no minimum when it is unset or 'all'.",
)
@click.option("--deep", is_flag=True, help="Also run a tiny matmul in a child process.")
@click.option(
    "--timeout",
    type=float,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    callback=_refuse(bad_timeout),
    help="Seconds each probe may take (more than 0).",
)
@click.option(
    "--state",
    metavar="FILE",
    help="Ignored: no state is kept; accepted so that older HEALTHCHECK lines still work.",
)
@click.pass_context
def command(
    ctx: click.Context, gpus: Optional[int], deep: bool, timeout: float, state: Optional[str]
) -> None:
    """For Docker HEALTHCHECK and Kubernetes probes: one line, exit 0 (healthy) or 1.

    NVML only, in a child process (torch only with --deep); every probe bounded by
    --timeout. No file is read or written.

    Unhealthy when a container that expects GPUs (NVIDIA_VISIBLE_DEVICES, a CUDA image's
    variables) was started without them, fewer GPUs are visible than expected, NVML hangs
    or crashes, a GPU is lost or NVML reports a fault on it, a GPU has had uncorrectable
    ECC errors since the driver loaded, a GPU is at its slowdown temperature, or the
    --deep matmul fails. A query NVML refuses (no permission, not supported) is noted,
    not fatal.

    Exit codes: 0 healthy, 1 unhealthy or a bad option (never 2: Docker reserves it).
    """
    ctx.exit(run(gpus, deep, timeout))


def main(argv: Optional[List[str]] = None) -> int:
    """The click command run without the group, which loads the compatibility tables that a
    healthcheck does not need."""
    code = command.main(argv, prog_name="envcheck healthcheck", standalone_mode=False)
    return code if isinstance(code, int) else HEALTHY
