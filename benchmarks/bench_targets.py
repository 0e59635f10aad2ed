"""envcheck's speed targets (issue 25), each a ratio against its anchor. Prints; asserts nothing.

Each figure runs a command and its anchor as fresh processes, one after the other, N times
(interleaved: a busy spell of the machine hits both of a pair alike), and prints the median of
the N per-pair ratios, of CPU time (user + system of the process and every child it waited
for: the figure that load disturbs least) and of wall time, with each side's median and its
peak RSS (the largest resident set of the process or any child it waited for).

  figure        command                                anchor                        target
  static        envcheck check --no-deep               the NVML floor (below)        <= 2.5x
  healthcheck   envcheck healthcheck                   the NVML floor                <= 1.5x
  deep          envcheck check                         python -c "import torch"      <= 1.10x
  smoke         envcheck smoke --json                  python -c "import torch"      <= 4x

The NVML floor is what any tool that asks NVML pays: ``python -c "import pynvml;
pynvml.nvmlInit()"`` (a failing init where there is no driver). Peak memory targets: static
check <= 30 MiB, healthcheck <= 25 MiB. ``diagnose`` per MiB is bench_diagnose.py's figure;
the test suite's time is suite_under_load.sh's. Run from a checkout whose envcheck is installed
in the interpreter that runs this script:

    python benchmarks/bench_targets.py [--runs 9] [--only static,healthcheck] ; uptime
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

FLOOR = "import pynvml\ntry:\n    pynvml.nvmlInit()\nexcept pynvml.NVMLError:\n    pass\n"


class Run(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds, user + system, children included
    rss: float  # MiB
    code: int


class Figure(NamedTuple):
    name: str
    command: List[str]
    anchor: List[str]
    anchor_name: str
    target: float
    rss_target: Optional[float]  # MiB


def as_installed() -> Dict[str, str]:
    """The environment to time envcheck in, as ``pip install`` leaves it: pip compiles every
    module's bytecode at install time, but an editable checkout under
    PYTHONDONTWRITEBYTECODE=1 compiles envcheck's sources anew at each start (about 50 ms).
    So compile them once and let Python read them."""
    import compileall

    import envcheck

    compileall.compile_dir(os.path.dirname(envcheck.__file__), quiet=1)
    # Not an activated environment's (envcheck would describe that one, through a child
    # interpreter: see envcheck.target), and not the byte-code switch (above).
    dropped = ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", "CONDA_PREFIX")
    return {k: v for k, v in os.environ.items() if k not in dropped}


ENV = as_installed()


def measure(argv: Sequence[str]) -> Run:
    """One fresh process of ``argv``, its output to /dev/null."""
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        list(argv),
        ENV,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ],
    )
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return Run(wall, usage.ru_utime + usage.ru_stime, rss, os.waitstatus_to_exitcode(status))


@contextlib.contextmanager
def in_an_empty_folder() -> Iterator[None]:
    """Run the commands timed in an empty folder. In a project's folder envcheck describes the
    project's .venv, through a child interpreter, and reads its [tool.envcheck]: another
    figure (until 2026-12-08 these were taken in the checkout, so of its .venv: the static
    check read 4.6-5.2x there, 3.3x here, the same day)."""
    back = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as empty:
        os.chdir(empty)
        try:
            yield
        finally:
            os.chdir(back)


def paired(figure: Figure, runs: int) -> Tuple[List[Run], List[Run]]:
    measure(figure.command), measure(figure.anchor)  # warm the page cache; not counted
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(measure(figure.command))
        theirs.append(measure(figure.anchor))
    return ours, theirs


def figures(python: str, script: str) -> List[Figure]:
    floor = [python, "-c", FLOOR]
    torch = [python, "-c", "import torch"]
    return [
        Figure("static", [script, "check", "--no-deep"], floor, "NVML floor", 2.5, 30),
        Figure("healthcheck", [script, "healthcheck"], floor, "NVML floor", 1.5, 25),
        Figure("deep", [script, "check"], torch, "import torch", 1.10, None),
        Figure("smoke", [script, "smoke", "--json"], torch, "import torch", 4.0, None),
    ]


def middle_half(ratios: Sequence[float]) -> str:
    """The middle half of the per-pair ratios (the first to the third quartile): how far one
    pair strays from the median on this machine today. A target nearer the median than this
    is met on some days and not on others."""
    if len(ratios) < 4:
        return "too few pairs"
    low, _, high = statistics.quantiles(ratios, n=4)
    return f"middle half {low:.2f}-{high:.2f}"


def report(figure: Figure, ours: List[Run], theirs: List[Run]) -> str:
    ratios = [a.cpu / b.cpu for a, b in zip(ours, theirs)]
    cpu = statistics.median(ratios)
    wall = statistics.median(a.wall / b.wall for a, b in zip(ours, theirs))
    rss = max(r.rss for r in ours)
    met = "met" if cpu <= figure.target else "NOT met"
    memory = ""
    if figure.rss_target is not None:
        memory = f"; peak {rss:.1f} MiB (target <= {figure.rss_target:.0f}: " + (
            "met)" if rss <= figure.rss_target else "NOT met)"
        )
    codes = sorted({r.code for r in ours})
    return (
        f"{figure.name:12} {cpu:5.2f}x CPU ({middle_half(ratios)})  {wall:5.2f}x wall  "
        f"vs {figure.anchor_name:13}"
        f" (ours {statistics.median(r.cpu for r in ours):.3f} s CPU "
        f"{statistics.median(r.wall for r in ours):.3f} s wall, anchor "
        f"{statistics.median(r.cpu for r in theirs):.3f} s CPU "
        f"{statistics.median(r.wall for r in theirs):.3f} s wall)  "
        f"target <= {figure.target}x: {met}{memory}; exit {codes}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="pairs per figure (>= 7)")
    parser.add_argument("--only", default="", help="comma-separated figure names")
    args = parser.parse_args()
    script = shutil.which("envcheck") or os.path.join(os.path.dirname(sys.executable), "envcheck")
    script = os.path.abspath(script)
    chosen = [f for f in figures(sys.executable, script) if not args.only or f.name in args.only]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} pairs per figure")
    print(f"load before: {os.getloadavg()[0]:.2f}")
    with in_an_empty_folder():
        for figure in chosen:
            print(report(figure, *paired(figure, max(args.runs, 1))), flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
