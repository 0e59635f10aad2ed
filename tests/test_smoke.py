"""The smoke test, for real on the CPU: gloo processes, torchrun nodes, hangs, wrong results."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import psutil
import pytest

from envcheck.smoke import workloads
from envcheck.smoke.distributed import render_table
from envcheck.smoke.runner import (
    SmokeResult,
    free_port,
    hang_hints,
    run_all_reduce,
    run_in_turn,
    run_one,
    run_suite,
    spawn_ranks,
)
from tests.faketorch import make_fake_torch
from tests.runner import envcheck

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed in this environment")


def test_cpu_suite_passes_with_figures(cpu_smoke) -> None:
    results = {r["name"]: SmokeResult(**r) for r in cpu_smoke[1]["results"]}
    assert {n: r.status for n, r in results.items()} == {
        "matmul": "passed",
        "amp": "passed",
        "all_reduce": "passed",
    }
    mm = results["matmul"].figures
    assert mm["float32_rel_error"] < 1e-4 and mm["bfloat16_rel_error"] < 3e-2
    # Only what holds however busy the machine is: the rates themselves, their spread, the CPU
    # share and how far the sweep got all move with others' load (summarize_rates is tested
    # below on fixed rates).
    for dtype in ("float32", "bfloat16"):  # the median of at least 5 repeats, inside their range
        low, med, high = (mm[f"{dtype}_tflops{s}"] for s in ("_min", "", "_max"))
        assert 0 <= low <= med <= high and mm[f"{dtype}_repeats"] >= 5
        assert mm[f"{dtype}_spread"] >= 0
    assert mm["threads"] >= 1 and mm["load_avg_1m"] >= 0
    assert 0 <= mm["float32_cpu_share"] <= 1.5  # CPU time over wall x threads (rounding, timers)
    bf16 = results["amp"].figures["bfloat16"]
    assert bf16["last_loss"] < bf16["first_loss"] and bf16["skipped_steps"] == 0
    ar = results["all_reduce"].figures
    assert (ar["world_size"], ar["backend"]) == (2, "gloo")
    # the real default sweep: x4 from 4 KiB to 64 MiB, each size warmed up and timed, unless
    # the machine was so busy that its 20 s budget ran out first (then it says so)
    sweep = [4096 * 4**i for i in range(8)]
    sizes = [s["bytes"] for s in ar["sizes"]]
    assert sizes == sweep[: len(sizes)] and sizes
    assert ("truncated" in ar) == (len(sizes) < len(sweep))
    for size in ar["sizes"]:  # busbw = algbw * 2(n-1)/n, which is 1 for n = 2
        assert size["busbw_gbps"] == pytest.approx(size["algbw_gbps"], rel=1e-3, abs=1e-3)
        assert size["algbw_gbps"] == pytest.approx(
            size["bytes"] / size["time_us"] / 1e3, rel=1e-2, abs=1e-3
        )
        assert 2 <= size["iters"] <= 20
    peak = max(ar["sizes"], key=lambda s: s["busbw_gbps"])
    assert (ar["peak_busbw_gbps"], ar["peak_bytes"]) == (peak["busbw_gbps"], peak["bytes"])
    assert results["all_reduce"].device == "gloo x2"


@pytest.mark.parametrize(
    "rates, figures",
    [
        # CPU rates of a hundredth: the spread comes from the unrounded rates (0.0039 / 0.0124),
        # where the rounded figures would give (0.014 - 0.011) / 0.012 = 0.25
        (
            [0.0105, 0.0114, 0.0124, 0.0134, 0.0144],
            {"tflops": 0.012, "tflops_min": 0.011, "tflops_max": 0.014, "spread": 0.315},
        ),
        (
            [2.0, 1.0, 3.0, 4.0],
            {"tflops": 2.5, "tflops_min": 1.0, "tflops_max": 4.0, "spread": 1.2},
        ),
        ([0.0, 0.0, 0.0], {"tflops": 0.0, "tflops_min": 0.0, "tflops_max": 0.0, "spread": 0.0}),
    ],
)
def test_summarize_rates_takes_the_spread_from_unrounded_rates(rates, figures) -> None:
    got = workloads.summarize_rates("float32", rates)
    assert got == {f"float32_{k}": v for k, v in figures.items()} | {"float32_repeats": len(rates)}


class LoggedMatrix:
    """Stands in for a tensor: ``a @ b`` notes ``a``'s name and takes a millisecond."""

    shape = (4, 4)

    def __init__(self, name: str, log: List[str]) -> None:
        self.name, self.log = name, log

    def __matmul__(self, other: LoggedMatrix) -> None:
        self.log.append(self.name)
        time.sleep(0.001)


