"""Does the static check stay within its target with a big stack installed? Prints; asserts
nothing. (Issue 29: every installed distribution is read for what it requires of torch.)

A site folder of N fake distributions (dist-info folders with METADATA headers, a long
description after them, a quarter requiring torch, some recorded from a wheel URL in
direct_url.json, a few labelled for a torch) plus a fake torch is put first on PYTHONPATH;
`envcheck check --no-deep` runs against it and against the same folder with no distribution
but torch, interleaved with the NVML floor (bench_targets.py), as fresh processes.

    python benchmarks/bench_stack.py [--dists 300] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_targets
from bench_targets import FLOOR, in_an_empty_folder, measure


def site(root: Path, n: int) -> Path:
    """A site folder with a fake torch 2.13.0+cu126 and ``n`` other distributions."""
    root.mkdir(parents=True)
    (root / "torch").mkdir()
    (root / "torch" / "__init__.py").write_text("")
    (root / "torch" / "version.py").write_text("__version__ = '2.13.0+cu126'\ncuda = '12.6'\n")
    _dist(root, "torch", "2.13.0+cu126", [])
    for i in range(n):
        requires = ["torch>=2.0", "numpy"] if i % 4 == 0 else ["requests"]
        version = f"1.{i}.0" + ("+pt21cu121" if i % 50 == 7 else "")
        info = _dist(root, f"pkg{i}", version, requires)
        if i % 20 == 4:  # requires torch: its recorded wheel is read
            url = f"https://example.org/pkg{i}-1.{i}.0%2Bcu12torch2.7cxx11abiTRUE-py3-none-any.whl"
            (info / "direct_url.json").write_text(json.dumps({"url": url, "archive_info": {}}))
    return root


def _dist(root: Path, name: str, version: str, requires: list) -> Path:
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    headers = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    headers += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(headers) + "\n\n" + "A long description.\n" * 200)
    (info / "INSTALLER").write_text("pip\n")
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dists", type=int, default=300)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    script = shutil.which("envcheck") or sys.exit("envcheck is not installed here")
    tmp = Path(tempfile.mkdtemp(prefix="envcheck-bench-stack-"))
    try:
        big, empty = site(tmp / "big", args.dists), site(tmp / "empty", 0)
        floor = [sys.executable, "-c", FLOOR]
        command = [script, "check", "--no-deep"]
        runs: dict = {"big": [], "empty": [], "floor": []}
        env = bench_targets.ENV
        with in_an_empty_folder():
            for i in range(args.runs + 1):
                for key, path in (("big", big), ("empty", empty)):
                    env["PYTHONPATH"] = str(path)
                    run = measure(command)
                    if i:
                        runs[key].append(run)
                env.pop("PYTHONPATH", None)
                run = measure(floor)
                if i:
                    runs["floor"].append(run)
        cpu = {k: statistics.median(r.cpu for r in v) for k, v in runs.items()}
        for key, label in (("empty", "torch alone"), ("big", f"{args.dists} distributions")):
            ratio = statistics.median(a.cpu / b.cpu for a, b in zip(runs[key], runs["floor"]))
            print(
                f"check --no-deep, {label:17} {cpu[key]:.3f} s CPU, {ratio:.2f}x the NVML floor "
                f"({cpu['floor']:.3f} s); peak {max(r.rss for r in runs[key]):.1f} MiB; "
                f"exit {sorted({r.code for r in runs[key]})}"
            )
        extra = (cpu["big"] - cpu["empty"]) / max(args.dists, 1) * 1e6
        print(f"cost per installed distribution: {extra:.0f} us CPU")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
