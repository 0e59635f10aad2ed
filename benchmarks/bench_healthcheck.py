"""How cheap is `envcheck healthcheck`? Prints figures; asserts nothing.

Side by side, interleaved, median of N runs:
  envcheck healthcheck                                  (the console script's fast path)
  python -c "import pynvml; pynvml.nvmlInit()"          (the bare NVML call, whatever it does here)

Targets (issue 6): <= 2x the bare call's wall time, <= 30 MB peak RSS.

    python benchmarks/bench_healthcheck.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time

BARE = "import pynvml\ntry:\n    pynvml.nvmlInit()\nexcept pynvml.NVMLError:\n    pass\n"


def as_installed():
    """The environment to time envcheck in, as ``pip install`` leaves it: pip compiles
    every module's bytecode at install time (pynvml's and click's included), but an
    editable checkout under PYTHONDONTWRITEBYTECODE=1 compiles envcheck's sources anew
    at each start (about 50 ms here). So compile them once and let Python read them."""
    import compileall

    import envcheck

    compileall.compile_dir(os.path.dirname(envcheck.__file__), quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


ENV = as_installed()


def measure(argv):
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        argv,
        ENV,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ],
    )
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    script = shutil.which("envcheck") or os.path.join(os.path.dirname(sys.executable), "envcheck")
    commands = {
        "envcheck healthcheck": [script, "healthcheck"],
        "python -m envcheck healthcheck": [sys.executable, "-m", "envcheck", "healthcheck"],
        "bare pynvml.nvmlInit()": [sys.executable, "-c", BARE],
    }
    for argv in commands.values():
        measure(argv)  # warm-up
    results = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            results[name].append(measure(argv))
    med = {n: statistics.median(t for t, _, _ in r) for n, r in results.items()}
    print(f"{'command':32} {'median s':>9} {'peak RSS MB':>12} {'exit':>5}")
    for name, runs in results.items():
        print(f"{name:32} {med[name]:9.3f} {max(m for _, m, _ in runs):12.1f} {runs[-1][2]:>5}")
    ratio = med["envcheck healthcheck"] / med["bare pynvml.nvmlInit()"]
    rss = max(m for _, m, _ in results["envcheck healthcheck"])
    print(
        f"\nhealthcheck: {ratio:.2f}x the bare NVML call (target <= 2x), peak RSS {rss:.1f} MB (target <= 30 MB)"
    )


if __name__ == "__main__":
    main()
