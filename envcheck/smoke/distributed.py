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
from typing import Any, Dict, Iterable, List, Mapping, Optional

from .._record import record
from ..exitcodes import INTERNAL, NOT_READY
from ..fleet.compare import FleetReport
from ..fleet.ranks import breaks, rank_facts
from ..probes.system import cpus_affinity
from ..report.ranks_text import render_table
from ..verdict import decide
from .launch import Launch, LaunchError, detect
from .ranks import passed, shared_gpus

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


def run(
    timeout: float = 120.0,
    launch: Optional[Launch] = None,
    html: Optional[str] = None,
    as_json: bool = False,
) -> int:
    """Join the job, run the workloads, report; 0 when every rank passed, else 1. ``html``:
    rank 0 also writes the page of envcheck.report.html.render_ranks_html there (checked
    before the run by the CLI; 3 when writing it fails). ``as_json``: rank 0 prints one JSON
    document (report.documents.ranks_document) instead of the table; the ranks' comparison
    still goes out before the collectives, on stderr."""
    # torch without NumPy warns so on import, once per rank: noise in the job's log (the
    # smoke needs no NumPy; the single-node suite keeps its workers' stderr to itself)
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
    import torch

    launch = launch or launched()
    os.environ.update(launch.environ())
    record = _own_record(torch, launch)
    job = _Job(launch, timeout, as_json)
    store = job.open_store()
    if store is None:
        return NOT_READY
    # this rank's facts, before it counts as joined: rank 0 compares them before any collective
    store.set(f"envcheck/facts/{launch.rank}", rank_facts(torch, timeout))
    store.set(f"envcheck/joined/{launch.rank}", json.dumps(record))
    started = job.start(store, html)
    if started is not None:
        return started
    compared = _compare_ranks(store, launch, as_json) if launch.rank == 0 else None
    job.run_workloads(store, record)
    if launch.rank != 0:
        return decide(failures=[] if passed(record) else [record]).exit_code
    missing = _await(store, "record", range(launch.world_size), timeout)
    records = _collect(store, "record", launch.world_size)
    failures = missing + [r for r in records if not passed(r)]
    code = NOT_READY if breaks(compared) else decide(failures=failures).exit_code
    job.show(records, missing, compared, code)
    if not _page(html, records, launch, missing):
        return INTERNAL  # the page asked for is missing: as `check --junit` does, exit 3
    return code


def _compare_ranks(store: Any, launch: Launch, to_stderr: bool) -> Optional[FleetReport]:
    """Rank 0, before the collectives: the ranks' facts compared, the findings printed first
    (a difference that breaks the job fails it; the run still goes on: its results show how)."""
    from ..fleet.ranks import compare_ranks, rank_lines
    from ..report.wrap import terminal_width
    from ..tables.load import load_tables_of_env

    joined = _collect(store, "joined", launch.world_size)
    documents = {
        r["rank"]: (r["host"], store.get(f"envcheck/facts/{r['rank']}").decode("utf-8"))
        for r in joined
    }
    report = compare_ranks(documents, load_tables_of_env())  # ENVCHECK_TABLES, as links
    stream = sys.stderr if to_stderr else sys.stdout
    print("\n".join(rank_lines(report, terminal_width())), file=stream, flush=True)
    return report


def _own_record(torch: Any, launch: Launch) -> Dict[str, Any]:
    """This rank's record, before any workload: where it runs, on which device and GPU (the
    device taken, ``device_index``, and made current)."""
    device, gpu = "cpu", None
    cuda = torch.cuda.is_available()
    if cuda:
        index = device_index(launch.local_rank, torch.cuda.device_count())
        device, gpu = f"cuda:{index}", _gpu_id(torch, index)
        torch.cuda.set_device(device)
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
    return record


