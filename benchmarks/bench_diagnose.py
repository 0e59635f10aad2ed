"""CPU seconds `envcheck diagnose` spends per MiB of pasted text (the target: at most 0.3).

Two texts: the real-report corpus (tests/diagnose_corpus/real) pasted together until it is
the size asked for (tool output, tracebacks, templates and prose as reporters wrote them:
every reader and most catalogue patterns at work), and a training log of that size after a
collect_env, ending in one error (what a long paste usually is). Each is read several times
and the median CPU time (time.process_time, this process only) is printed per MiB.

    python benchmarks/bench_diagnose.py [--sizes 1 4] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 4.0], help="MiB")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tables = load_tables()
    diagnose_text("warm up", tables)
    for mib in args.sizes:
        for kind, make in (("corpus", corpus_text), ("training log", training_log)):
            text = make(int(mib * MIB))
            size = len(text.encode("utf-8")) / MIB
            times = []
            for _ in range(args.runs):
                start = time.process_time()
                diagnose_text(text, tables)
                times.append(time.process_time() - start)
            median = statistics.median(times)
            print(
                f"{kind:12} {size:5.2f} MiB: median {median:.3f} s CPU over {args.runs} runs, "
                f"{median / size:.3f} s per MiB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
