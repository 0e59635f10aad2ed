"""Rank 0's judgement of a distributed smoke run: a verdict per rank (ok, slow, slow link,
failed, missing, sharing a GPU, not run) and the problems in one list, from the records each
rank wrote. The text table and the HTML page show it; neither judges again, and the exit
code is envcheck.verdict's, from the same problems.
"""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional, Tuple

from .._record import field, record
from .._text import int_ranges
from .launch import Launch

SLOW = 0.8  # a rank or link below 80% of the median is called slow

Record = Dict[str, Any]  # one rank's record, as it wrote it to the store (JSON)


def shared_gpus(records: List[Record]) -> List[Tuple[str, str, List[int]]]:
    """(host, GPU, ranks) for each GPU that two or more ranks of a host would use."""
    users: Dict[Tuple[str, str], List[int]] = {}
    for r in records:
        if r.get("gpu"):
            users.setdefault((r["host"], r["gpu"]), []).append(r["rank"])
    return [(host, gpu, sorted(ranks)) for (host, gpu), ranks in users.items() if len(ranks) > 1]


def crowded_hosts(records: List[Record]) -> Dict[str, str]:
    """host -> why its CPU ranks' matmul figures are not comparable: they ran at once with
    more threads than the host has CPUs, so each got a share of the cores, not a slow device."""
    threads: Dict[str, int] = {}
    cpus: Dict[str, int] = {}
    ranks: Dict[str, int] = {}
    for r in records:
        if r.get("threads") and r.get("cpus"):
            threads[r["host"]] = threads.get(r["host"], 0) + r["threads"]
            cpus[r["host"]] = r["cpus"]
            ranks[r["host"]] = ranks.get(r["host"], 0) + 1
    return {
        host: f"{ranks[host]} ranks x their threads ({total}) on {cpus[host]} CPUs"
        for host, total in threads.items()
        if total > cpus[host]
    }


def ran(r: Record) -> bool:
    """Whether the rank ran its workloads (or failed trying), rather than only joining a job
    that did not start."""
    return "matmul" in r or "error" in r


def passed(r: Record) -> bool:
    return r.get("matmul") == "passed" and r.get("all_reduce") == "passed" and "link" not in r


@record(frozen=True)
class RankVerdict:
    """One rank's verdict: ``kind`` for whoever colours it (ok, slow, slow_link, failed,
    missing, shared, not_run), ``text`` as the table prints it."""

    kind: str
    text: str

    @property
    def short(self) -> str:
        """The text without its details: "SLOW", "FAILED", "not run"."""
        return self.text.split(":")[0].split(" (")[0]


@record
class RankJudgement:
    """What rank 0 concludes from the records: a verdict per rank ("ok", "SLOW (..)", "SLOW
    LINK to rank N (..)", "FAILED: ..", "MISSING", "SHARES its GPU ..", "not run ..") and the
    problems in one list. The text table and the HTML page both show this; neither judges
    again."""

    world: int
    verdicts: Dict[int, RankVerdict]
    problems: List[str]
    hosts: int
    nodes: int
    notes: List[str] = field(default_factory=list)  # what was not compared, and why

    @property
    def ok(self) -> bool:
        return not self.problems


def judge_ranks(
    records: List[Record],
    launch: Optional[Launch] = None,
    missing: Optional[List[int]] = None,
) -> RankJudgement:
    """Failed and missing ranks, nodes without a working rank, ranks and links slower than
    80% of the median."""
    missing = list(missing or [])
    by_rank = {r["rank"]: r for r in records}
    crowded = crowded_hosts(records)
    medians = _Medians.of(records, crowded)
    world = launch.world_size if launch else len(records) + len(missing)
    sharing, problems = _sharing(records)
    verdicts: Dict[int, RankVerdict] = {}
    for rank in range(world):
        r = by_rank.get(rank)
        if r is None:
            verdicts[rank] = RankVerdict("missing", "MISSING")
            continue
        verdict, problem = _rank_verdict(rank, r, sharing, crowded, medians)
        if verdict.kind == "ok":
            verdict, problem = _link_verdict(
                rank, r, by_rank.get((rank + 1) % world, {}), world, medians
            )
        if problem:
            problems.append(problem)
        verdicts[rank] = verdict
    problems = _job_problems(records, launch, missing) + problems
    hosts = len({r["host"] for r in records})
    notes = [
        f"matmul not compared on {host}: {why}"
        for host, why in sorted(crowded.items())
        if any(r.get("tflops") for r in records if r["host"] == host)
    ]
    nodes = len({r["node"] for r in records})
    return RankJudgement(world, verdicts, problems, hosts, nodes, notes)


