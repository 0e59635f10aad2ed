"""The bodies of the commands envcheck runs most, and their usual command lines read without
click.

A static check is what envcheck runs most (by hand, as a CI preflight, before every job on
a cluster), triage runs `envcheck diagnose` report after report, and every node of a cluster
runs `envcheck probe --json`; importing click cost each of them a tenth to an eighth of its
run. So, as for the healthcheck, the console script (envcheck._entry) reads the command lines
people type nearly every time (``envcheck``, ``envcheck check``, ``envcheck diagnose FILE|-``
and ``envcheck probe`` with their usual options, each once, each value plainly valid:
envcheck._plain_args) and runs the command's body here: :func:`.check.run_check`,
:func:`.diagnose.run_diagnose`, :func:`.probe.run_probe`, which the click commands
(envcheck.cli) run too. Every other line (``--help``, the group's ``--tables``, a bad or
repeated option, ``check --code``, an output file click would refuse) goes to click, which
reads it and says what is wrong. A usage error found while running (a bad ``--config``, an
override or ``--python`` that cannot be used) is raised as UsageProblem before anything is
written, and said as click says one (envcheck.cli.usage_error): the run is not repeated.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Optional, Sequence

# click's shell completion variable (f"_{prog_name}_COMPLETE", prog_name "envcheck" as
# envcheck.cli.main gives it): while it is set, click answers the shell, so click reads the line
COMPLETION = "_ENVCHECK_COMPLETE"
# the commands whose usual lines run here; ``envcheck`` alone is ``envcheck check``
PLAIN = ("check", "diagnose", "probe")


def command_of(args: Sequence[str]) -> str:
    """The command a command line runs: ``envcheck`` alone is ``envcheck check``."""
    return args[0] if args else "check"


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck [COMMAND ...]`` run without click: the exit code, or None where click must
    read the command line (nothing has been written then). Raises UsageProblem (see the
    module)."""
    import os

    command, rest = command_of(args), args[1:]
    if command not in PLAIN or os.environ.get(COMPLETION):
        return None
    if command == "diagnose":
        from .diagnose import run_plain as run
    elif command == "probe":
        from .probe import run_plain as run
    else:
        from .check import run_plain as run
    return run(rest)
