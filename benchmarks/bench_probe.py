"""How fast and how lean is `envcheck probe`? Prints figures; asserts nothing.

Side by side in one run, the commands interleaved round by round so that
machine noise hits them alike:

  static   `envcheck probe --no-deep --json`     vs  `python -m torch.utils.collect_env`
  deep     `envcheck probe --json`               vs  `python -c "import torch"`

Each is a fresh process (what a user runs), timed as bench_targets.py times them;
a ratio is the median of the N per-round ratios, of CPU time and of wall time; peak RSS
is the largest resident set of the process or any child it waited for (wait4's ru_maxrss). It also lists any torch module the static probe imported
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
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_targets import Run, in_an_empty_folder, measure


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
    results: Dict[str, List[Run]] = {name: [] for name in commands}
    with in_an_empty_folder():
        for argv in commands.values():  # warm the page cache once; not counted
            measure(argv)
        for _ in range(args.runs):  # interleaved: a busy spell hits every command of a round
            for name, argv in commands.items():
                results[name].append(measure(argv))

    print(f"python {sys.version.split()[0]} at {py}, {args.runs} runs each, {os.cpu_count()} CPUs")
    print(f"{'command':28} {'CPU s':>7} {'wall s':>7} {'peak RSS MB':>12}")
    for name, runs in results.items():
        cpu = statistics.median(r.cpu for r in runs)
        wall = statistics.median(r.wall for r in runs)
        print(f"{name:28} {cpu:7.3f} {wall:7.3f} {max(r.rss for r in runs):12.1f}")

    def ratio(a: str, b: str, what: str) -> float:  # the median of the per-round ratios
        return statistics.median(
            getattr(x, what) / getattr(y, what) for x, y in zip(results[a], results[b])
        )

    rss = max(r.rss for r in results["envcheck probe --no-deep"])
    print()
    print(
        f"static probe: {ratio('collect_env', 'envcheck probe --no-deep', 'cpu'):.1f}x less CPU "
        f"({ratio('collect_env', 'envcheck probe --no-deep', 'wall'):.1f}x faster) than "
        f"collect_env (target >= 8x), peak RSS {rss:.1f} MB (target <= 40 MB)"
    )
    print(
        f"deep probe:   {ratio('envcheck probe (deep)', 'import torch', 'cpu'):.2f}x the CPU "
        f"({ratio('envcheck probe (deep)', 'import torch', 'wall'):.2f}x the wall time) of "
        "`import torch` (target <= 1.15x)"
    )
    for command in ("probe", "check"):
        modules = torch_modules_imported(py, command)
        print(f"torch modules imported by `envcheck {command} --no-deep`: {modules or 'none'}")


if __name__ == "__main__":
    main()
