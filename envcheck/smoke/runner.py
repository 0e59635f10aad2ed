"""Run the smoke suite: each test under its own timeout, in child processes.

A hang is normal in the field (an NCCL all_reduce waiting forever, a first start
JIT-compiling PTX), so every test is bounded: a child that runs over is killed
with its whole process group, reported as timed out with what to try, and the
rest of the suite goes on. A device's tests run in turn in one child (importing
torch is most of a CPU run's time); all_reduce runs one child per rank.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from dataclasses import asdict, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union, cast

from .. import _proc
from .._record import record
from ..values import SmokeStatus
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
        out = asdict(self)
        out["status"] = SmokeStatus(self.status).value
        return out


Progress = Callable[[str, str, float, Optional[SmokeResult]], None]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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
            name, device, SmokeStatus.FAILED, round(child.duration_s, 3), error=_why_ended(child)
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
    after it run in a new one."""
    results: List[SmokeResult] = []
    while len(results) < len(names):
        results += _worker(names[len(results) :], device, timeout, python, env, progress)
    return results


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
        progress("start", f"{names[0]} {device}", 0.0, None)
    argv = [python, "-m", "envcheck.smoke.worker", ",".join(names), device]
    try:
        child = _proc.Child(argv, timeout * len(names), env=env, marker=MARK)
    except OSError as exc:
        failed = SmokeResult(
            names[0], device, SmokeStatus.FAILED, error=f"could not start {python}: {exc}"
        )
        if progress:
            progress("done", f"{names[0]} {device}", 0.0, failed)
        return [failed]
    results: List[SmokeResult] = []
    try:
        for index, name in enumerate(names):
            if index and progress:
                progress("start", f"{name} {device}", 0.0, None)
            result, ended = _answer(child, name, device, index, timeout, progress)
            results.append(result)
            if progress:
                progress("done", f"{name} {device}", result.duration_s, result)
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
    return SmokeResult(name, device, SmokeStatus.FAILED, took, error=_why_ended(done)), True


def _why_ended(child: _proc.ChildResult) -> str:
    """Why a child gave no answer: its signal or exit code, and the end of its stderr."""
    tail = "\n".join(child.stderr.strip().splitlines()[-8:])
    why = f"killed by {child.signal}" if child.signal else f"exited with code {child.returncode}"
    return f"{why}\n{tail}".strip()


def run_all_reduce(
    devices: Sequence[str],
    timeout: float,
    python: str = sys.executable,
    env: Optional[Dict[str, str]] = None,
    progress: Optional[Progress] = None,
) -> SmokeResult:
    """One process per GPU over NCCL, or two CPU processes over gloo, on 127.0.0.1."""
    ranks = list(devices) if devices and devices[0].startswith("cuda") else ["cpu", "cpu"]
    label = "nccl" if ranks[0].startswith("cuda") else "gloo"
    if progress:
        progress("start", f"all_reduce {label}", 0.0, None)
    base = dict(os.environ if env is None else env)
    base.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(len(ranks)))
    base.setdefault("ENVCHECK_SMOKE_PG_TIMEOUT", str(max(5.0, timeout - 5)))
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
    """Run ``tests`` (then ``extras``) in order: on each device, the run of tests before or
    after all_reduce in one worker (:func:`run_in_turn`); all_reduce once over all devices.
    Results come in the order of the tests, each test's devices together."""
    names = [*tests, *(e for e in extras if e not in tests)]
    results: List[SmokeResult] = []
    while names:
        if names[0] == "all_reduce":
            results.append(run_all_reduce(devices, timeout, python, env, progress))
            names = names[1:]
            continue
        run = names[: names.index("all_reduce")] if "all_reduce" in names else names
        per_device = [run_in_turn(run, d, timeout, python, env, progress) for d in devices]
        results += [r for i in range(len(run)) for r in (done[i] for done in per_device)]
        names = names[len(run) :]
    return results
