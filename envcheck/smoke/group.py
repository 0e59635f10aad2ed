"""The all_reduce's ranks on one machine: how they come to be, and what each of them runs.

Every rank runs :func:`rank_main`: join the process group that RANK, WORLD_SIZE, MASTER_ADDR
and MASTER_PORT describe, run ``workloads.all_reduce``, leave; over gloo on a CPU as over
NCCL on a GPU, the same code. How the ranks start depends on the device (:func:`forks`):

* CPU ranks are forked by the worker, which has imported torch by then
  (:func:`run_forked`): a fork costs a copy-on-write page table, where a fresh interpreter
  pays the whole torch import again (about 1.5 s of CPU per rank: on a CPU-only machine,
  the largest part of what `envcheck smoke` cost).
* GPU ranks are spawned, one fresh worker per GPU (``runner.run_all_reduce``). The device's
  worker has initialised CUDA by the time all_reduce runs (matmul, AMP), and a child forked
  from a process that has cannot use CUDA ("Cannot re-initialize CUDA in forked
  subprocess"); NCCL wants a process per GPU in any case. Forking them instead from a fresh
  worker that has imported torch but never touched CUDA would be safe in principle, and
  would save an import per GPU; it has not been tried on GPUs, so they keep spawning.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import time
from functools import partial
from typing import Any, Dict, List, Optional, Sequence

from .. import _proc
from ..values import SmokeStatus
from .workloads import error_text

CPU_WORLD = 2  # the ranks of a CPU all_reduce: the fewest that exercise gloo's transport
RANK_MARK = "@@envcheck-rank@@"  # a forked rank's answer, on its own stdout
POLL_S = 0.02  # how often the worker looks at its ranks while they run
# A forked rank's own deadline past the process group's timeout: by then gloo has raised in
# every rank stuck in a collective, and the runner's deadline for the test (5 s past the
# group's) has killed the worker and its ranks; this only bounds a worker left alone.
BACKSTOP_S = 10.0


class RankFailure(Exception):
    """A rank of the all_reduce failed, died or gave no answer; the message names it."""


def forks(device: str) -> bool:
    """Whether the all_reduce's ranks on ``device`` are forked from the worker (the CPU)
    rather than spawned, one fresh worker per GPU (see the module's docstring)."""
    return not device.startswith("cuda")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pg_timeout(env: Optional[Dict[str, str]] = None) -> float:
    """The process group's timeout, as the runner set it for the worker."""
    return float((os.environ if env is None else env).get("ENVCHECK_SMOKE_PG_TIMEOUT", "60"))


def rank_main(device: str) -> Dict[str, Any]:
    """One rank's part: join the group (backend by device), the all_reduce sweep, leave."""
    import torch.distributed as dist

    from . import workloads

    backend = "nccl" if device.startswith("cuda") else "gloo"
    if device.startswith("cuda"):
        import torch

        torch.cuda.set_device(device)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=pg_timeout()))
    try:
        figures: Dict[str, Any] = workloads.all_reduce(device)
        return figures
    finally:
        dist.destroy_process_group()


def run_forked(device: str, world: int = CPU_WORLD) -> Dict[str, Any]:
    """The all_reduce over ``world`` ranks forked from this process, on 127.0.0.1: rank 0's
    figures when every rank passed, else RankFailure for the first rank that failed or died
    (the others are killed then, not left to wait for it until the group's timeout).

    Each rank is a ``_proc.Child`` with a ``target``: its own process group, a watchdog that
    kills it when this worker dies (however it dies: the runner's deadline kills the
    worker's group), a deadline, bounded output.

    The hazard of forking a process that has threads: only the forking thread goes on in
    the child, and a lock another thread held then stays held. This worker has threads by
    now: torch's OpenMP pool (matmul ran) and the reader threads of the ranks forked before.
    So a rank sets torch to one thread before any work (ATen then runs its parallel loops
    inline, never entering the OpenMP pool, whose threads do not exist in the child; two
    ranks on the machine's cores want no more anyway) and writes its answer with os.write.
    What is left, a lock inside a C library, can at worst hang a rank: the runner's deadline
    ends that as any hang, and the test is reported timed out.
    """
    import torch.distributed  # noqa: F401  # imported once here, not in every rank

    port = free_port()
    timeout = pg_timeout() + BACKSTOP_S
    ranks: List[_proc.Child] = []
    try:
        for rank in range(world):
            body = partial(_forked_rank, device, rank, world, port)
            name = [f"all_reduce rank {rank}"]
            ranks.append(_proc.Child(name, timeout, marker=RANK_MARK, target=body))
        first_bad = _watch(ranks, time.monotonic() + timeout)
    finally:
        for child in ranks:
            child.kill()
    ended = [child.wait() for child in ranks]
    answers = [_answer(result) for result in ended]
    first = answers[0]
    if first_bad is None and first is not None and all(_passed(a) for a in answers):
        figures: Dict[str, Any] = first["figures"]
        return figures
    if first_bad is None:  # the deadline passed with ranks still running
        silent = [str(i) for i, a in enumerate(answers) if a is None]
        raise RankFailure(f"no answer from rank {', '.join(silent)} within {timeout:g} s")
    answer = answers[first_bad]
    if answer is not None:
        raise RankFailure(f"rank {first_bad}: {answer.get('error') or answer.get('status')}")
    raise RankFailure(f"rank {first_bad} {ended[first_bad].why_ended()}")


def _watch(ranks: Sequence[_proc.Child], deadline: float) -> Optional[int]:
    """Until every rank has ended, one has ended without passing, or ``deadline``: the
    index of the rank that ended without passing, else None. Of ranks seen ending at once,
    one that died without an answer goes first: the others' errors are then most likely
    about losing it (a peer closed the connection)."""
    running = list(range(len(ranks)))
    while running and time.monotonic() < deadline:
        ended = [i for i in running if not ranks[i].running]
        running = [i for i in running if i not in ended]
        answers = [(i, _answer(ranks[i].wait())) for i in ended]
        bad = sorted((a is not None, i) for i, a in answers if not _passed(a))
        if bad:
            return bad[0][1]
        if running:
            time.sleep(POLL_S)
    return None


def _passed(answer: Optional[Dict[str, Any]]) -> bool:
    return answer is not None and answer.get("status") == SmokeStatus.PASSED


def _answer(result: _proc.ChildResult) -> Optional[Dict[str, Any]]:
    """A rank's answer (its last marker line), None when it gave none."""
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(RANK_MARK):
            try:
                data = json.loads(line[len(RANK_MARK) :])
            except json.JSONDecodeError:
                return None
            return data if isinstance(data, dict) else None
    return None


def _forked_rank(device: str, rank: int, world: int, port: int) -> None:  # pragma: no cover
    """A forked rank's life, in the child (see run_forked): its place in the group, one
    thread, the rank's part, its answer on its stdout."""
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )
    import torch

    torch.set_num_threads(1)
    answer: Dict[str, Any]
    try:
        answer = {"status": SmokeStatus.PASSED, "figures": rank_main(device)}
    except Exception as exc:  # a wrong sum, or torch.distributed failing
        answer = {"status": SmokeStatus.FAILED, "error": error_text(exc)}
    data = f"\n{RANK_MARK} {json.dumps(answer)}\n".encode()
    while data:
        data = data[os.write(1, data) :]
