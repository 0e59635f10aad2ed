"""CPU seconds `envcheck scan` spends on 100,000 lines of Python (the target: at most 2 s).

Two trees:
- generated: 200 modules of 500 lines each, written like a training codebase (models,
  data, a train loop): every file imports torch, a third of them call ``torch.load``,
  use ``torch.cuda.amp`` or parse ``--local_rank`` (so the prefilter lets them through and
  the parser and the visitor run), the rest use nothing the table knows;
- real: the sources of well-known PyTorch projects' old releases, unpacked from their sdists
  (downloaded here with pip, into a temporary folder: nothing is committed), pasted
  together until they are 100,000 lines when --real is given.

Each tree is scanned several times in this process (the table is loaded once, as one run
does); the median CPU time (time.process_time) is printed, with lines per second.

    python benchmarks/bench_scan.py [--lines 100000] [--runs 5] [--real]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from packaging.version import Version  # noqa: E402

from envcheck.scan import load_changes, scan  # noqa: E402

# Old releases whose code uses what later torch releases changed (see docs/scan.md).
REAL = ("timm==0.4.12", "pytorch-lightning==1.2.10", "torch-scatter==2.0.5")

_PLAIN = '''
class Block{i}(nn.Module):
    """A residual block."""

    def __init__(self, dim: int, hidden: int = 4) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * hidden)
        self.fc2 = nn.Linear(dim * hidden, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))
        return x + y


def make_optimizer_{i}(model, lr=1e-3, weight_decay=0.05):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.ndim <= 1 or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    groups = [{{"params": decay, "weight_decay": weight_decay}}, {{"params": no_decay}}]
    return torch.optim.AdamW(groups, lr=lr)
'''

_USES = """

def restore_{i}(path, model, parser):
    parser.add_argument("--local_rank", type=int, default=0)
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    with torch.cuda.amp.autocast():
        return model(torch.zeros(1, 3))
"""


def generated(folder: Path, lines: int) -> int:
    """Write about ``lines`` lines of Python under ``folder``; returns the lines written."""
    plain = _PLAIN.count("\n")
    per_file, total, n = 500, 0, 0
    while total < lines:
        parts = [
            "import argparse\nimport torch\nimport torch.nn as nn\n",
            "import torch.nn.functional as F\n",
        ]
        count = 4
        i = 0
        while count < per_file:
            parts.append(_PLAIN.format(i=i))
            count += plain
            if n % 3 == 0 and i == 0:
                parts.append(_USES.format(i=i))
                count += _USES.count("\n")
            i += 1
        package = folder / f"pkg{n // 20}"
        package.mkdir(exist_ok=True)
        (package / f"mod{n}.py").write_text("".join(parts))
        total += count
        n += 1
    return total


def real(folder: Path, lines: int) -> int:
    """Unpack the REAL sdists into ``folder`` (copies until ``lines``); returns the lines.
    pip only downloads them (no build isolation: preparing their metadata installs nothing,
    and torch-scatter's setup.py imports the torch already here); each project's own scan
    against torch 2.6 is printed first."""
    download = folder / "_sdists"
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
               ":all:", "--no-build-isolation", "-d", str(download), *REAL]  # fmt: skip
    subprocess.run(command, check=True)
    total, copy = 0, 0
    table = load_changes()
    while total < lines:
        for archive in sorted(download.glob("*.tar.gz")):
            target = folder / f"copy{copy}"
            with tarfile.open(archive) as tar:
                tar.extractall(target)
            if copy < len(REAL):
                result = scan(str(target), Version("2.6"), table)
                print(f"  {archive.name}: {result.summary()}")
            total += sum(len(p.read_bytes().splitlines()) for p in target.rglob("*.py"))
            copy += 1
            if total >= lines:
                break
    return total


def measure(folder: Path, runs: int) -> List[float]:
    table = load_changes()
    times = []
    for _ in range(runs):
        start = time.process_time()
        scan(str(folder), Version("2.6"), table)
        times.append(time.process_time() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--real", action="store_true", help="also old releases' sdists")
    args = parser.parse_args()
    trees = [("generated", generated)] + ([("real sdists", real)] if args.real else [])
    for name, make in trees:
        with tempfile.TemporaryDirectory() as tmp:
            written = make(Path(tmp), args.lines)
            times = measure(Path(tmp), args.runs)
            median = statistics.median(times)
            print(
                f"{name}: {written} lines, median {median:.3f} s CPU over {args.runs} runs "
                f"({written / median / 1000:.0f}k lines/s; target: 100k lines <= 2 s), "
                f"min {min(times):.3f} s"
            )


if __name__ == "__main__":
    main()