@needs_torch
def test_the_dtypes_repeats_are_taken_in_turn() -> None:
    """Each pair is warmed up, then the repeats go round the pairs: a slow spell of the machine
    falls on both dtypes' figures alike, not whole on one of them."""
    log: List[str] = []
    pairs = [(LoggedMatrix(n, log), LoggedMatrix(n, log)) for n in ("fp32", "bf16")]
    rates = workloads.interleaved_repeats(pairs, "cpu", 0.03, repeat_s=0.005, min_repeats=3)
    assert len(rates[0]) == len(rates[1]) >= 3
    runs = [name for i, name in enumerate(log) if i == 0 or log[i - 1] != name]
    assert runs == ["fp32", "bf16"] * (1 + len(rates[0]))  # the warm-ups, then each round


@needs_torch
@pytest.mark.slow
def test_all_reduce_sweep_is_bounded_by_its_budget_on_every_rank() -> None:
    """Three real gloo ranks (child processes) run the workload with a zero time budget: every
    rank stops after the first size, and they agree on the iteration count (a rank that went
    on alone would wait forever in an all_reduce the others skipped)."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="3")
    script = (
        "import json, torch.distributed as dist\n"
        "from envcheck.smoke import workloads\n"
        "dist.init_process_group('gloo')\n"
        "print(json.dumps(workloads.all_reduce('cpu', budget_s=0.0)))\n"
        "dist.destroy_process_group()\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=dict(env, RANK=str(r)),
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in range(3)
    ]
    outs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    for out in outs:
        assert [s["bytes"] for s in out["sizes"]] == [4096]
        assert "time budget" in out["truncated"]
        # three ranks: busbw = algbw * 2(n-1)/n = algbw * 4/3
        size = out["sizes"][0]
        assert size["busbw_gbps"] == pytest.approx(size["algbw_gbps"] * 4 / 3, rel=1e-2, abs=1e-3)
    assert len({o["sizes"][0]["iters"] for o in outs}) == 1  # the ranks agreed on the count


@needs_torch
@pytest.mark.slow
def test_optional_memory_test() -> None:
    result = run_one("memory", "cpu", timeout=120)
    assert result.status == "passed" and result.figures["bytes"] > 0


def children() -> set:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.slow
def test_a_hanging_test_is_killed_on_time_with_nothing_left(tmp_path: Path) -> None:
    env = dict(
        os.environ, PYTHONPATH=f"{make_fake_torch(tmp_path, 'hang')}{os.pathsep}{Path.cwd()}"
    )
    before = children()
    start = time.monotonic()
    result = run_one("matmul", "cpu", timeout=3, env=env)
    assert result.status == "timed_out"
    assert time.monotonic() - start < 20
    # A CPU matmul hang gets CPU advice, never NCCL's or the GPU's.
    assert result.hints and "NCCL" not in " ".join(result.hints)
    assert "PTX" not in " ".join(result.hints)
    assert children() <= before


@needs_torch
@pytest.mark.parametrize("first", ["hang", "exit"])
@pytest.mark.slow
def test_tests_after_one_that_hung_or_crashed_run_in_a_new_worker(tmp_path: Path, first) -> None:
    """matmul and amp share one worker (torch imported once); when the worker hangs or dies
    on matmul, amp still runs, in a new worker, and passes."""
    fake = make_fake_torch(tmp_path, "once_then_real")
    env = dict(
        os.environ,
        PYTHONPATH=f"{fake}{os.pathsep}{Path.cwd()}",
        ONCE_FLAG=str(tmp_path / "flag"),
        ONCE_DO=first,
    )
    before = children()
    events = []
    results = run_in_turn(
        ["matmul", "amp"],
        "cpu",
        8,
        env=env,
        progress=lambda e, label, *_: events.append((e, label)),
    )
    assert [(r.name, r.status) for r in results] == [
        ("matmul", "timed_out" if first == "hang" else "failed"),
        ("amp", "passed"),
    ]
    if first == "exit":
        assert results[0].error.startswith("exited with code 3")
    assert results[1].figures["bfloat16"]["skipped_steps"] == 0
    starts = [label for e, label in events if e == "start"]
    assert starts == ["matmul cpu", "amp cpu"]
    assert [label for e, label in events if e == "done"] == starts
    assert children() <= before


@needs_torch
@pytest.mark.slow
def test_one_worker_answers_every_test_of_a_device(tmp_path: Path) -> None:
    """One import of torch for the device's tests: the worker's answers, in order, carry their
    test's name; a second worker is never started when the first answers them all."""
    started = tmp_path / "started"
    env = dict(os.environ, PYTHONSTARTUP="")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        f"import sys\nopen({str(started)!r}, 'a').write(' '.join(sys.argv) + '\\n')\n"
    )
    env["PYTHONPATH"] = f"{hook}{os.pathsep}{Path.cwd()}"
    results = run_in_turn(["health", "memory"], "cpu", 120, env=env)
    assert [(r.name, r.status) for r in results] == [("health", "passed"), ("memory", "passed")]
    assert [line for line in started.read_text().splitlines() if "health" in line] == [
        "-m health,memory cpu"
    ]


