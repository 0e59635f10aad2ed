"""The smoke test across nodes, under torchrun (torchrun is the launcher, not us).

    torchrun --nnodes N --nproc-per-node G -m envcheck.smoke
    envcheck smoke --distributed            (the same, inside a torchrun-launched process)

Every rank runs matmul on its device; all ranks run all_reduce together; rank 0
gathers each rank's figures and host name and prints one table, naming the
ranks or hosts that failed or are clearly slower than the median.
"""

from __future__ import annotations

import datetime
import os
import socket
import statistics
from typing import Any, Dict, List

SLOW = 0.8  # a rank below 80% of the median matmul throughput is called slow


def in_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


def run(timeout: float = 120.0) -> int:
    import torch
    import torch.distributed as dist

    from . import workloads

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = f"cuda:{local_rank}" if cuda else "cpu"
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=timeout))
    record: Dict[str, Any] = {
        "rank": rank,
        "node": int(os.environ.get("GROUP_RANK", "0")),
        "local_rank": local_rank,
        "host": socket.gethostname(),
        "device": device,
    }
    try:
        mm = workloads.matmul(device, seconds=0.3)
        lowp = workloads.low_precision(device)
        record.update(matmul="passed", tflops=mm[f"{lowp}_tflops"], dtype=lowp)
    except Exception as exc:
        record.update(matmul="failed", error=f"{type(exc).__name__}: {exc}"[:300])
    try:
        ar = workloads.all_reduce(device)
        record.update(all_reduce="passed", busbw_gbps=ar["sizes"][-1]["busbw_gbps"])
    except Exception as exc:
        record.update(all_reduce="failed", error=f"{type(exc).__name__}: {exc}"[:300])
    records = gather_json(record, device)
    dist.destroy_process_group()
    ok = all(r.get("matmul") == "passed" and r.get("all_reduce") == "passed" for r in records)
    if rank == 0:
        print(render_table(records))
    return 0 if ok else 1


def gather_json(record: Dict[str, Any], device: str) -> List[Dict[str, Any]]:
    """all_gather of small JSON records as byte tensors (all_gather_object needs numpy)."""
    import json

    import torch
    import torch.distributed as dist

    world = dist.get_world_size()
    data = json.dumps(record).encode()
    size = torch.tensor([len(data)], dtype=torch.int64, device=device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    longest = int(max(s.item() for s in sizes))
    buf = torch.zeros(longest, dtype=torch.uint8, device=device)
    buf[: len(data)] = torch.tensor(list(data), dtype=torch.uint8, device=device)
    bufs = [torch.zeros_like(buf) for _ in range(world)]
    dist.all_gather(bufs, buf)
    return [
        json.loads(bytes(b[: int(n.item())].cpu().tolist()).decode()) for b, n in zip(bufs, sizes)
    ]


def render_table(records: List[Dict[str, Any]]) -> str:
    speeds = [r["tflops"] for r in records if r.get("tflops")]
    median = statistics.median(speeds) if speeds else None
    lines = [
        f"envcheck smoke: {len(records)} ranks on {len({r['host'] for r in records})} host(s), "
        f"{len({r['node'] for r in records})} node(s)",
        f"{'rank':>4} {'node':>4} {'host':20} {'device':8} {'matmul TFLOP/s':>15} {'all_reduce busbw GB/s':>22}  verdict",
    ]
    problems = []
    for r in sorted(records, key=lambda r: r["rank"]):
        verdict = "ok"
        if r.get("matmul") != "passed" or r.get("all_reduce") != "passed":
            verdict = "FAILED: " + r.get("error", "")
            problems.append(f"rank {r['rank']} on {r['host']} failed")
        elif median and r["tflops"] < SLOW * median:
            verdict = f"SLOW ({r['tflops'] / median:.0%} of the median)"
            problems.append(f"rank {r['rank']} on {r['host']} is slow")
        tflops = f"{r['tflops']:.3f}" if r.get("tflops") is not None else "-"
        busbw = f"{r['busbw_gbps']:.3f}" if r.get("busbw_gbps") is not None else "-"
        lines.append(
            f"{r['rank']:>4} {r['node']:>4} {r['host'][:20]:20} {r['device']:8} {tflops:>15} {busbw:>22}  {verdict}"
        )
    lines.append("all ranks ok" if not problems else "; ".join(problems))
    return "\n".join(lines)
