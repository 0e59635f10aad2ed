"""Child entry point: run smoke workloads in turn, printing each result as a marker line.

    python -m envcheck.smoke.worker TEST[,TEST...] DEVICE

torch is imported once for all of them; the parent reads each answer as it comes, and
kills the worker when a test runs past its deadline.

For all_reduce the parent starts one worker per rank with RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set. Anything torch prints is ignored by the parent;
only the marker line counts.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
import traceback
from types import ModuleType
from typing import Any, Callable, Dict, List

from ..values import SmokeStatus

MARK = "@@envcheck-smoke@@"


def main(argv: List[str]) -> int:
    names, device = argv[0].split(","), argv[1]
    for test in names:
        _run(test, device)
    return 0


def _run(test: str, device: str) -> None:
    start = time.perf_counter()
    try:
        from . import workloads

        if test == "all_reduce":
            figures = _all_reduce(workloads, device)
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
    except Exception as exc:  # a wrong result, or torch failing (no kernel image, NCCL error)
        lines = traceback.format_exception_only(type(exc), exc)
        result = {"status": SmokeStatus.FAILED, "error": "".join(lines).strip()[-2000:]}
    result["test"] = test
    result["duration_s"] = round(time.perf_counter() - start, 3)
    sys.stdout.write("\n" + MARK + " " + json.dumps(result) + "\n")
    sys.stdout.flush()


def _all_reduce(workloads: ModuleType, device: str) -> Dict[str, Any]:
    import torch.distributed as dist

    backend = "nccl" if device.startswith("cuda") else "gloo"
    if device.startswith("cuda"):
        import torch

        torch.cuda.set_device(device)
    timeout = datetime.timedelta(seconds=float(os.environ.get("ENVCHECK_SMOKE_PG_TIMEOUT", "60")))
    dist.init_process_group(backend, timeout=timeout)
    try:
        figures: Dict[str, Any] = workloads.all_reduce(device)
        return figures
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
