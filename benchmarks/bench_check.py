"""How fast is `envcheck check --no-deep`, against the floor and against collect_env?
Prints figures; asserts nothing (these machines are noisy).

Side by side, interleaved, median of N runs:
  envcheck check --no-deep                              (the console script)
  python -c "import pynvml; pynvml.nvmlInit()"          (the floor: a bare NVML call)
  python -m torch.utils.collect_env                     (what people run today; when torch is here)

Targets (the core issue): no slower than before the core (0.32 s on the 2-CPU CI machine),
aiming at <= 3x the floor.

    python benchmarks/bench_check.py [--runs 11]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_healthcheck import BARE, measure  # one timing method for both


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    script = shutil.which("envcheck") or os.path.join(os.path.dirname(sys.executable), "envcheck")
    commands = {
        "envcheck check --no-deep": [script, "check", "--no-deep"],
        "bare pynvml.nvmlInit()": [sys.executable, "-c", BARE],
    }
    if importlib.util.find_spec("torch") is not None:
        commands["collect_env"] = [sys.executable, "-m", "torch.utils.collect_env"]
    for argv in commands.values():
        measure(argv)  # warm-up
    results = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            results[name].append(measure(argv))
    med = {n: statistics.median(t for t, _, _ in r) for n, r in results.items()}
    print(f"{'command':28} {'median s':>9} {'peak RSS MB':>12}")
    for name, runs in results.items():
        print(f"{name:28} {med[name]:9.3f} {max(m for _, m, _ in runs):12.1f}")
    check = med["envcheck check --no-deep"]
    print(f"\ncheck --no-deep: {check / med['bare pynvml.nvmlInit()']:.2f}x the floor (aim <= 3x)")
    if "collect_env" in med:
        print(f"                 {med['collect_env'] / check:.1f}x faster than collect_env")


if __name__ == "__main__":
    main()
