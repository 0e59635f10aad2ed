"""``torchrun ... -m envcheck.smoke`` (or ``srun python -m envcheck.smoke``): the multi-node
smoke test (see distributed.py).

Each rank is a process of its own, started by torchrun, not through the ``envcheck``
console script: it takes the same way in (``envcheck._entry.run_entry``), so Ctrl-C on the
job ends every rank with one "envcheck: interrupted" line and exit 130, not a
KeyboardInterrupt traceback per rank. Nothing heavy is imported before that is in place.
"""

import sys


def main() -> int:
    from .distributed import LaunchError, launched, run

    try:
        launch = launched()
    except LaunchError as exc:
        sys.exit(
            f"envcheck.smoke: {exc}\nrun it under torchrun (torchrun --nnodes 2 "
            "--nproc-per-node 8 -m envcheck.smoke) or srun, or use `envcheck smoke` on one machine"
        )
    return run(launch=launch)


if __name__ == "__main__":
    from .._entry import run_entry

    run_entry(lambda: sys.exit(main()))
