"""What the commands run without click share: the options that mean the same in each (how the
machine is probed, --manager's choices), and the tables with their one error message."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import List, Optional

    from .._plain_args import Values
    from ..tables import Tables

MIN_TIMEOUT = 0.1  # seconds: the least --timeout a deep probe takes (click's FloatRange too)

# how the machine is probed: the options `check` and `probe` share (cli.options.deep_options)
DEEP_FLAGS = {
    "--show-ids": ("show_ids", True),
    "--deep": ("deep", True),
    "--no-deep": ("deep", False),
}


def deep_values() -> Values:
    """The readers of --timeout and --python, as click's deep_options read them."""
    from .._plain_args import decimal

    def timeout(text: str) -> Optional[float]:
        value = decimal(text)
        return value if value is not None and value >= MIN_TIMEOUT else None

    return {"--timeout": ("timeout", timeout), "--python": ("python", str)}


def managers() -> List[str]:
    """What `--manager` renders for (check's install fix, install's plan): the vocabulary of
    the renderers' registry (install/managers/ has one renderer for each Manager)."""
    from ..values import Manager

    return [str(manager) for manager in Manager]


def tables_or_none(tables_dir: Optional[str]) -> Optional[Tables]:
    """The compatibility tables (``--tables DIR`` or ENVCHECK_TABLES, else those in use), or
    None once stderr says why they cannot be used (the command then exits 3)."""
    from ..report.emit import tables_unusable
    from ..tables import TableError, load_tables

    try:
        return load_tables(tables_dir)
    except TableError as exc:
        tables_unusable(exc)
        return None