# The two ways an all_reduce's ranks start: forked by one worker (the CPU's), or one fresh
# worker per rank (the GPUs', run here with CPU ranks over gloo: the same code but CUDA).
ALL_REDUCES = {
    "forked": lambda timeout, env: run_all_reduce(["cpu"], timeout=timeout, env=env),
    "spawned": lambda timeout, env: spawn_ranks(["cpu", "cpu"], timeout=timeout, env=env),
}


@pytest.mark.parametrize("start", list(ALL_REDUCES))
@pytest.mark.slow
def test_a_hanging_all_reduce_times_out_every_rank(tmp_path: Path, start) -> None:
    env = dict(
        os.environ, PYTHONPATH=f"{make_fake_torch(tmp_path, 'hang')}{os.pathsep}{Path.cwd()}"
    )
    before = children()
    result = ALL_REDUCES[start](3, env)
    assert result.status == "timed_out" and result.device == "gloo x2"
    assert "GLOO_SOCKET_IFNAME" in " ".join(result.hints)
    assert "NCCL" not in " ".join(result.hints)
    assert children() <= before


def started_python(tmp_path: Path, env: dict) -> Path:
    """A sitecustomize hook in ``env`` that notes the arguments of every Python that starts
    with it: the file it writes to."""
    started = tmp_path / "started"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        f"import sys\nopen({str(started)!r}, 'a').write(' '.join(sys.argv) + '\\n')\n"
    )
    env["PYTHONPATH"] = f"{hook}{os.pathsep}{env.get('PYTHONPATH') or Path.cwd()}"
    return started


@needs_torch
@pytest.mark.slow
def test_cpu_ranks_are_forked_by_the_worker_that_ran_the_tests_before(tmp_path: Path) -> None:
    """On the CPU all_reduce is one of the worker's turns: the worker that ran the test before
    it, torch imported, forks both gloo ranks; no Python starts for a rank. A RANK from the
    user's shell does not make that worker a rank."""
    env = dict(os.environ, RANK="5", WORLD_SIZE="8", MASTER_PORT="1")
    started = started_python(tmp_path, env)
    results = run_suite(["cpu"], timeout=120, env=env, tests=("health", "all_reduce"))
    assert [(r.name, r.device, r.status) for r in results] == [
        ("health", "cpu", "passed"),
        ("all_reduce", "gloo x2", "passed"),
    ], [r.error for r in results]
    assert (results[1].figures["world_size"], results[1].figures["backend"]) == (2, "gloo")
    assert started.read_text().splitlines() == ["-m health,all_reduce cpu"]


@needs_torch
@pytest.mark.slow
def test_spawned_ranks_answer_each_for_itself(tmp_path: Path) -> None:
    """The GPUs' way, one fresh worker per rank with RANK set, still works (here over gloo)."""
    env = dict(os.environ)
    started = started_python(tmp_path, env)
    result = spawn_ranks(["cpu", "cpu"], timeout=120, env=env)
    assert (result.status, result.device) == ("passed", "gloo x2"), result.error
    assert result.figures["world_size"] == 2
    assert started.read_text().splitlines() == ["-m all_reduce cpu", "-m all_reduce cpu"]


