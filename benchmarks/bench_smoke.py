"""How stable are `envcheck smoke`'s figures, and how long does it take?

Prints figures; asserts nothing. Runs `envcheck smoke --json` (the whole suite, as a user
would) ``--runs`` times and prints:

  1. per run: the wall time and the matmul medians per dtype (with the repeats' min-max);
     then per dtype the spread of the medians over the runs, (max - min) / median
     (target: <= 10% run to run);
  2. the all_reduce busbw-vs-size curve: the median busbw per size over the runs, with its
     min-max (gloo on the CPU here, NCCL on GPUs), and the expected figure where known;
  3. optionally (--plain) envcheck's matmul timing against a plain torch loop on the same
     tensors (target on a GPU: >= 90% of the plain loop's TFLOP/s).

    python benchmarks/bench_smoke.py [--runs 5] [--plain]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List


def smoke_runs(runs: int) -> List[Dict[str, Any]]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "envcheck", "smoke", "--json"], capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            raise SystemExit("envcheck smoke failed")
        doc = json.loads(proc.stdout)
        results = {r["name"]: r for r in doc["results"]}
        out.append({"wall": wall, "results": results})
    return out


def spread(values: List[float]) -> float:
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else 0.0


def report(runs: List[Dict[str, Any]]) -> None:
    walls = [r["wall"] for r in runs]
    print(
        f"envcheck smoke (whole suite): median {statistics.median(walls):.2f} s over {len(runs)} "
        f"runs (min {min(walls):.2f}, max {max(walls):.2f}); target on the CPU: <= 15 s"
    )
    first = runs[0]["results"]["matmul"]["figures"]
    dtypes = [k[: -len("_tflops")] for k in first if k.endswith("_tflops")]
    print(f"\nmatmul {first['size']}x{first['size']} on {runs[0]['results']['matmul']['device']}:")
    for i, run in enumerate(runs, 1):
        f = run["results"]["matmul"]["figures"]
        cells = [
            f"{d} {f[d + '_tflops']:.3f} ({f[d + '_tflops_min']:.3f}-{f[d + '_tflops_max']:.3f},"
            f" {f[d + '_repeats']} repeats, CPU share {f.get(d + '_cpu_share', '-')})"
            for d in dtypes
        ]
        print(
            f"  run {i}: " + "; ".join(cells) + f"; threads {f.get('threads', '-')}, "
            f"load {f.get('load_avg_1m', '-')}"
        )
    for d in dtypes:
        medians = [run["results"]["matmul"]["figures"][d + "_tflops"] for run in runs]
        print(
            f"  {d}: median of runs {statistics.median(medians):.3f} TFLOP/s, spread over runs "
            f"(max-min)/median {spread(medians):.1%} (target <= 10%)"
        )
        # The best repeat of each run, for comparison: other load only ever slows a repeat,
        # so the best is the steadier estimate of what the device can do (timeit's reasoning).
        best = [run["results"]["matmul"]["figures"][d + "_tflops_max"] for run in runs]
        print(
            f"  {d}: best repeat of each run, spread over runs {spread(best):.1%} (for comparison)"
        )

    ar = [run["results"]["all_reduce"]["figures"] for run in runs]
    print(f"\nall_reduce {ar[0]['backend']} x{ar[0]['world_size']}: busbw by size, over the runs")
    by_size: Dict[int, List[float]] = {}
    for f in ar:
        for s in f["sizes"]:
            by_size.setdefault(s["bytes"], []).append(s["busbw_gbps"])
    print(f"  {'bytes':>12} {'median GB/s':>12} {'min':>8} {'max':>8}")
    for size, values in sorted(by_size.items()):
        print(
            f"  {size:>12} {statistics.median(values):>12.3f} {min(values):>8.3f} "
            f"{max(values):>8.3f}"
        )
    expected = ar[0].get("expected_busbw_gbps")
    print(
        f"  expected: {expected} GB/s ({ar[0].get('expected_basis')})"
        if expected
        else "  expected: not known (the smoke command has no facts: see `envcheck check --smoke`)"
    )


def plain_loop(a: Any, b: Any, device: str, seconds: float) -> float:
    import torch

    n = a.shape[0]
    for _ in range(2):
        a @ b
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    iters, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(8):
            a @ b
        iters += 8
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    return 2 * n**3 * iters / (time.perf_counter() - start)


def against_plain(size: int, seconds: float) -> None:
    import torch

    from envcheck.smoke.workloads import low_precision, time_matmul

    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    size = size or (8192 if device != "cpu" else 1024)
    dtype = getattr(torch, low_precision(device))
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    ours, plain = [], []
    for _ in range(3):  # interleaved, so noise hits both alike
        ours.append(time_matmul(a, b, device, seconds))
        plain.append(plain_loop(a, b, device, seconds))
    o, p = statistics.median(ours) / 1e12, statistics.median(plain) / 1e12
    name = torch.cuda.get_device_name(0) if device != "cpu" else "CPU"
    print(
        f"\nmatmul {dtype} {size}x{size} on {name}: envcheck {o:.2f} TFLOP/s, plain torch loop "
        f"{p:.2f} TFLOP/s -> {o / p:.1%} (target on a GPU: >= 90%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--plain", action="store_true", help="also time against a plain loop")
    parser.add_argument("--size", type=int, default=0, help="--plain matmul size")
    parser.add_argument("--seconds", type=float, default=2.0, help="--plain window")
    args = parser.parse_args()
    report(smoke_runs(args.runs))
    if args.plain:
        against_plain(args.size, args.seconds)


if __name__ == "__main__":
    main()
