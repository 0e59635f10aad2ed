#!/usr/bin/env bash
# The prepared GPU check: one short script for a machine with NVIDIA GPUs (under 5 minutes).
#
#   bash benchmarks/gpu_check.sh            # from the repository root; PYTHON=... to pick one
#
# It runs envcheck as a user would (check --smoke --json, healthcheck, probe --json) and sets
# envcheck's own figures beside independent ones measured in the same run: a hand-written
# torch bf16 matmul loop timed with CUDA events, and nccl-tests' all_reduce_perf when it is on
# PATH. It prints the ratios; nothing is asserted (a GPU machine is a measurement, not a test).
# Needs a Python with torch (CUDA build) and envcheck's dependencies; envcheck itself is taken
# from this checkout.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
step() { echo; echo "== $*"; }

step "machine"
nvidia-smi -L 2>&1 | head -16
nvidia-smi topo -m 2>&1 | head -24
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'

step "envcheck probe --json"
start=$(date +%s%N)
timeout 120 "$PY" -m envcheck probe --json > "$out/probe.json"; echo "exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"

step "envcheck healthcheck"
start=$(date +%s%N)
timeout 60 "$PY" -m envcheck healthcheck; echo "exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"

step "envcheck check --smoke --json"
start=$(date +%s%N)
timeout 240 "$PY" -m envcheck check --smoke --json > "$out/check.json"; echo "exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"

step "envcheck check --format html (topology matrix and compatibility grid of this machine)"
start=$(date +%s%N)
timeout 120 "$PY" -m envcheck check --format html > "$out/report.html"; echo "exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms, $(wc -c < "$out/report.html") bytes"

step "a hand-written bf16 matmul loop (CUDA events, 8192^3, 50 iterations after 10)"
timeout 60 "$PY" - > "$out/reference.json" <<'EOF'
import json, torch
n, figures = 8192, {}
for i in range(torch.cuda.device_count()):
    dev = torch.device("cuda", i)
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    for _ in range(10):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(50):
        a @ b
    end.record()
    torch.cuda.synchronize(dev)
    figures[f"cuda:{i}"] = 2 * n**3 * 50 / (start.elapsed_time(end) / 1e3) / 1e12
print(json.dumps(figures))
EOF
cat "$out/reference.json"

if command -v all_reduce_perf >/dev/null; then
  step "nccl-tests all_reduce_perf (1 MiB to 1 GiB)"
  gpus=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
  timeout 120 all_reduce_perf -b 1M -e 1G -f 4 -g "$gpus" | tee "$out/nccl_tests.txt" | tail -8
else
  step "nccl-tests: all_reduce_perf not on PATH (skipped)"
fi

step "ratios"
"$PY" - "$out" <<'EOF'
import json, re, sys
from pathlib import Path
out = Path(sys.argv[1])
report = json.loads((out / "check.json").read_text() or "{}")
smoke = report.get("smoke") or []
reference = json.loads((out / "reference.json").read_text() or "{}")
print("verdict:", report.get("verdict"), "| findings:", [f.get("code") for f in report.get("findings", [])])
for r in smoke:
    print(f"{r['name']:10} {r['device']:12} {r['status']:9} {r.get('duration_s', 0):7.2f} s", (r.get("error") or "")[:120])
for r in smoke:
    if r["name"] == "matmul" and r["status"] == "passed":
        ours = r["figures"].get("bfloat16_tflops") or r["figures"].get("float16_tflops")
        ref = reference.get(r["device"])
        if ours and ref:
            print(f"matmul {r['device']}: envcheck {ours:.1f} TFLOP/s, hand loop {ref:.1f}, ratio {ours / ref:.2f}")
    if r["name"] == "all_reduce" and r["status"] == "passed":
        sizes = r["figures"].get("sizes") or []
        one_rank = r["figures"].get("world_size") == 1  # busbw is 0 by definition: not shown
        for s in sizes:
            busbw = "" if one_rank else f"  busbw {s['busbw_gbps']:8.2f}"
            print(f"all_reduce {s['bytes']:>12} B  algbw {s['algbw_gbps']:8.2f}{busbw} GB/s")
        f = r["figures"]
        if f.get("expected_busbw_gbps"):
            peak = max(s["busbw_gbps"] for s in sizes) if sizes else 0
            print(f"expected busbw {f['expected_busbw_gbps']} GB/s ({f.get('expected_basis')}); "
                  f"peak measured {peak:.1f}, ratio {peak / f['expected_busbw_gbps']:.2f}")
        else:
            print("expected busbw: not known:", f.get("expected_unknown"))
        nccl = out / "nccl_tests.txt"
        if nccl.exists() and sizes:
            rows = [l.split() for l in nccl.read_text().splitlines() if re.match(r"\s+\d+\s+\d+\s+float", l)]
            if rows:
                theirs = float(rows[-1][7])  # out-of-place busbw at the largest size
                ours = sizes[-1]["busbw_gbps"]
                print(f"busbw at the largest size: envcheck {ours:.1f} GB/s, nccl-tests {theirs:.1f}, ratio {ours / theirs:.2f}")
EOF
echo; echo "files in $out"
