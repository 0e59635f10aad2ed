"""The distributed smoke's text table: one line per rank with rank 0's verdict on it
(envcheck.smoke.ranks.judge_ranks), what was not compared, then what is wrong."""

from __future__ import annotations

from typing import List, Optional

from ..smoke.launch import Launch
from ..smoke.ranks import Record, judge_ranks


def render_table(
    records: List[Record],
    launch: Optional[Launch] = None,
    missing: Optional[List[int]] = None,
) -> str:
    """One line per rank with its verdict (judge_ranks), what was not compared, then what is
    wrong (the last line)."""
    j = judge_ranks(records, launch, missing)
    by_rank = {r["rank"]: r for r in records}
    head = f"envcheck smoke: {len(records)} ranks on {j.hosts} host(s), {j.nodes} node(s)"
    if launch:
        head += f" (launched by {launch.launcher}, {j.world} ranks expected)"
    lines = [
        head,
        f"{'rank':>4} {'node':>4} {'host':20} {'device':8} {'matmul TFLOP/s':>15} "
        f"{'busbw GB/s':>11} {'link GB/s':>14}  verdict",
    ]
    for rank in range(j.world):
        r = by_rank.get(rank)
        if r is None:
            lines.append(
                f"{rank:>4} {'?':>4} {'-':20} {'-':8} {'-':>15} {'-':>11} {'-':>14}  MISSING"
            )
            continue
        link = r.get("link_gbps")
        tflops = f"{r['tflops']:.3f}" if r.get("tflops") is not None else "-"
        busbw = f"{r['busbw_gbps']:.3f}" if r.get("busbw_gbps") is not None else "-"
        to = f"{link:.3f} ->{(rank + 1) % j.world}" if link is not None else "-"
        lines.append(
            f"{rank:>4} {r['node']:>4} {r['host'][:20]:20} {r['device']:8} {tflops:>15} "
            f"{busbw:>11} {to:>14}  {j.verdicts[rank].text}"
        )
    lines += j.notes
    lines.append("all ranks ok" if j.ok else "; ".join(j.problems))
    return "\n".join(lines)
