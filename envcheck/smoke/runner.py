"""Run the smoke suite: each test under its own timeout, in child processes.

A hang is normal in the field (an NCCL all_reduce waiting forever, a first start
JIT-compiling PTX), so every test is bounded: a child that runs over is killed
with its whole process group, reported as timed out with what to try, and the
rest of the suite goes on. A device's tests run in turn in one child (importing
torch is most of a CPU run's time). all_reduce on the CPU is one of them: that worker
forks its two gloo ranks (``group.run_forked``); on GPUs it runs one fresh child per
rank (``group.forks`` says why).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union, cast

from .. import _proc
from .._record import field, record
from ..values import SmokeStatus
from .group import CPU_WORLD, forks, free_port
from .worker import MARK

NCCL_HANG_HINTS = (
    "rerun with NCCL_DEBUG=INFO to see where NCCL waits",
    "bisect the transport: NCCL_P2P_DISABLE=1, then NCCL_IB_DISABLE=1",
    "check /dev/shm (docker --shm-size / --ipc=host)",
)
GPU_HANG_HINTS = (
    "a build without native kernels for this GPU JIT-compiles PTX on first start: give it longer",
)
GLOO_HANG_HINTS = (
    "check that 127.0.0.1 is reachable and no firewall blocks local TCP ports",
    "name the interface with GLOO_SOCKET_IFNAME=lo",
)
CPU_HANG_HINTS = ("give it longer (--timeout): a loaded or throttled CPU is slow",)


def hang_hints(name: str, device: str) -> List[str]:
    """What to try when ``name`` on ``device`` hung: only what can apply to that test
    (NCCL advice for an NCCL all_reduce, PTX advice for a GPU, never for the CPU)."""
    gpu = device.startswith(("cuda", "nccl"))
    hints: List[str] = []
    if name == "all_reduce":
        hints += NCCL_HANG_HINTS if gpu else GLOO_HANG_HINTS
    hints += GPU_HANG_HINTS if gpu else CPU_HANG_HINTS
    return hints


@record
class SmokeResult:
    name: str
    device: str
    status: Union[SmokeStatus, str]  # passed, failed, skipped, timed_out (stored as SmokeStatus)
    duration_s: float = 0.0
    figures: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None
    hints: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            self.status = SmokeStatus(self.status)
        except ValueError:  # a worker that reports nonsense has failed
            self.error = f"the worker reported status {self.status!r}" + (
                f": {self.error}" if self.error else ""
            )
            self.status = SmokeStatus.FAILED

    @property
    def failed(self) -> bool:
        return SmokeStatus(self.status).is_failure

    def to_dict(self) -> Dict[str, Any]:
        from dataclasses import asdict

        out = asdict(self)
        out["status"] = SmokeStatus(self.status).value
        return out


Progress = Callable[[str, str, float, Optional[SmokeResult]], None]


def _parse(stdout: str) -> Optional[Dict[str, Any]]:
    """The last answer in a child's output."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            return _parse_line(line)
    return None


def _parse_line(line: str) -> Optional[Dict[str, Any]]:
    try:
        data = json.loads(line[len(MARK) :])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _wait_all(
    children: List[_proc.Child], label: str, device: str, progress: Optional[Progress]
) -> List[_proc.ChildResult]:
    """Wait for children in threads, ticking progress; returns their ChildResults."""
    results: List[Optional[_proc.ChildResult]] = [None] * len(children)

    def reap(i: int) -> None:
        results[i] = children[i].wait()

    threads = [threading.Thread(target=reap, args=(i,), daemon=True) for i in range(len(children))]
    for t in threads:
        t.start()
    start = time.monotonic()
    while any(t.is_alive() for t in threads):
        if progress:
            progress("tick", f"{label} {device}", time.monotonic() - start, None)
        for t in threads:
            t.join(0.25)
    return cast(List[_proc.ChildResult], results)  # every thread has reaped its child


def _result(name: str, device: str, child: _proc.ChildResult, timeout: float) -> SmokeResult:
    data = _parse(child.stdout)
    if child.timed_out:
        return SmokeResult(
            name,
            device,
            SmokeStatus.TIMED_OUT,
            round(child.duration_s, 3),
            error=f"no result after {timeout:g} s; the test was killed",
            hints=hang_hints(name, device),
        )
    if data is None:
        return SmokeResult(
            name, device, SmokeStatus.FAILED, round(child.duration_s, 3), error=child.why_ended()
        )
    return SmokeResult(
        name,
        device,
        data.get("status", SmokeStatus.FAILED),  # as the worker says; SmokeResult checks it
        round(child.duration_s, 3),
        figures=data.get("figures") or {},
        error=data.get("error"),
    )


