"""The smoke test across nodes, under torchrun or Slurm (they launch; envcheck does not).

    torchrun --nnodes N --nproc-per-node G -m envcheck.smoke
    srun --nodes N --ntasks-per-node G envcheck smoke --distributed
    envcheck smoke --distributed            (inside a torchrun-launched process)

Every rank registers in a rendezvous store on the first rank's host before any collective, so
a rank or a whole node that never starts is named after the timeout instead of hanging every
other rank. Then every rank runs matmul on its device, all ranks run the all_reduce sweep
together, and each rank times a send to the next rank (a ring: every link between neighbours,
and so every link between nodes, is measured). Each rank writes its record to the store, so a
rank that dies midway leaves the others' results readable; rank 0 prints one table naming the
slow ranks, slow links, failed ranks, and nodes with no working rank.

Each rank takes the GPU ``LOCAL_RANK % visible GPUs``: all of a node's GPUs with one task per
GPU, or its own one where Slurm gives each task its GPU (``--gpus-per-task=1`` sets
CUDA_VISIBLE_DEVICES per task). Two ranks of a host on one GPU are stopped before NCCL,
which refuses them ("Duplicate GPU detected"), and named with the fix.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ..exitcodes import INTERNAL, NOT_READY
from ..probes.system import cpus_affinity
from ..values import int_ranges
from .launch import Launch, LaunchError, detect

SLOW = 0.8  # a rank or link below 80% of the median is called slow
LINK_BYTES = {"cuda": 64 * 2**20, "cpu": 4 * 2**20}
LINK_ITERS = 3


def in_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


def launched(env: Optional[Mapping[str, str]] = None) -> Launch:
    """This process's place in the job, from torchrun's or Slurm's variables (LaunchError when
    neither launched it)."""
    launch = detect(os.environ if env is None else env)
    if launch is None:
        raise LaunchError(
            "not launched by torchrun or srun: RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT and "
            "SLURM_PROCID/SLURM_NTASKS are unset"
        )
    return launch


def run(timeout: float = 120.0, launch: Optional[Launch] = None, html: Optional[str] = None) -> int:
    """Join the job, run the workloads, report; 0 when every rank passed, else 1. ``html``:
    rank 0 also writes the page of envcheck.report.html.render_ranks_html there (checked
    before the run by the CLI; 3 when writing it fails)."""
    # torch without NumPy warns so on import, once per rank: noise in the job's log (the
    # smoke needs no NumPy; the single-node suite keeps its workers' stderr to itself)
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
    import torch
    import torch.distributed as dist

    launch = launch or launched()
    os.environ.update(launch.environ())
    cuda = torch.cuda.is_available()
    device, gpu = "cpu", None
    if cuda:
        index = device_index(launch.local_rank, torch.cuda.device_count())
        device, gpu = f"cuda:{index}", _gpu_id(torch, index)
        torch.cuda.set_device(device)
    wait = datetime.timedelta(seconds=timeout)
    # Rank 0 decides within `timeout` of its own start whether everyone came; the others wait
    # for that decision longer, so a rank that started first does not give up just before it.
    decision = datetime.timedelta(seconds=2 * timeout + 10)
    try:
        store = dist.TCPStore(
            launch.master_addr,
            launch.master_port,
            launch.world_size,
            is_master=launch.rank == 0,
            timeout=decision,
            wait_for_workers=False,
        )
    except RuntimeError as exc:  # rank 0's store never came up (DistError is one)
        print(
            f"envcheck smoke: rank {launch.rank} could not reach rank 0's store at "
            f"{launch.master_addr}:{launch.master_port}: {str(exc).splitlines()[0][:200]}",
            file=sys.stderr,
        )
        return 1
    record: Dict[str, Any] = {
        "rank": launch.rank,
        "node": launch.node,
        "local_rank": launch.local_rank,
        "host": socket.gethostname(),
        "device": device,
        "gpu": gpu,
    }
    if not cuda:  # CPU ranks of one host share its cores: judge_ranks needs both counts
        record.update(threads=torch.get_num_threads(), cpus=cpus_affinity() or os.cpu_count())
    store.set(f"envcheck/joined/{launch.rank}", json.dumps(record))
    if launch.rank == 0:
        missing = _await(store, "joined", range(launch.world_size), timeout)
        joined = _collect(store, "joined", launch.world_size)
        shared = bool(shared_gpus(joined))
        store.set("envcheck/start", json.dumps({"missing": missing, "shared": shared}))
        if missing or shared:
            # The store lives in this process: stay until the ranks that came have read
            # the decision (as long as they wait for it), or they lose it mid-read.
            came = [r["rank"] for r in joined if r["rank"] != 0]
            _await(store, "told", came, decision.total_seconds())
            print(render_table(joined, launch, missing))
            return NOT_READY if _page(html, joined, launch, missing) else INTERNAL
    else:
        try:
            store.wait(["envcheck/start"], decision)
        except RuntimeError:  # DistStoreError: the wait timed out
            print(
                f"envcheck smoke: rank {launch.rank}: rank 0 gave no start within "
                f"{decision.total_seconds():g} s (it names the missing ranks)",
                file=sys.stderr,
            )
            return 1
        try:
            start = json.loads(store.get("envcheck/start"))
        except RuntimeError as exc:  # DistNetworkError: rank 0, and its store, are gone
            print(
                f"envcheck smoke: rank {launch.rank}: rank 0 ended before its start could "
                f"be read: {str(exc).splitlines()[0][:200]}",
                file=sys.stderr,
            )
            return 1
        if start["missing"] or start["shared"]:
            store.set(f"envcheck/told/{launch.rank}", "1")  # rank 0 may leave now
            return 1  # rank 0 names the ranks that never came, or that share a GPU
    store.set_timeout(wait)  # from here on, a rank that does not answer fails after `timeout`
    try:  # a rank that dies after joining leaves the others here: they report, not crash
        dist.init_process_group(
            "nccl" if cuda else "gloo",
            store=dist.PrefixStore("envcheck/pg", store),
            rank=launch.rank,
            world_size=launch.world_size,
            timeout=wait,
        )
    except RuntimeError as exc:
        record["error"] = f"process group: {type(exc).__name__}: {exc}"[:300]
        store.set(f"envcheck/record/{launch.rank}", json.dumps(record))
    else:
        try:
            _workloads(record, device, launch)
        finally:
            store.set(f"envcheck/record/{launch.rank}", json.dumps(record))
            dist.destroy_process_group()
    if launch.rank != 0:
        return 0 if _passed(record) else 1
    missing = _await(store, "record", range(launch.world_size), timeout)
    records = _collect(store, "record", launch.world_size)
    print(render_table(records, launch, missing))
    if not _page(html, records, launch, missing):
        return INTERNAL  # the page asked for is missing: as `check --junit` does, exit 3
    return 0 if not missing and all(_passed(r) for r in records) else 1


def _workloads(record: Dict[str, Any], device: str, launch: Launch) -> None:
    from . import workloads

    try:
        mm = workloads.matmul(device, seconds=0.5)
        lowp = workloads.low_precision(device)
        record.update(matmul="passed", tflops=mm[f"{lowp}_tflops"], dtype=lowp)
    except Exception as exc:
        record.update(matmul="failed", error=f"{type(exc).__name__}: {exc}"[:300])
    try:
        ar = workloads.all_reduce(device)
        record.update(
            all_reduce="passed",
            busbw_gbps=max(s["busbw_gbps"] for s in ar["sizes"]),
            sizes=ar["sizes"],
        )
    except Exception as exc:
        record.update(all_reduce="failed", error=f"{type(exc).__name__}: {exc}"[:300])
        return  # the process group may be broken: the link test would wait for the timeout
    try:
        record["link_gbps"] = ring_link(device, launch.rank, launch.world_size)
    except Exception as exc:
        record.update(link="failed", error=f"{type(exc).__name__}: {exc}"[:300])


def _page(
    path: Optional[str], records: List[Dict[str, Any]], launch: Launch, missing: List[int]
) -> bool:
    """Rank 0 writes the HTML page asked for; False (and one line) when it cannot."""
    if not path:
        return True
    from .._outfile import write_text
    from ..report.html import render_ranks_html

    try:
        write_text(path, render_ranks_html(records, launch, missing))
    except OSError as exc:
        print(f"envcheck: cannot write --html {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    return True


def ring_link(device: str, rank: int, world: int) -> Optional[float]:
    """GB/s of this rank's send to the next rank while it receives from the previous one: one
    measurement per link of the ring, all links busy at once, as in a ring all_reduce."""
    import torch
    import torch.distributed as dist

    if world < 2:
        return None
    numel = LINK_BYTES["cuda" if device.startswith("cuda") else "cpu"] // 4
    send = torch.ones(numel, dtype=torch.float32, device=device)
    recv = torch.empty_like(send)
    ops = [
        dist.P2POp(dist.isend, send, (rank + 1) % world),
        dist.P2POp(dist.irecv, recv, (rank - 1) % world),
    ]
    times = []
    for _ in range(LINK_ITERS + 1):  # the first is a warm-up (connection set-up)
        dist.barrier()
        start = time.perf_counter()
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    if not bool((recv == 1).all().item()):
        raise AssertionError(f"the data received from rank {(rank - 1) % world} is wrong")
    return round(numel * 4 / statistics.median(times[1:]) / 1e9, 3)


def device_index(local_rank: int, visible: int) -> int:
    """The GPU a rank takes among those it sees: its local rank when it sees all of the
    node's GPUs, 0 when Slurm bound one GPU to each task. More ranks than GPUs wrap round
    and share one, which ``shared_gpus`` then names."""
    return local_rank % visible


def _gpu_id(torch: Any, index: int) -> Optional[str]:
    """The GPU's UUID (its PCI address in a torch without one): what tells two ranks on one
    GPU apart from two on different GPUs that both call theirs cuda:0."""
    props = torch.cuda.get_device_properties(index)
    uuid = getattr(props, "uuid", None)
    if uuid:
        return str(uuid)
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return None
    domain, slot = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
    return f"{domain:04x}:{bus:02x}:{slot:02x}"


def shared_gpus(records: List[Dict[str, Any]]) -> List[Tuple[str, str, List[int]]]:
    """(host, GPU, ranks) for each GPU that two or more ranks of a host would use."""
    users: Dict[Tuple[str, str], List[int]] = {}
    for r in records:
        if r.get("gpu"):
            users.setdefault((r["host"], r["gpu"]), []).append(r["rank"])
    return [(host, gpu, sorted(ranks)) for (host, gpu), ranks in users.items() if len(ranks) > 1]


def crowded_hosts(records: List[Dict[str, Any]]) -> Dict[str, str]:
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


def _ran(r: Dict[str, Any]) -> bool:
    """Whether the rank ran its workloads (or failed trying), rather than only joining a job
    that did not start."""
    return "matmul" in r or "error" in r


def _passed(r: Dict[str, Any]) -> bool:
    return r.get("matmul") == "passed" and r.get("all_reduce") == "passed" and "link" not in r


def _await(store: Any, kind: str, ranks: Iterable[int], timeout: float) -> List[int]:
    """Wait up to ``timeout`` for each of ``ranks``'s key; the ranks still missing then."""
    deadline = time.monotonic() + timeout
    ranks = list(ranks)
    while True:
        missing = [r for r in ranks if not store.check([f"envcheck/{kind}/{r}"])]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(0.1)


