"""How fast and how lean is `envcheck probe`? Prints figures; asserts nothing.

Side by side in one run, the commands interleaved round by round so that
machine noise hits them alike:

  static   `envcheck probe --no-deep --json`     vs  `python -m torch.utils.collect_env`
  deep     `envcheck probe --json`               vs  `python -c "import torch"`

Each is a fresh process (what a user runs). Wall time is the median of N runs;
peak RSS is the largest resident set of the process or any child it waited for
(wait4's ru_maxrss). It also lists any torch module the static probe imported
(there must be none), from `python -X importtime`.

Targets (issue 2): static >= 8x faster than collect_env and <= 40 MB peak RSS;
deep <= 1.15x the time of `import torch`.

    python benchmarks/bench_probe.py [--runs 7] [--python PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple


def measure(argv: List[str]) -> Tuple[float, float]:
    """(seconds, peak RSS in MB) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # `check` exits 1 on a machine that is not ready
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    rss_kb = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)  # bytes on macOS
    return elapsed, rss_kb / 1024


def torch_modules_imported(python: str, command: str) -> List[str]:
    out = subprocess.run(
        [python, "-X", "importtime", "-m", "envcheck", command, "--no-deep", "--json"],
        capture_output=True,
        text=True,
    )
    names = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name == "torch" or name.startswith("torch."):
                names.append(name)
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    py = args.python

    commands: Dict[str, List[str]] = {
        "envcheck probe --no-deep": [py, "-m", "envcheck", "probe", "--no-deep", "--json"],
        "envcheck check --no-deep": [py, "-m", "envcheck", "check", "--no-deep", "--json"],
        "collect_env": [py, "-m", "torch.utils.collect_env"],
        "envcheck probe (deep)": [py, "-m", "envcheck", "probe", "--json"],
        "import torch": [py, "-c", "import torch"],
    }
    for argv in commands.values():  # warm the page cache once; not counted
        measure(argv)
    results: Dict[str, List[Tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            results[name].append(measure(argv))

    med = {n: statistics.median(t for t, _ in r) for n, r in results.items()}
    rss = {n: max(m for _, m in r) for n, r in results.items()}
    print(f"python {sys.version.split()[0]} at {py}, {args.runs} runs each, {os.cpu_count()} CPUs")
    print(f"{'command':28} {'median s':>9} {'min s':>7} {'max s':>7} {'peak RSS MB':>12}")
    for name, runs in results.items():
        times = [t for t, _ in runs]
        print(f"{name:28} {med[name]:9.3f} {min(times):7.3f} {max(times):7.3f} {rss[name]:12.1f}")
    static_speedup = med["collect_env"] / med["envcheck probe --no-deep"]
    deep_ratio = med["envcheck probe (deep)"] / med["import torch"]
    print()
    print(
        f"static probe: {static_speedup:.1f}x faster than collect_env (target >= 8x), "
        f"peak RSS {rss['envcheck probe --no-deep']:.1f} MB (target <= 40 MB)"
    )
    print(f"deep probe:   {deep_ratio:.2f}x the time of `import torch` (target <= 1.15x)")
    print(
        f"static check: {med['collect_env'] / med['envcheck check --no-deep']:.1f}x faster than "
        f"collect_env, peak RSS {rss['envcheck check --no-deep']:.1f} MB"
    )
    for command in ("probe", "check"):
        modules = torch_modules_imported(py, command)
        print(f"torch modules imported by `envcheck {command} --no-deep`: {modules or 'none'}")


if __name__ == "__main__":
    main()
