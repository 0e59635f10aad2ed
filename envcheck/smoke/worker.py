"""Child entry point: run smoke workloads in turn, printing each result as a marker line.

    python -m envcheck.smoke.worker TEST[,TEST...] DEVICE

torch is imported once for all of them; the parent reads each answer as it comes, and
kills the worker when a test runs past its deadline.

all_reduce on the CPU: the worker forks the ranks (``group.run_forked``), which start with
torch already imported, and answers for all of them. On GPUs the parent starts one worker
per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (``group.forks`` says why),
and each answers for itself; the parent takes RANK out of every other worker's
environment, so that one set by a user's shell does not make a worker a rank. Anything
torch prints is ignored by the parent; only the marker line counts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Dict, List

from ..values import SmokeStatus
from . import group, workloads

MARK = "@@envcheck-smoke@@"


def main(argv: List[str]) -> int:
    names, device = argv[0].split(","), argv[1]
    for test in names:
        _run(test, device)
    return 0


def _run(test: str, device: str) -> None:
    start = time.perf_counter()
    try:
        if test == "all_reduce":
            # a worker the runner spawned as one rank has RANK set; else it forks the ranks
            figures = group.rank_main(device) if "RANK" in os.environ else group.run_forked(device)
        else:
            tests: Dict[str, Callable[..., Any]] = {
                "matmul": workloads.matmul,
                "amp": workloads.amp,
                "memory": workloads.memory,
                "compile": workloads.compiled,
                "health": workloads.tiny_matmul,
            }
            figures = tests[test](device)
        result: Dict[str, Any] = {"status": SmokeStatus.PASSED, "figures": figures}
    except group.RankFailure as exc:  # its message names the rank and what it said
        result = {"status": SmokeStatus.FAILED, "error": str(exc)[-2000:]}
    except Exception as exc:  # a wrong result, or torch failing (no kernel image, NCCL error)
        result = {"status": SmokeStatus.FAILED, "error": workloads.error_text(exc)}
    result["test"] = test
    result["duration_s"] = round(time.perf_counter() - start, 3)
    sys.stdout.write("\n" + MARK + " " + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
