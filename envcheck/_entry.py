"""The `envcheck` console script: `healthcheck` takes a fast path that never imports click.

A healthcheck runs every few seconds for the life of a container; importing the
full CLI would double its cost. Everything else goes to the click CLI.
"""

from __future__ import annotations

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["healthcheck"]:
        from .healthcheck import main as healthcheck

        sys.exit(healthcheck(args[1:]))
    from .cli import main as cli_main

    cli_main(args)