@record(frozen=True)
class _Job:
    """This rank's view of the job: its place, and the waits. ``wait`` bounds every step
    once the job has started; rank 0 decides within ``timeout`` of its own start whether
    everyone came, and the others wait for that ``decision`` longer, so a rank that started
    first does not give up just before it."""

    launch: Launch
    timeout: float
    as_json: bool = False

    def show(
        self,
        records: List[Dict[str, Any]],
        missing: List[int],
        compared: Optional[FleetReport],
        code: int,
    ) -> None:
        """Rank 0's report on stdout: the table, or the JSON document."""
        if self.as_json:
            from ..report.documents import ranks_document

            document = ranks_document(records, missing, compared, self.launch.world_size, code)
            print(json.dumps(document, indent=2))
        else:
            print(render_table(records, self.launch, missing))

    @property
    def wait(self) -> datetime.timedelta:
        return datetime.timedelta(seconds=self.timeout)

    @property
    def decision(self) -> datetime.timedelta:
        return datetime.timedelta(seconds=2 * self.timeout + 10)

    def open_store(self) -> Any:
        """The rendezvous store on rank 0's host (rank 0 serves it); None, and one line,
        when it cannot be reached."""
        import torch.distributed as dist

        launch = self.launch
        try:
            return dist.TCPStore(  # type: ignore[attr-defined]  # not in torch.distributed.__all__
                launch.master_addr,
                launch.master_port,
                launch.world_size,
                is_master=launch.rank == 0,
                timeout=self.decision,
                wait_for_workers=False,
            )
        except RuntimeError as exc:  # rank 0's store never came up (DistError is one)
            print(
                f"envcheck smoke: rank {launch.rank} could not reach rank 0's store at "
                f"{launch.master_addr}:{launch.master_port}: {str(exc).splitlines()[0][:200]}",
                file=sys.stderr,
            )
            return None

    def start(self, store: Any, html: Optional[str]) -> Optional[int]:
        """Whether the job starts: rank 0 decides (every rank came, none shares a GPU) and
        tells the others. The exit code when this rank's run ends here, else None."""
        if self.launch.rank == 0:
            return self._decide_start(store, html)
        return self._await_start(store)

    def _decide_start(self, store: Any, html: Optional[str]) -> Optional[int]:
        launch = self.launch
        missing = _await(store, "joined", range(launch.world_size), self.timeout)
        joined = _collect(store, "joined", launch.world_size)
        shared = bool(shared_gpus(joined))
        store.set("envcheck/start", json.dumps({"missing": missing, "shared": shared}))
        if not (missing or shared):
            return None
        # The store lives in this process: stay until the ranks that came have read
        # the decision (as long as they wait for it), or they lose it mid-read.
        came = [r["rank"] for r in joined if r["rank"] != 0]
        _await(store, "told", came, self.decision.total_seconds())
        self.show(joined, missing, None, NOT_READY)
        return NOT_READY if _page(html, joined, launch, missing) else INTERNAL

    def _await_start(self, store: Any) -> Optional[int]:
        rank = self.launch.rank
        try:
            store.wait(["envcheck/start"], self.decision)
        except RuntimeError:  # DistStoreError: the wait timed out
            print(
                f"envcheck smoke: rank {rank}: rank 0 gave no start within "
                f"{self.decision.total_seconds():g} s (it names the missing ranks)",
                file=sys.stderr,
            )
            return NOT_READY
        try:
            start = json.loads(store.get("envcheck/start"))
        except RuntimeError as exc:  # DistNetworkError: rank 0, and its store, are gone
            print(
                f"envcheck smoke: rank {rank}: rank 0 ended before its start could "
                f"be read: {str(exc).splitlines()[0][:200]}",
                file=sys.stderr,
            )
            return NOT_READY
        if start["missing"] or start["shared"]:
            store.set(f"envcheck/told/{rank}", "1")  # rank 0 may leave now
            return NOT_READY  # rank 0 names the ranks that never came, or that share a GPU
        return None

    def run_workloads(self, store: Any, record: Dict[str, Any]) -> None:
        """Join the process group and run the workloads; the record goes to the store either
        way (a rank that dies after joining leaves the others here: they report, not crash)."""
        import torch.distributed as dist

        launch = self.launch
        store.set_timeout(self.wait)  # from here on, a rank that does not answer fails
        try:
            dist.init_process_group(
                "nccl" if record["device"].startswith("cuda") else "gloo",
                store=dist.PrefixStore("envcheck/pg", store),  # type: ignore[attr-defined]  # as TCPStore
                rank=launch.rank,
                world_size=launch.world_size,
                timeout=self.wait,
            )
        except RuntimeError as exc:
            record["error"] = f"process group: {type(exc).__name__}: {exc}"[:300]
            store.set(f"envcheck/record/{launch.rank}", json.dumps(record))
            return
        try:
            _workloads(record, record["device"], launch)
        finally:
            store.set(f"envcheck/record/{launch.rank}", json.dumps(record))
            dist.destroy_process_group()


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


__all__ = [
    "LaunchError",
    "device_index",
    "in_torchrun",
    "launched",
    "render_table",
    "ring_link",
    "run",
    "shared_gpus",
]
