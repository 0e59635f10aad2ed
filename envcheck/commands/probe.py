"""`envcheck probe`'s body, the probe every command asks with its usage errors, and the
reading of its usual command lines without click (see envcheck.commands): ``probe`` with
``--json``, ``--deep``/``--no-deep``, ``--timeout S``, ``--python PATH`` and ``--show-ids``."""

from __future__ import annotations

from .._plain_args import UsageProblem
from ..probes.timeouts import DEFAULT_TIMEOUT
from .common import DEEP_FLAGS, deep_values

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence

    from ..facts import Facts
    from ..tables import Tables


def probe_facts(python: Optional[str] = None, **kwargs: Any) -> Facts:
    """The probe of the interpreter the user means (envcheck.target); a bad override or
    interpreter raises UsageProblem."""
    from ..probes import InterpreterError, OverrideError, probe
    from ..target import chosen

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
    from ..report.emit import write

    facts = probe_facts(python, deep=deep, timeout=timeout, show_ids=show_ids, progress=True)
    if as_json:
        write(facts.to_json() + "\n")
        return 0
    import sys

    from ..report.facts_text import render_facts
    from ..report.style import use_color

    color = use_color(sys.stdout)
    tables = _tables_for_text(facts, tables_dir)
    if tables is None:
        write(render_facts(facts, color=color), color=color)
    else:
        write(render_facts(facts, color=color, link_table=tables.links, tables=tables), color=color)
    return 0


def _tables_for_text(facts: Facts, tables_dir: Optional[str]) -> Optional[Tables]:
    """The tables the text of ``facts`` reads, where it needs them: they name the PCIe
    generations, and say whether torch's labelled files beside its plain metadata are PyPI's
    one build. Where they cannot be read the facts print without them (said, not known)."""
    from ..tables import TableError, load_tables

    t = facts.torch
    if not (any(gpu.pcie for gpu in facts.nvidia.gpus) or t.version != t.dist_version):
        return None
    try:
        tables = load_tables(tables_dir)
        tables.links, tables.releases  # noqa: B018  # read now: a broken file is left out
    except TableError:
        return None
    return tables


def plain_options(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_probe` for a command line after ``probe`` that click would
    read the same way, or None."""
    from .._plain_args import read

    return read(args, {"--json": ("as_json", True), **DEEP_FLAGS}, deep_values())


def run_plain(args: Sequence[str]) -> Optional[int]:
    """``envcheck probe ...`` run without click: the exit code, or None where click must
    read the command line (nothing has run then)."""
    from ..tables.load import tables_dir_from_env

    options = plain_options(args)
    if options is None:
        return None
    return run_probe(tables_dir_from_env(), **options)
