"""`envcheck probe`'s body, and its usual command lines read without click.

Before a multi-node job every node runs `envcheck probe --json` for `envcheck compare`, and
importing click cost that probe about a tenth of its run. So, as for ``envcheck check``
(envcheck.plain_check, whose module says how), the console script reads ``probe`` with
``--json``, ``--deep``/``--no-deep``, ``--timeout S``, ``--python PATH`` and ``--show-ids``
without click, and runs :func:`run_probe`, the body the click command (envcheck.cli.probe)
runs too. Anything else goes to click; so does a line whose probe finds a usage error (an
override or ``--python`` that cannot be used), before anything is printed.
"""

from __future__ import annotations

from ._plain_args import UsageProblem
from .probes.timeouts import DEFAULT_TIMEOUT

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence

    from .facts import Facts


def probe_facts(python: Optional[str] = None, **kwargs: Any) -> Facts:
    """The probe of the interpreter the user means (envcheck.target); a bad override or
    interpreter raises UsageProblem."""
    from .probes import InterpreterError, OverrideError, probe
    from .target import chosen

    target = chosen(python)
    try:
        return probe(python=target.python, chosen_because=target.reason, **kwargs)
    except (OverrideError, InterpreterError) as exc:
        raise UsageProblem(str(exc)) from None


def run_probe(
    tables_dir: Optional[str] = None,
    as_json: bool = False,
    deep: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    python: Optional[str] = None,
    show_ids: bool = False,
) -> int:
    """Probe this machine (or ``python``'s environment) and print its Facts, as JSON or as
    text: exit 0, nothing judged. The keywords are the command's options, their defaults its
    defaults. Raises UsageProblem before anything is written."""
    from .report.emit import write

    facts = probe_facts(python, deep=deep, timeout=timeout, show_ids=show_ids, progress=True)
    if as_json:
        write(facts.to_json() + "\n")
        return 0
    import contextlib
    import sys

    from .report.facts_text import render_facts
    from .report.style import use_color
    from .tables import TableError, load_tables

    # The tables name the PCIe generations, and say whether torch's labelled files beside
    # its plain metadata are PyPI's one build; the facts print without them (said, not known).
    tables = None
    t = facts.torch
    if any(gpu.pcie for gpu in facts.nvidia.gpus) or t.version != t.dist_version:
        with contextlib.suppress(TableError):
            tables = load_tables(tables_dir)
    link_table = tables.links if tables is not None else None
    color = use_color(sys.stdout)
    write(render_facts(facts, color=color, link_table=link_table, tables=tables))
    return 0


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_probe` for a command line after ``probe`` that click would
    read the same way, or None."""
    from ._plain_args import read
    from .plain_check import DEEP_FLAGS, deep_values

    return read(args, {"--json": ("as_json", True), **DEEP_FLAGS}, deep_values())


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck probe ...`` run without click: the exit code, or None where click must
    read the command line (nothing has been written then)."""
    import os

    from .plain_check import COMPLETION
    from .tables.load import tables_dir_from_env

    options = plain_options(args)
    if options is None or os.environ.get(COMPLETION):
        return None
    try:
        return run_probe(tables_dir_from_env(), **options)
    except UsageProblem:
        return None  # click reads the line again, finds the same problem and says it