def run_one(
    name: str,
    device: str,
    timeout: float,
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
) -> SmokeResult:
    (result,) = run_in_turn([name], device, timeout, python, env, progress)
    return result


def run_in_turn(
    names: Sequence[str],
    device: str,
    timeout: float,
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
) -> List[SmokeResult]:
    """The tests ``names`` on ``device``, in turn, in one worker that imports torch once
    (importing it is most of a CPU smoke run's time). Each test has its own deadline, from
    the moment the test before it answered (the first one's includes the import, as a test
    in a fresh child always had): a test that hangs or crashes ends its worker, and the tests
    after it run in a new one. all_reduce is one of them only where the worker forks its
    ranks (``group.forks``: the CPU)."""
    results: List[SmokeResult] = []
    worker_env = _env(env, timeout)
    for name in RANK_VARIABLES:  # the worker is no rank (a user's RANK would make it one)
        worker_env.pop(name, None)
    while len(results) < len(names):
        results += _worker(names[len(results) :], device, timeout, python, worker_env, progress)
    return results


# What torch.distributed's env:// rendezvous reads; a worker with RANK set is one rank.
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _env(env: Optional[Dict[str, str]], timeout: float) -> Dict[str, str]:
    """A worker's environment: ``env`` (else envcheck's), and the process group's timeout,
    5 s inside the test's, so that a rank stuck in a collective raises, and says where,
    before its test's deadline kills it."""
    base = dict(os.environ if env is None else env)
    base.setdefault("ENVCHECK_SMOKE_PG_TIMEOUT", str(max(5.0, timeout - 5)))
    return base


def shown_device(name: str, device: str) -> str:
    """The device a result names: for an all_reduce whose worker forks the ranks, the
    group ("gloo x2"), as for the ranks spawned one per GPU ("nccl x8")."""
    return f"gloo x{CPU_WORLD}" if name == "all_reduce" and forks(device) else device


def _worker(
    names: Sequence[str],
    device: str,
    timeout: float,
    python: str,
    env: Optional[Dict[str, str]],
    progress: Optional[Progress],
) -> List[SmokeResult]:
    """What one worker answers: every test of ``names``, or those up to the first that hung
    or crashed (with a result for that one)."""
    if progress:
        progress("start", f"{names[0]} {shown_device(names[0], device)}", 0.0, None)
    argv = [python, "-m", "envcheck.smoke.worker", ",".join(names), device]
    try:
        child = _proc.Child(argv, timeout * len(names), env=env, marker=MARK)
    except OSError as exc:
        shown = shown_device(names[0], device)
        error = f"could not start {python}: {exc}"
        failed = SmokeResult(names[0], shown, SmokeStatus.FAILED, error=error)
        if progress:
            progress("done", f"{names[0]} {shown}", 0.0, failed)
        return [failed]
    results: List[SmokeResult] = []
    try:
        for index, name in enumerate(names):
            shown = shown_device(name, device)
            if index and progress:
                progress("start", f"{name} {shown}", 0.0, None)
            result, ended = _answer(child, name, shown, index, timeout, progress)
            results.append(result)
            if progress:
                progress("done", f"{name} {shown}", result.duration_s, result)
            if ended:
                break
    finally:
        child.kill()  # it has answered everything, or it is to go
        child.wait()
    return results


TICK_S = 0.25  # how often a wait shows its progress


def _answer(
    child: _proc.Child,
    name: str,
    device: str,
    index: int,
    timeout: float,
    progress: Optional[Progress],
) -> Tuple[SmokeResult, bool]:
    """The worker's answer for its test number ``index``, waited for until the deadline;
    and whether the worker has ended (it hung, crashed or answered nonsense)."""
    start = time.monotonic()
    deadline = start + timeout

    def answered() -> bool:
        return len(child.marked()) > index

    while not child.wait_for(answered, min(deadline, time.monotonic() + TICK_S)):
        if not child.running or time.monotonic() >= deadline:
            break
        if progress:
            progress("tick", f"{name} {device}", time.monotonic() - start, None)
    took = round(time.monotonic() - start, 3)
    lines = child.marked()
    data = _parse_line(lines[index]) if len(lines) > index else None
    if data is not None:
        status = data.get("status", SmokeStatus.FAILED)  # as the worker says; SmokeResult checks
        figures = data.get("figures") or {}
        return SmokeResult(name, device, status, took, figures, data.get("error")), False
    hung = child.running and not answered()
    child.kill()
    done = child.wait()
    if answered():  # a marker line that is not an answer
        error = f"the worker's answer could not be read: {lines[index][:200]!r}"
        return SmokeResult(name, device, SmokeStatus.FAILED, took, error=error), True
    if hung:
        error = f"no result after {timeout:g} s; the test was killed"
        return SmokeResult(
            name, device, SmokeStatus.TIMED_OUT, took, error=error, hints=hang_hints(name, device)
        ), True
    return SmokeResult(name, device, SmokeStatus.FAILED, took, error=done.why_ended()), True