def _collect(store: Any, kind: str, world: int) -> List[Dict[str, Any]]:
    return [
        json.loads(store.get(f"envcheck/{kind}/{r}"))
        for r in range(world)
        if store.check([f"envcheck/{kind}/{r}"])
    ]


@dataclass(frozen=True)
class RankVerdict:
    """One rank's verdict: ``kind`` for whoever colours it (ok, slow, slow_link, failed,
    missing, shared, not_run), ``text`` as the table prints it."""

    kind: str
    text: str

    @property
    def short(self) -> str:
        """The text without its details: "SLOW", "FAILED", "not run"."""
        return self.text.split(":")[0].split(" (")[0]


@dataclass
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
    records: List[Dict[str, Any]],
    launch: Optional[Launch] = None,
    missing: Optional[List[int]] = None,
) -> RankJudgement:
    """Failed and missing ranks, nodes without a working rank, ranks and links slower than
    80% of the median."""
    missing = list(missing or [])
    by_rank = {r["rank"]: r for r in records}
    crowded = crowded_hosts(records)
    speeds = [r["tflops"] for r in records if r.get("tflops") and r["host"] not in crowded]
    median = statistics.median(speeds) if speeds else None
    link_speeds = [r["link_gbps"] for r in records if r.get("link_gbps")]
    link_median = statistics.median(link_speeds) if link_speeds else None
    world = launch.world_size if launch else len(records) + len(missing)
    nodes_seen = {r["node"] for r in records}
    verdicts: Dict[int, RankVerdict] = {}
    problems: List[str] = []
    sharing = {}
    for host, gpu, ranks in shared_gpus(records):
        for rank in ranks:
            sharing[rank] = [o for o in ranks if o != rank]
        problems.append(
            f"ranks {int_ranges(ranks, ', ')} on {host} share one GPU ({gpu}), which NCCL "
            "refuses ('Duplicate GPU detected'): run one task per GPU (srun --ntasks-per-node="
            "<GPUs per node>, or --gpus-per-task=1; torchrun --nproc-per-node=<GPUs per node>)"
        )
    for rank in range(world):
        r = by_rank.get(rank)
        if r is None:
            verdicts[rank] = RankVerdict("missing", "MISSING")
            continue
        verdict = RankVerdict("ok", "ok")
        if rank in sharing:
            verdict = RankVerdict(
                "shared", f"SHARES its GPU with rank {int_ranges(sharing[rank], ', ')}"
            )
        elif not _ran(r):
            verdict = RankVerdict("not_run", "not run (the job did not start)")
        elif not _passed(r):
            verdict = RankVerdict("failed", "FAILED: " + r.get("error", ""))
            problems.append(f"rank {rank} on {r['host']} failed")
        elif median and r["host"] not in crowded and r["tflops"] < SLOW * median:
            verdict = RankVerdict("slow", f"SLOW ({r['tflops'] / median:.0%} of the median)")
            problems.append(f"rank {rank} on {r['host']} is slow")
        link = r.get("link_gbps")
        if verdict.kind == "ok" and link and link_median and link < SLOW * link_median:
            nxt = by_rank.get((rank + 1) % world, {})
            verdict = RankVerdict(
                "slow_link",
                f"SLOW LINK to rank {(rank + 1) % world} ({link / link_median:.0%})",
            )
            problems.append(
                f"link rank {rank} -> {(rank + 1) % world} ({r['host']} -> "
                f"{nxt.get('host', '?')}) is slow"
            )
        verdicts[rank] = verdict
    if missing:
        problems.insert(0, f"ranks {int_ranges(missing, ', ')} never reported (within the timeout)")
    expected_nodes = launch.nodes if launch else None
    if expected_nodes and len(nodes_seen) < expected_nodes:
        absent = sorted(set(range(expected_nodes)) - nodes_seen)
        problems.insert(0, f"node(s) {int_ranges(absent, ', ')} of {expected_nodes} never joined")
    ran = [r for r in records if _ran(r)]
    dead = sorted({r["node"] for r in ran} - {r["node"] for r in ran if _passed(r)})
    if dead:
        problems.insert(0, f"node(s) {int_ranges(dead, ', ')}: no rank passed")
    hosts = len({r["host"] for r in records})
    notes = [
        f"matmul not compared on {host}: {why}"
        for host, why in sorted(crowded.items())
        if any(r.get("tflops") for r in records if r["host"] == host)
    ]
    return RankJudgement(world, verdicts, problems, hosts, len(nodes_seen), notes)


def render_table(
    records: List[Dict[str, Any]],
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
