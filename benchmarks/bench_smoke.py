"""How long does `envcheck smoke` take, and does its matmul measure what torch can do?

Prints figures; asserts nothing. One script, ready for a GPU machine as it is:

  1. the whole suite, `envcheck smoke --json`, median wall time of N runs
     (target: <= 15 s on the CPU here);
  2. envcheck's matmul timing (workloads.time_matmul) against a plain torch bf16
     matmul loop on the same tensors, timed in the same run, on the first GPU
     (or the CPU) (target on a GPU: >= 90% of the plain loop's TFLOP/s).

    python benchmarks/bench_smoke.py [--runs 3] [--size 8192]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def suite_times(runs: int) -> list:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "envcheck", "smoke", "--json"], capture_output=True, text=True
        )
        times.append(time.perf_counter() - start)
        if out.returncode != 0:
            print(out.stdout[-2000:], out.stderr[-2000:])
            raise SystemExit("envcheck smoke failed")
    return times


def plain_loop(a, b, device: str, seconds: float) -> float:
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--size", type=int, default=0, help="matmul size (default 8192 on a GPU, 1024 on the CPU)"
    )
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()

    import torch

    from envcheck.smoke.workloads import low_precision, time_matmul

    times = suite_times(args.runs)
    print(
        f"envcheck smoke (whole suite): median {statistics.median(times):.2f} s over {args.runs} runs "
        f"(min {min(times):.2f}, max {max(times):.2f}); target on the CPU: <= 15 s"
    )

    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    size = args.size or (8192 if device != "cpu" else 1024)
    dtype = getattr(torch, low_precision(device))
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    ours, plain = [], []
    for _ in range(3):  # interleaved, so noise hits both alike
        ours.append(time_matmul(a, b, device, args.seconds))
        plain.append(plain_loop(a, b, device, args.seconds))
    o, p = statistics.median(ours) / 1e12, statistics.median(plain) / 1e12
    name = torch.cuda.get_device_name(0) if device != "cpu" else "CPU"
    print(
        f"matmul {dtype} {size}x{size} on {name}: envcheck {o:.2f} TFLOP/s, plain torch loop {p:.2f} TFLOP/s "
        f"-> {o / p:.1%} (target on a GPU: >= 90%)"
    )


if __name__ == "__main__":
    main()
