"""CPU seconds `envcheck diagnose` spends per MiB of pasted text (the target: at most 0.3).

Two texts: the real-report corpus (tests/diagnose_corpus/real) pasted together until it is
the size asked for (tool output, tracebacks, templates and prose as reporters wrote them:
every reader and most catalogue patterns at work), and a training log of that size after a
collect_env, ending in one error (what a long paste usually is). For each, three figures:

- **warm**: the median CPU time (time.process_time, this process only) of several reads of
  the text in one process that has read it before, per MiB. Each read pays all its text
  costs (cleaning it, lowering it, cutting it into lines): diagnose_text keeps none of
  them once done (until 2026-12-07 it kept them, and this figure left them out);
- **first**: the same for the first read in a fresh process, as ``envcheck diagnose`` does
  it once per run (the median of ``--fresh`` processes): it also pays what is loaded on first
  use (the tables a judgement reads, the readers' patterns and the wordings the text asks
  compiled; what scanning.py asks of each pattern is read from diagnose/pattern_answers.json,
  worked out ahead). Until 2026-12-07 the readers' patterns were all compiled when
  envcheck.diagnose was imported, before this figure's clock starts (about 20 ms a run it
  left out; the import is now that much cheaper); until 2026-12-08 load_tables parsed every
  built-in table file, also before the clock: a file is now parsed the first time the read
  asks it (the message catalogue, a quarter MiB, among them), so the read pays that;
- **marginal**: what one more MiB costs, from the warm figures of the smallest and largest
  size (the per-run costs that do not grow with the text cancel out).

    python benchmarks/bench_diagnose.py [--sizes 1 4] [--runs 5] [--fresh 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from envcheck.diagnose import diagnose_text  # noqa: E402
from envcheck.tables import load_tables  # noqa: E402

MIB = 1 << 20


def corpus_text(size: int) -> str:
    pieces = [
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "tests/diagnose_corpus/real").glob("*.txt"))
    ]
    out, total = [], 0
    while total < size:
        for piece in pieces:
            out.append(piece)
            total += len(piece.encode("utf-8"))
            if total >= size:
                break
    return "\n\n".join(out)


def training_log(size: int) -> str:
    env = (ROOT / "tests/diagnose_corpus/collect_env_2x_rtx5090.txt").read_text(encoding="utf-8")
    lines, total, i = [env], len(env), 0
    while total < size:
        line = f"Epoch {i // 100} step {i}: loss=0.{i % 997:03d} lr=3.0e-4 samples/s=812.4\n"
        lines.append(line)
        total, i = total + len(line), i + 1
    lines.append(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    return "".join(lines)


TEXTS = {"corpus": corpus_text, "training log": training_log}
# a fresh process: the tables loaded, then one read of the text (what a run of diagnose does)
_FIRST = """
import sys, time
sys.path.insert(0, {root!r}); sys.path.insert(0, {here!r})
from bench_diagnose import TEXTS
from envcheck.diagnose import diagnose_text
from envcheck.tables import load_tables
tables = load_tables(); text = TEXTS[{kind!r}]({size})
start = time.process_time(); diagnose_text(text, tables); print(time.process_time() - start)
"""


def first_read(kind: str, size: int, processes: int) -> float:
    """The median CPU seconds of the first read of the text in ``processes`` fresh ones,
    envcheck's modules read from their bytecode as an installed envcheck's are (the read
    imports some on first use)."""
    from bench_targets import as_installed

    env = as_installed()
    code = _FIRST.format(root=str(ROOT), here=str(ROOT / "benchmarks"), kind=kind, size=size)
    times = []
    for _ in range(processes):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        times.append(float(done.stdout.split()[-1]))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 4.0], help="MiB")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fresh", type=int, default=3, help="fresh processes (0: none)")
    args = parser.parse_args()
    tables = load_tables()
    diagnose_text("warm up", tables)
    for kind, make in TEXTS.items():
        warm = {}
        for mib in args.sizes:
            text = make(int(mib * MIB))
            size = len(text.encode("utf-8")) / MIB
            times = []
            for _ in range(args.runs):
                start = time.process_time()
                diagnose_text(text, tables)
                times.append(time.process_time() - start)
            warm[size] = median = statistics.median(times)
            line = f"{kind:12} {size:5.2f} MiB: warm {median / size:.3f} s per MiB"
            if args.fresh:
                first = first_read(kind, int(mib * MIB), args.fresh)
                line += f", first in a process {first / size:.3f}"
            print(f"{line}  (warm median {median:.3f} s CPU over {args.runs} runs)")
        if len(warm) > 1:
            (small, t_small), (large, t_large) = min(warm.items()), max(warm.items())
            marginal = (t_large - t_small) / (large - small)
            print(f"{kind:12} marginal: {marginal:.3f} s per MiB ({small:.2f} to {large:.2f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