def run_all_reduce(
    devices: Sequence[str],
    timeout: float,
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
) -> SmokeResult:
    """One all_reduce over the devices, on 127.0.0.1: two CPU ranks over gloo, forked by one
    worker (``group.run_forked``), or one process per GPU over NCCL (:func:`spawn_ranks`)."""
    if not devices or forks(devices[0]):
        return run_one("all_reduce", "cpu", timeout, python, env, progress)
    return spawn_ranks(list(devices), timeout, python, env, progress)


def spawn_ranks(
    ranks: Sequence[str],
    timeout: float,
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
) -> SmokeResult:
    """The all_reduce with one fresh worker per rank, ``ranks`` naming each one's device:
    the GPUs' way (``group.forks`` says why they are not forked). Each worker answers as one
    rank (RANK is set); the first rank that did not pass gives the result."""
    label = "nccl" if ranks[0].startswith("cuda") else "gloo"
    if progress:
        progress("start", f"all_reduce {label}", 0.0, None)
    base = _env(env, timeout)
    base.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(len(ranks)))
    children: List[_proc.Child] = []
    try:
        for rank, device in enumerate(ranks):
            rank_env = dict(base, RANK=str(rank), LOCAL_RANK=str(rank))
            children.append(
                _proc.Child(
                    [python, "-m", "envcheck.smoke.worker", "all_reduce", device],
                    timeout,
                    env=rank_env,
                    marker=MARK,  # the result line is kept however much torch prints
                )
            )
    except BaseException:  # the ranks already started would wait for the missing one
        for child in children:
            child.kill()
            child.wait()
        raise
    done = _wait_all(children, "all_reduce", label, progress)
    per_rank = [_result("all_reduce", d, c, timeout) for d, c in zip(ranks, done)]
    first_bad = next((r for r in per_rank if r.status != SmokeStatus.PASSED), None)
    result = per_rank[0] if first_bad is None else first_bad
    result = SmokeResult(
        "all_reduce",
        f"{label} x{len(ranks)}",
        result.status,
        max(r.duration_s for r in per_rank),
        figures=per_rank[0].figures if first_bad is None else {},
        error=result.error,
        hints=hang_hints("all_reduce", label) if result.status == SmokeStatus.TIMED_OUT else [],
    )
    if progress:
        progress("done", f"all_reduce {label}", result.duration_s, result)
    return result


DEFAULT_TESTS = ("matmul", "amp", "all_reduce")


def run_suite(
    devices: Sequence[str],
    timeout: float = 120.0,
    extras: Sequence[str] = (),
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
    tests: Sequence[str] = DEFAULT_TESTS,
) -> List[SmokeResult]:
    """Run ``tests`` (then ``extras``) in order, all_reduce once over all devices. On the
    CPU every test runs in turn in one worker (:func:`run_in_turn`), all_reduce too (the
    worker forks its ranks); on GPUs each device's worker runs the tests before or after
    all_reduce, which spawns a worker per GPU (:func:`spawn_ranks`). Results come in the
    order of the tests, each test's devices together."""
    names = [*tests, *(e for e in extras if e not in tests)]
    results: List[SmokeResult] = []
    in_turn = len(devices) == 1 and forks(devices[0])  # all_reduce is one of the turns
    while names:
        if names[0] == "all_reduce" and not in_turn:
            results.append(run_all_reduce(devices, timeout, python, env, progress))
            names = names[1:]
            continue
        spawned = "all_reduce" in names and not in_turn
        run = names[: names.index("all_reduce")] if spawned else names
        per_device = [run_in_turn(run, d, timeout, python, env, progress) for d in devices]
        results += [r for i in range(len(run)) for r in (done[i] for done in per_device)]
        names = names[len(run) :]
    return results