@record(frozen=True)
class _Medians:
    """The medians ranks and links are compared with (None: nothing to compare)."""

    tflops: Optional[float]
    link_gbps: Optional[float]

    @classmethod
    def of(cls, records: List[Record], crowded: Dict[str, str]) -> _Medians:
        speeds = [r["tflops"] for r in records if r.get("tflops") and r["host"] not in crowded]
        links = [r["link_gbps"] for r in records if r.get("link_gbps")]
        return cls(
            statistics.median(speeds) if speeds else None,
            statistics.median(links) if links else None,
        )


def _sharing(records: List[Record]) -> Tuple[Dict[int, List[int]], List[str]]:
    """rank -> the other ranks on its GPU, and a problem for each GPU that ranks share."""
    sharing: Dict[int, List[int]] = {}
    problems = []
    for host, gpu, ranks in shared_gpus(records):
        for rank in ranks:
            sharing[rank] = [o for o in ranks if o != rank]
        problems.append(
            f"ranks {int_ranges(ranks, ', ')} on {host} share one GPU ({gpu}), which NCCL "
            "refuses ('Duplicate GPU detected'): run one task per GPU (srun --ntasks-per-node="
            "<GPUs per node>, or --gpus-per-task=1; torchrun --nproc-per-node=<GPUs per node>)"
        )
    return sharing, problems


def _rank_verdict(
    rank: int,
    r: Record,
    sharing: Dict[int, List[int]],
    crowded: Dict[str, str],
    medians: _Medians,
) -> Tuple[RankVerdict, Optional[str]]:
    """A rank's own verdict (sharing, not run, failed, slow) and the problem it adds."""
    median = medians.tflops
    if rank in sharing:
        return RankVerdict(
            "shared", f"SHARES its GPU with rank {int_ranges(sharing[rank], ', ')}"
        ), None
    if not ran(r):
        return RankVerdict("not_run", "not run (the job did not start)"), None
    if not passed(r):
        return RankVerdict("failed", "FAILED: " + r.get("error", "")), (
            f"rank {rank} on {r['host']} failed"
        )
    if median and r["host"] not in crowded and r["tflops"] < SLOW * median:
        return RankVerdict("slow", f"SLOW ({r['tflops'] / median:.0%} of the median)"), (
            f"rank {rank} on {r['host']} is slow"
        )
    return RankVerdict("ok", "ok"), None


def _link_verdict(
    rank: int, r: Record, nxt: Record, world: int, medians: _Medians
) -> Tuple[RankVerdict, Optional[str]]:
    """An ok rank's verdict on its send to the next rank of the ring."""
    link, link_median = r.get("link_gbps"), medians.link_gbps
    if not (link and link_median and link < SLOW * link_median):
        return RankVerdict("ok", "ok"), None
    return RankVerdict(
        "slow_link", f"SLOW LINK to rank {(rank + 1) % world} ({link / link_median:.0%})"
    ), (f"link rank {rank} -> {(rank + 1) % world} ({r['host']} -> {nxt.get('host', '?')}) is slow")


def _job_problems(records: List[Record], launch: Optional[Launch], missing: List[int]) -> List[str]:
    """What is wrong with the job as a whole, first: nodes where no rank passed, nodes that
    never joined, ranks that never reported."""
    out = []
    ran_records = [r for r in records if ran(r)]
    dead = sorted({r["node"] for r in ran_records} - {r["node"] for r in ran_records if passed(r)})
    if dead:
        out.append(f"node(s) {int_ranges(dead, ', ')}: no rank passed")
    nodes_seen = {r["node"] for r in records}
    expected_nodes = launch.nodes if launch else None
    if expected_nodes and len(nodes_seen) < expected_nodes:
        absent = sorted(set(range(expected_nodes)) - nodes_seen)
        out.append(f"node(s) {int_ranges(absent, ', ')} of {expected_nodes} never joined")
    if missing:
        out.append(f"ranks {int_ranges(missing, ', ')} never reported (within the timeout)")
    return out


__all__ = [
    "SLOW",
    "RankJudgement",
    "RankVerdict",
    "Record",
    "crowded_hosts",
    "judge_ranks",
    "passed",
    "ran",
    "shared_gpus",
]