def pids_gone(pid_file: Path, expected: int, within: float = 30.0) -> List[int]:
    """The pids in ``pid_file`` (``expected`` of them) still alive after up to ``within``
    seconds (a killed worker's ranks go when their watchdogs see it gone)."""
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == expected, pids
    deadline = time.monotonic() + within
    while True:
        alive = [p for p in pids if alive_pid(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def alive_pid(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@needs_torch
@pytest.mark.parametrize(
    "fault, status, error",
    [
        # rank 1 dies: rank 0 is killed then, not left to wait in gloo for the group's timeout
        ("1:crash", "failed", "rank 1 killed by SIGSEGV"),
        # rank 1 hangs before joining: rank 0 gives up at the group's timeout and says why
        ("1:hang", "failed", "rank 0: "),
        # every rank hangs: the test's deadline kills the worker, and its ranks go with it
        ("all:hang", "timed_out", "no result after"),
    ],
)
@pytest.mark.slow
def test_a_forked_rank_that_crashes_or_hangs(tmp_path: Path, fault, status, error) -> None:
    """A forked rank that dies or hangs fails or times out the all_reduce, no rank outlives
    it, and the tests after it still run."""
    pids = tmp_path / "rank_pids"
    env = dict(
        os.environ,
        PYTHONPATH=f"{make_fake_torch(tmp_path, 'rank_fault')}{os.pathsep}{Path.cwd()}",
        RANK_FAULT=fault,
        RANK_PIDS=str(pids),
    )
    before = children()
    # 10 s per test: the process group's timeout is 5 s, and a worker's ranks hanging before
    # they join wait for the worker's backstop (15 s) or the test's deadline
    results = run_suite(["cpu"], 10, env=env, tests=("health", "all_reduce", "health"))
    assert [(r.name, r.status) for r in results] == [
        ("health", "passed"),
        ("all_reduce", status),
        ("health", "passed"),
    ], [r.error for r in results]
    assert error in (results[1].error or ""), results[1].error
    assert bool(results[1].hints) == (status == "timed_out")
    assert pids_gone(pids, expected=2) == []
    assert children() <= before


def test_a_crash_is_a_failure_with_its_reason(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        PYTHONPATH=f"{make_fake_torch(tmp_path, 'missing_cudnn')}{os.pathsep}{Path.cwd()}",
    )
    result = run_one("amp", "cpu", timeout=60, env=env)
    assert result.status == "failed"
    assert "libcudnn.so.9: cannot open shared object file" in result.error
    assert result.hints == []  # hang advice is for hangs


@pytest.mark.parametrize("start", list(ALL_REDUCES))
def test_a_failed_all_reduce_gets_no_hang_advice(tmp_path: Path, start) -> None:
    env = dict(
        os.environ,
        PYTHONPATH=f"{make_fake_torch(tmp_path, 'missing_cudnn')}{os.pathsep}{Path.cwd()}",
    )
    result = ALL_REDUCES[start](60, env)
    assert result.status == "failed" and result.hints == []
    assert "libcudnn.so.9" in (result.error or "")


def test_hang_hints_fit_the_test_and_device() -> None:
    nccl = " ".join(hang_hints("all_reduce", "nccl"))
    assert "NCCL_DEBUG=INFO" in nccl and "PTX" in nccl
    assert "NCCL" not in " ".join(hang_hints("matmul", "cuda:0"))
    assert "PTX" in " ".join(hang_hints("matmul", "cuda:0"))


@needs_torch
def test_wrong_results_are_failures() -> None:
    import torch

    from envcheck.smoke.workloads import (
        SmokeFailure,
        check_close,
        verify_all_reduce,
        verify_training,
    )

    good = torch.full((8,), 3.0)
    verify_all_reduce(good, 3.0, 8)
    bad = good.clone()
    bad[5] = 2.0
    with pytest.raises(SmokeFailure, match="1 elements wrong"):
        verify_all_reduce(bad, 3.0, 8)
    ref = torch.randn(16, 16, dtype=torch.float64)
    check_close("matmul", ref.float(), ref, 1e-4)
    with pytest.raises(SmokeFailure, match="relative error"):
        check_close("matmul", (ref * 1.01).float(), ref, 1e-4)
    with pytest.raises(SmokeFailure, match="relative error nan"):
        check_close(
            "matmul", torch.full((2,), float("nan")), torch.ones(2, dtype=torch.float64), 1e-4
        )
    with pytest.raises(SmokeFailure, match="not finite"):
        verify_training("fp16", [1.0, float("nan")], 0, 2)
    with pytest.raises(SmokeFailure, match="did not decrease"):
        verify_training("bf16", [1.0, 1.5], 0, 2)
    with pytest.raises(SmokeFailure, match="skipped every step"):
        verify_training("fp16", [2.0, 1.0], 30, 30)


def test_rank_table_names_failed_and_slow_ranks() -> None:
    records = [
        {
            "rank": 0,
            "node": 0,
            "host": "node-a",
            "device": "cuda:0",
            "matmul": "passed",
            "all_reduce": "passed",
            "tflops": 700.0,
            "busbw_gbps": 350.0,
        },
        {
            "rank": 1,
            "node": 0,
            "host": "node-a",
            "device": "cuda:1",
            "matmul": "passed",
            "all_reduce": "passed",
            "tflops": 690.0,
            "busbw_gbps": 350.0,
        },
        {
            "rank": 2,
            "node": 1,
            "host": "node-b",
            "device": "cuda:0",
            "matmul": "passed",
            "all_reduce": "passed",
            "tflops": 400.0,
            "busbw_gbps": 349.0,
        },
        {
            "rank": 3,
            "node": 1,
            "host": "node-b",
            "device": "cuda:1",
            "matmul": "failed",
            "all_reduce": "passed",
            "error": "CUDA error: no kernel image",
        },
    ]
    table = render_table(records)
    assert "4 ranks on 2 host(s), 2 node(s)" in table
    assert "SLOW (58% of the median)" in table
    assert "FAILED: CUDA error: no kernel image" in table
    assert table.splitlines()[-1] == "rank 2 on node-b is slow; rank 3 on node-b failed"


@needs_torch
@pytest.mark.slow
def test_torchrun_with_two_simulated_nodes() -> None:
    """Two torchrun agents on localhost, c10d rendezvous on 127.0.0.1: one job of two nodes."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "2",
        "--nproc-per-node",
        "1",
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        f"127.0.0.1:{port}",
        "--rdzv-id",
        "envcheck-test",
        "-m",
        "envcheck.smoke",
    ]
    nodes = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=180)[0] for p in nodes]
    finally:
        for p in nodes:
            p.kill()
    assert [p.returncode for p in nodes] == [0, 0], outputs
    table = next(o for o in outputs if "envcheck smoke:" in o)
    assert "2 ranks on 1 host(s), 2 node(s)" in table
    rows = [line for line in table.splitlines() if line.strip().startswith(("0 ", "1 "))]
    assert len(rows) == 2
    # Speed is not judged here (a loaded machine makes a rank "SLOW"); failures are.
    assert not any("FAILED" in line for line in rows), table


@needs_torch
def test_cli_smoke_json_and_exit_code(cpu_smoke) -> None:
    out, data = cpu_smoke
    assert out.returncode == 0, out.stdout + out.stderr
    assert data["passed"] is True and [r["name"] for r in data["results"]] == [
        "matmul",
        "amp",
        "all_reduce",
    ]
    # the busbw the links allow, as `check --smoke` gives it: here, why it is not known
    figures = data["results"][2]["figures"]
    assert "gloo on the CPU within one host" in figures["expected_unknown"]


def test_cli_smoke_html_needs_distributed() -> None:
    out = envcheck("smoke", "--html", "page.html")
    assert out.returncode == 2 and "check --smoke --format html" in out.stderr


def test_cli_distributed_outside_torchrun_is_a_usage_error() -> None:
    out = envcheck("smoke", "--distributed")
    assert out.returncode == 2 and "under torchrun" in out.stderr


@needs_torch
@pytest.mark.slow
def test_check_with_smoke_joins_the_results() -> None:
    out = envcheck("check", "--no-deep", "--smoke", "--json")
    report = json.loads(out.stdout)
    assert [r["status"] for r in report["smoke"]] == ["passed", "passed", "passed"]
    assert not [f for f in report["findings"] if f["code"].startswith("SMK")]


@needs_torch
@pytest.mark.slow
def test_optional_compile_test_matches_eager() -> None:
    result = run_one("compile", "cpu", timeout=300)
    assert result.status == "passed", result.error
    assert result.figures["compile_s"] > 0
