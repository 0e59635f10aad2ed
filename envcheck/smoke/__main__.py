"""``torchrun ... -m envcheck.smoke``: the multi-node smoke test (see distributed.py)."""

import sys

from .distributed import in_torchrun, run

if __name__ == "__main__":
    if not in_torchrun():
        sys.exit(
            "run this under torchrun (e.g. torchrun --nnodes 2 --nproc-per-node 8 -m envcheck.smoke), "
            "or use `envcheck smoke` on one machine"
        )
    sys.exit(run())
