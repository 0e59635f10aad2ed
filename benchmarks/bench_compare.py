"""What `envcheck compare` costs at 2, 64, 512 and 1,000 reports: CPU seconds and peak memory
of the whole command (a fresh process per run, as a user or a Slurm job runs it), and of the
comparison alone (in this process: reading the reports and comparing, without start-up).
Prints figures; asserts nothing (these machines are noisy).

The fleet is made once from a real `envcheck probe --json --no-deep` (GPUs, driver and torch
build given by the probe's overrides), one file per machine: every 50th machine has another
torch build, half set NCCL_IB_DISABLE, so the differences are found and folded as in a real
fleet. Target (issue 24): 512 reports cost at most 6x what 2 cost, in CPU time.

    python benchmarks/bench_compare.py [--sizes 2 64 512 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from envcheck.fleet import compare_reports  # noqa: E402
from envcheck.tables import load_tables  # noqa: E402

MACHINE = {
    "ENVCHECK_DRIVER_VERSION": "580.65.06",
    "ENVCHECK_CUDA_DRIVER_VERSION": "13.0",
    "ENVCHECK_GPUS": "; ".join(["NVIDIA H100 80GB HBM3:9.0:80GiB"] * 8),
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_DIST_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_CUDA": "13.0",
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.12.3",
}


def probe() -> Dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVCHECK_")}
    done = subprocess.run(
        [sys.executable, "-m", "envcheck", "probe", "--json", "--no-deep"],
        capture_output=True,
        text=True,
        env={**env, **MACHINE},
        check=True,
    )
    facts: Dict[str, Any] = json.loads(done.stdout)
    return facts


def write_fleet(base: Dict[str, Any], folder: Path, n: int) -> None:
    folder.mkdir()
    for i in range(1, n + 1):
        facts = json.loads(json.dumps(base))
        facts["system"]["hostname"] = f"gpu-node-{i:04d}"
        if i % 50 == 0:
            facts["torch"].update(version="2.12.0+cu126", dist_version="2.12.0+cu126", cuda="12.6")
        if i % 2 == 0:
            facts["environment"]["NCCL_IB_DISABLE"] = "1"
        (folder / f"gpu-node-{i:04d}.json").write_text(json.dumps(facts), encoding="utf-8")


def whole_command(folder: Path) -> Tuple[float, float]:
    """CPU seconds (user + system) and peak RSS in MiB of one `envcheck compare` process."""
    child = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "compare", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(child.pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def in_process(folder: Path) -> Tuple[float, float]:
    """CPU seconds of reading and comparing alone, and its peak Python allocations in MiB
    (a second run under tracemalloc, which slows what it watches)."""
    tables = load_tables()
    start = time.process_time()
    compare_reports([str(folder)], tables)
    spent = time.process_time() - start
    tracemalloc.start()
    compare_reports([str(folder)], tables)
    peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    tracemalloc.stop()
    return spent, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 64, 512, 1000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    base = probe()
    with tempfile.TemporaryDirectory() as warm:  # imports and the checks' first run
        write_fleet(base, Path(warm) / "fleet", 2)
        in_process(Path(warm) / "fleet")
    rows: List[Tuple[int, float, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            folder = Path(tmp) / f"fleet-{n}"
            write_fleet(base, folder, n)
            whole = [whole_command(folder) for _ in range(args.runs)]
            alone = [in_process(folder) for _ in range(args.runs)]
            rows.append(
                (
                    n,
                    statistics.median(w[0] for w in whole),
                    max(w[1] for w in whole),
                    statistics.median(a[0] for a in alone),
                    max(a[1] for a in alone),
                )
            )
    first = rows[0]
    print("reports  command CPU s  x first  peak RSS MiB   compare CPU s  ms/report  peak MiB")
    for n, cpu, rss, alone, peak in rows:
        print(
            f"{n:7d}  {cpu:12.3f}  {cpu / first[1]:6.1f}x  {rss:12.1f}   {alone:13.3f}"
            f"  {alone / n * 1000:9.2f}  {peak:8.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
