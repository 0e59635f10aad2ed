"""``torchrun ... -m envcheck.smoke`` (or ``srun python -m envcheck.smoke``): the multi-node
smoke test (see distributed.py)."""

import sys

from .distributed import LaunchError, launched, run

if __name__ == "__main__":
    try:
        launch = launched()
    except LaunchError as exc:
        sys.exit(
            f"envcheck.smoke: {exc}\nrun it under torchrun (torchrun --nnodes 2 "
            "--nproc-per-node 8 -m envcheck.smoke) or srun, or use `envcheck smoke` on one machine"
        )
    sys.exit(run(launch=launch))
