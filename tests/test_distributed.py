"""The multi-node smoke test under Slurm: hostlists, the launch variables, and real gloo jobs of
two simulated nodes on 127.0.0.1 (srun is the only thing not here: its variables are set as
srun sets them)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import psutil
import pytest

from envcheck.report import html
from envcheck.smoke.distributed import device_index, render_table, shared_gpus
from envcheck.smoke.launch import LaunchError, detect, first_host, hosts
from envcheck.smoke.runner import free_port
from tests.test_html_report import parse

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed in this environment"
)


@pytest.mark.parametrize(
    "nodelist, expected",
    [
        ("gpu[01-04,07],login1", ["gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "login1"]),
        ("node-[1-2]-ib", ["node-1-ib", "node-2-ib"]),
        ("a1,b[3-5]", ["a1", "b3", "b4", "b5"]),
        ("rack[1-2]-n[08-09]", ["rack1-n08", "rack1-n09", "rack2-n08", "rack2-n09"]),
        ("n[9-11]", ["n9", "n10", "n11"]),
        ("127.0.0.[1-2]", ["127.0.0.1", "127.0.0.2"]),
        (" single ", ["single"]),
    ],
)
def test_slurm_hostlists_expand(nodelist: str, expected: List[str]) -> None:
    assert hosts(nodelist) == expected
    assert first_host(nodelist) == expected[0]


@pytest.mark.parametrize(
    "nodelist", ["gpu[01-04", "gpu]01", "gpu[4-1]", "gpu[a-b]", "gpu[[1-2]]", "", ","]
)
def test_a_malformed_hostlist_is_a_launch_error(nodelist: str) -> None:
    with pytest.raises(LaunchError):
        first_host(nodelist)


def test_a_huge_hostlist_is_read_lazily() -> None:
    assert first_host("n[000000001-999999999]") == "n000000001"
    assert len(hosts("n[1-999999999]", limit=5)) == 5


SLURM = {
    "SLURM_PROCID": "3",
    "SLURM_NTASKS": "8",
    "SLURM_LOCALID": "3",
    "SLURM_NODEID": "0",
    "SLURM_JOB_NODELIST": "gpu[07-08]",
    "SLURM_JOB_ID": "123456",
    "SLURM_JOB_NUM_NODES": "2",
}


def test_slurm_variables_become_the_launch() -> None:
    launch = detect(SLURM)
    assert launch is not None and launch.launcher == "slurm"
    assert (launch.rank, launch.world_size, launch.local_rank, launch.node, launch.nodes) == (
        3,
        8,
        3,
        0,
        2,
    )
    assert (launch.master_addr, launch.master_port) == ("gpu07", 15000 + 3456)
    assert launch.environ()["MASTER_PORT"] == "18456" and launch.environ()["RANK"] == "3"
    assert detect(dict(SLURM, MASTER_PORT="29500")).master_port == 29500  # type: ignore[union-attr]


def test_torchrun_wins_over_slurm_and_neither_is_none() -> None:
    torchrun = dict(SLURM, RANK="0", WORLD_SIZE="2", MASTER_ADDR="10.0.0.1", MASTER_PORT="29500")
    launch = detect(torchrun)
    assert launch is not None and (launch.launcher, launch.world_size) == ("torchrun", 2)
    assert detect({"PATH": "/usr/bin"}) is None


@pytest.mark.parametrize(
    "change, words",
    [
        ({"SLURM_PROCID": "8"}, "SLURM_PROCID=8 is not below SLURM_NTASKS=8"),
        ({"SLURM_NTASKS": "eight"}, "is not a whole number"),
        ({"SLURM_JOB_NODELIST": "gpu[07-"}, "unbalanced"),
        ({"SLURM_JOB_NODELIST": None}, "SLURM_JOB_NODELIST"),
        ({"SLURM_JOB_ID": None}, "neither MASTER_PORT nor SLURM_JOB_ID"),
        ({"MASTER_PORT": "70000"}, "not a TCP port"),
    ],
)
def test_contradictory_slurm_variables_are_a_launch_error(change, words) -> None:
    env = {k: v for k, v in {**SLURM, **change}.items() if v is not None}
    with pytest.raises(LaunchError, match=words):
        detect(env)


def test_the_cli_names_what_is_wrong_in_one_line() -> None:
    env = {**os.environ, **SLURM, "SLURM_PROCID": "9"}
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    out = subprocess.run(
        [sys.executable, "-m", "envcheck", "smoke", "--distributed"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert "SLURM_PROCID=9 is not below SLURM_NTASKS=8" in out.stderr
    assert "Traceback" not in out.stderr


def ran(rank: int, node: int = 0, host: str = "", **kw) -> Dict:
    """A rank's record after its workloads: all passed, 1 TFLOP/s and 1 GB/s, unless ``kw``
    says otherwise."""
    base = dict(
        rank=rank, node=node, host=host or f"n{node}", device="cpu", matmul="passed",
        all_reduce="passed", tflops=1.0, busbw_gbps=1.0, link_gbps=1.0,
    )  # fmt: skip
    return {**base, **kw}


def test_the_table_names_missing_nodes_dead_nodes_and_slow_links() -> None:
    launch = detect(dict(SLURM, SLURM_NTASKS="6", SLURM_JOB_NUM_NODES="3", SLURM_PROCID="0"))
    records = [
        ran(0, 0, link_gbps=10.0),
        ran(1, 0, link_gbps=3.0),  # the link from rank 1 (node 0) to rank 2 (node 1)
        ran(2, 1, link_gbps=10.0, matmul="failed", error="RuntimeError: CUDA error"),
        ran(3, 1, link_gbps=10.0, all_reduce="failed", error="timed out"),
    ]
    table = render_table(records, launch, missing=[4, 5])
    assert "(launched by slurm, 6 ranks expected)" in table
    assert table.count("MISSING") == 2
    last = table.splitlines()[-1]
    assert "node(s) 2 of 3 never joined" in last
    assert "node(s) 1: no rank passed" in last
    assert "ranks 4-5 never reported" in last
    assert "link rank 1 -> 2 (n0 -> n1) is slow" in last
    assert "SLOW LINK to rank 2 (30%)" in table


@pytest.mark.parametrize(
    "local_rank, visible, index",
    [(0, 8, 0), (3, 8, 3), (3, 1, 0), (1, 2, 1), (9, 8, 1)],
)
def test_each_rank_takes_a_gpu_it_can_see(local_rank: int, visible: int, index: int) -> None:
    # all GPUs visible (one task per GPU); one per task (srun --gpus-per-task=1); too many
    # ranks (they wrap round, and shared_gpus names the pair)
    assert device_index(local_rank, visible) == index


def joined_record(rank: int, host: str, gpu: str) -> Dict:
    """What a rank puts in the store on joining, before any workload."""
    node = int(host[1:])
    return dict(rank=rank, node=node, local_rank=rank % 2, host=host, device="cuda:0", gpu=gpu)


def test_two_ranks_on_one_gpu_are_named_before_nccl_refuses_them() -> None:
    launch = detect(dict(SLURM, SLURM_NTASKS="4", SLURM_JOB_NUM_NODES="2", SLURM_PROCID="0"))
    records = [
        joined_record(0, "n0", "GPU-aaaa"),
        joined_record(1, "n0", "GPU-aaaa"),  # CUDA_VISIBLE_DEVICES=0 for both tasks
        joined_record(2, "n1", "0000:17:00"),  # the same PCI address on another host is
        joined_record(3, "n1", "0000:65:00"),  # another GPU
    ]
    assert shared_gpus(records) == [("n0", "GPU-aaaa", [0, 1])]
    table = render_table(records, launch)
    verdicts = {line.split()[0]: line for line in table.splitlines()[2:6]}
    assert verdicts["0"].endswith("SHARES its GPU with rank 1")
    assert verdicts["1"].endswith("SHARES its GPU with rank 0")
    assert verdicts["2"].endswith("not run (the job did not start)")
    last = table.splitlines()[-1]
    assert "ranks 0-1 on n0 share one GPU (GPU-aaaa)" in last and "Duplicate GPU" in last
    assert "--gpus-per-task=1" in last
    assert "failed" not in last and "no rank passed" not in last  # nobody ran: nobody failed
    records[2]["gpu"] = "0000:65:00"  # now two ranks of n1 on one GPU too
    assert len(shared_gpus(records)) == 2


def test_cpu_ranks_crowding_one_host_are_not_called_slow() -> None:
    """Four ranks x two threads on a 2-CPU host: each gets a share of the cores, so their
    matmul figures say nothing about the ranks; a host with room is still compared."""

    crowded = [
        ran(r, host="vm", tflops=t, threads=2, cpus=2) for r, t in enumerate((0.02, 0.8, 0.07))
    ]
    table = render_table(crowded)
    assert "SLOW" not in table and table.splitlines()[-1] == "all ranks ok", table
    assert "matmul not compared on vm: 3 ranks x their threads (6) on 2 CPUs" in table
    roomy = [
        ran(r, host="big", tflops=t, threads=2, cpus=64) for r, t in enumerate((1.0, 1.0, 0.5))
    ]
    table = render_table(roomy)
    assert "SLOW (50% of the median)" in table and "not compared" not in table


def test_ranks_that_joined_a_job_that_never_started_did_not_fail() -> None:
    launch = detect(dict(SLURM, SLURM_NTASKS="4", SLURM_JOB_NUM_NODES="2", SLURM_PROCID="0"))
    records = [joined_record(0, "n0", ""), joined_record(1, "n0", "")]
    table = render_table(records, launch, missing=[2, 3])
    assert table.count("not run (the job did not start)") == 2 and "FAILED" not in table
    last = table.splitlines()[-1]
    assert "node(s) 1 of 2 never joined" in last and "ranks 2-3 never reported" in last
    assert "failed" not in last and "no rank passed" not in last
    page = html.render_ranks_html(records, launch, [2, 3])
    chart = page.split('aria-label="matmul TFLOP/s per rank"')[1].split("</svg>")[0]
    assert chart.count("- not run") == 2 and chart.count("- MISSING") == 2


def slurm_job(
    nodes: int,
    per_node: int,
    timeout: int,
    start: List[int],
    extra: Sequence[str] = (),
    rank_env: Optional[Dict[int, Dict[str, str]]] = None,
) -> List[subprocess.Popen]:
    """The ranks ``start`` of a job of ``nodes`` x ``per_node``, with srun's variables, each
    running `envcheck smoke --distributed` over real gloo on 127.0.0.1 (``rank_env``: more
    variables for some ranks)."""
    port = free_port()
    procs = []
    for rank in start:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
        }
        env.update(
            SLURM_PROCID=str(rank),
            SLURM_NTASKS=str(nodes * per_node),
            SLURM_LOCALID=str(rank % per_node),
            SLURM_NODEID=str(rank // per_node),
            SLURM_JOB_NODELIST=f"127.0.0.[1-{nodes}]",
            SLURM_JOB_NUM_NODES=str(nodes),
            SLURM_JOB_ID="4242",
            MASTER_PORT=str(port),
        )
        env.update((rank_env or {}).get(rank, {}))
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "envcheck",
                    "smoke",
                    "--distributed",
                    "--timeout",
                    str(timeout),
                    *extra,
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        )
    for p in procs:
        p.port = port  # type: ignore[attr-defined]
    return procs


def joined(procs: List[subprocess.Popen], ranks: Sequence[int], stop: Optional[int] = None) -> bool:
    """Wait until ``ranks`` have registered in the job's store (as rank 0 sees it): True, or
    False when rank 0 left first (it called the job not started: a rank took longer than the
    job's timeout to import torch, as on a machine whose cores are busy). Rank ``stop`` is
    frozen (SIGSTOP) the moment it has joined: it can do nothing more, however fast or slow
    the machine is, until the test decides."""
    import datetime

    from torch.distributed import TCPStore

    store = None
    while store is None and procs[0].poll() is None:
        try:
            store = TCPStore(
                "127.0.0.1",
                procs[0].port,
                is_master=False,
                timeout=datetime.timedelta(seconds=5),  # type: ignore[attr-defined]
            )
        except RuntimeError:  # rank 0's store is not up yet, or has gone
            time.sleep(0.2)
    waiting = set(ranks)
    while store is not None and procs[0].poll() is None:
        for rank in sorted(waiting):
            if store.check([f"envcheck/joined/{rank}"]):
                waiting.discard(rank)
                if rank == stop:
                    os.killpg(procs[rank].pid, signal.SIGSTOP)
        if not waiting:
            return True
        time.sleep(0.02)
    return False


def started_job(nodes: int, per_node: int, stop: Optional[int] = None) -> List[subprocess.Popen]:
    """A job of ``nodes`` x ``per_node`` ranks that have all joined (``stop``: frozen on
    joining, see joined). Its timeout is short, so that the test is quick, and longer on each
    try: how long four ranks take to import torch at once depends on how busy the machine
    is, and is not what these tests are about."""
    for timeout in (8, 20, 60):
        ranks = list(range(nodes * per_node))
        procs = slurm_job(nodes, per_node, timeout, ranks)
        if joined(procs, ranks, stop):
            return procs
        finish(procs, 120)
    pytest.fail("the ranks never all joined, even with a 60 s timeout")


def finish(procs: List[subprocess.Popen], limit: float) -> List[str]:
    try:
        return [p.communicate(timeout=limit)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@needs_torch
@pytest.mark.slow
def test_two_simulated_slurm_nodes_on_loopback_pass(tmp_path: Path) -> None:
    page = tmp_path / "ranks.html"
    procs = slurm_job(
        nodes=2, per_node=2, timeout=60, start=[0, 1, 2, 3], extra=["--html", str(page)]
    )
    outputs = finish(procs, 150)
    assert [p.returncode for p in procs] == [0, 0, 0, 0], outputs
    table = outputs[0][outputs[0].index("envcheck smoke:") :]
    assert "4 ranks on 1 host(s), 2 node(s) (launched by slurm, 4 ranks expected)" in table
    rows = [line.split() for line in table.splitlines()[2:6]]
    assert [(r[0], r[1]) for r in rows] == [("0", "0"), ("1", "0"), ("2", "1"), ("3", "1")]
    assert all(float(r[5]) > 0 and float(r[6]) > 0 for r in rows), table  # busbw, link GB/s
    assert [r[7] for r in rows] == ["->1", "->2", "->3", "->0"]  # the ring's links
    assert "FAILED" not in table and "MISSING" not in table
    tree = parse(page.read_text(encoding="utf-8"))  # rank 0 wrote the page: a bar per rank
    charts = [a["aria-label"] for t, a in tree.elements if t == "svg"]
    assert charts[:3] == [
        "matmul TFLOP/s per rank",
        "all_reduce busbw per rank",
        "link GB/s per rank",
    ]
    assert sum(1 for t, a in tree.elements if t == "rect") == 12
    assert f'fill="{html.BLUE}"' in page.read_text(encoding="utf-8")
    last = table.strip().splitlines()[-1]  # loopback timings vary: a link may be called slow
    words = " ".join(tree.text)
    assert (
        ("all ranks ok" in words)
        if last == "all ranks ok"
        else (last in words and "problems" in words)
    )


@needs_torch
@pytest.mark.slow
def test_rank_0_names_a_rank_with_another_nccl_before_the_all_reduce() -> None:
    """Two simulated nodes; rank 2's facts say another NCCL (the probe's override, as a node
    with another libnccl would): rank 0 names it before the collectives, and fails the job."""
    nccl = "ENVCHECK_FACT_TORCH_RUNTIME_NCCL_VERSION"
    rank_env = {r: {nccl: "2.18.1" if r == 2 else "2.21.5"} for r in range(4)}
    procs = slurm_job(nodes=2, per_node=2, timeout=60, start=[0, 1, 2, 3], rank_env=rank_env)
    outputs = finish(procs, 150)
    assert [p.returncode for p in procs] == [1, 0, 0, 0], outputs
    out = outputs[0]
    host = socket.gethostname()
    assert f"x ERROR CMP002 NCCL differs: {host}:rank2 has 2.18.1; the other 3 have 2.21.5" in out
    assert out.index("CMP002") < out.index("envcheck smoke: 4 ranks")  # before the table
    assert "before the collectives, the 4 ranks' machines compared" in out


@needs_torch
@pytest.mark.slow
def test_two_torchrun_nodes_where_one_has_another_nccl(tmp_path: Path) -> None:
    """Two torchrun agents on loopback, a node each (--nnodes 2 --node-rank 0/1), the second
    node's facts saying another NCCL: rank 0 names it before the all_reduce."""
    port = free_port()
    nccl = "ENVCHECK_FACT_TORCH_RUNTIME_NCCL_VERSION"
    agents = []
    for node, version in ((0, "2.21.5"), (1, "2.18.1")):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "ENVCHECK_"))}
        env[nccl] = version
        agents.append(
            subprocess.Popen(
                [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
                 "--nproc-per-node", "1", "--node-rank", str(node), "--master-addr", "127.0.0.1",
                 "--master-port", str(port), "--log-dir", str(tmp_path / f"logs{node}"),
                 "--redirects", "3", "-m", "envcheck.smoke"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        )  # fmt: skip
    finish(agents, 200)
    (rank0,) = (tmp_path / "logs0").rglob("0/stdout.log")
    out = rank0.read_text()
    host = socket.gethostname()
    # two nodes: neither is the majority, both are named
    title = f"CMP002 NCCL differs, with no majority: 2.21.5 on {host}:rank0; 2.18.1 on {host}:rank1"
    assert title in out
    assert out.index("CMP002") < out.index("envcheck smoke: 2 ranks")


@needs_torch
@pytest.mark.slow
def test_the_json_of_rank_0_carries_the_ranks_compared() -> None:
    from tests.test_json_schema import validate

    nccl = "ENVCHECK_FACT_TORCH_RUNTIME_NCCL_VERSION"
    rank_env = {r: {nccl: "2.18.1" if r == 1 else "2.21.5"} for r in range(3)}
    procs = slurm_job(3, 1, timeout=60, start=[0, 1, 2], extra=["--json"], rank_env=rank_env)
    outputs = finish(procs, 150)
    assert [p.returncode for p in procs] == [1, 0, 0], outputs
    out = outputs[0]  # stderr (the comparison, first) and stdout (the document) together
    assert out.index("CMP002") < out.index("\n{")
    document = json.loads(out[out.index("\n{") :])
    validate("ranks", document)
    assert document["exit_code"] == 1 and [r["rank"] for r in document["ranks"]] == [0, 1, 2]
    (found,) = document["compared"]["findings"]
    assert found["code"] == "CMP002" and ":rank1 has 2.18.1" in found["title"]


def test_the_rank_page_colours_slow_failed_and_missing_ranks() -> None:
    records = [
        ran(0, 0, link_gbps=10.0),
        ran(1, 0, host="<n1>", link_gbps=2.0),
        ran(
            2,
            1,
            host="n2",
            matmul="failed",
            error="RuntimeError: boom",
            tflops=None,
            link_gbps=10.0,
        ),
    ]
    launch = detect(dict(SLURM, SLURM_NTASKS="4", SLURM_JOB_NUM_NODES="2", SLURM_PROCID="0"))
    text = html.render_ranks_html(records, launch, [3])
    tree = parse(text)
    assert "&lt;n1&gt;" in text and "<n1>" not in text
    link_chart = text.split('aria-label="link GB/s per rank"')[1].split("</svg>")[0]
    assert f'fill="{html.AMBER}"' in link_chart  # rank 1's link to rank 2 is slow
    matmul_chart = text.split('aria-label="matmul TFLOP/s per rank"')[1].split("</svg>")[0]
    assert "- FAILED" in matmul_chart and "- MISSING" in matmul_chart
    assert f"background:{html.RED}" in text  # the verdict band
    assert "ranks 3 never reported" in " ".join(tree.text)


@needs_torch
@pytest.mark.slow
def test_a_node_that_never_starts_is_named_and_nothing_hangs() -> None:
    for timeout in (6, 20, 60):  # longer when rank 1 was too slow to join (a busy machine)
        began = time.monotonic()
        procs = slurm_job(nodes=2, per_node=2, timeout=timeout, start=[0, 1])  # node 1 never starts
        outputs = finish(procs, 3 * timeout + 60)
        last = outputs[0].strip().splitlines()[-1] if outputs[0].strip() else ""
        if "ranks 1-3 never reported" not in last:
            break
    assert [p.returncode for p in procs] == [1, 1], outputs
    assert "node(s) 1 of 2 never joined" in last and "ranks 2-3 never reported" in last
    assert "FAILED" not in outputs[0] and "no rank passed" not in last  # ranks 0-1 waited
    assert "Warning" not in outputs[0] + outputs[1], outputs  # torch's NumPy notice, per rank
    assert time.monotonic() - began < 2 * timeout + 50  # bounded by the timeout, not a hang
    assert not [p for p in psutil.process_iter(["cmdline"]) if _ours(p, procs)]


@needs_torch
@pytest.mark.slow
def test_a_rank_whose_rank_0_never_starts_says_so_in_one_line() -> None:
    procs = slurm_job(nodes=2, per_node=1, timeout=2, start=[1])  # rank 0's node never starts
    (output,) = finish(procs, 90)
    assert procs[0].returncode == 1, output
    assert "rank 1 could not reach rank 0's store at 127.0.0.1:" in output
    assert "Traceback" not in output


@needs_torch
@pytest.mark.slow
def test_a_rank_killed_midway_is_named_and_the_others_report() -> None:
    outputs: List[str] = []
    for timeout in (8, 20, 60):  # longer when a live rank was too slow (a busy machine)
        procs = slurm_job(nodes=2, per_node=2, timeout=timeout, start=[0, 1, 2, 3])
        if not joined(procs, [0, 1, 2, 3], 3):  # rank 3 frozen once it has joined
            finish(procs, 3 * timeout + 60)
            continue
        os.killpg(procs[3].pid, signal.SIGKILL)  # dies after joining, before any result
        outputs = finish(procs, 3 * timeout + 60)
        if "ranks 3 never reported" in outputs[0]:  # only the killed rank is missing
            break
    assert outputs, "the ranks never all joined, even with a 60 s timeout"
    assert procs[0].returncode == 1 and procs[3].returncode == -signal.SIGKILL, outputs[0]
    table = outputs[0][outputs[0].index("envcheck smoke:") :]
    assert "ranks 3 never reported" in table.splitlines()[-1], table
    assert table.count("MISSING") == 1


def _ours(p: psutil.Process, procs: List[subprocess.Popen]) -> bool:
    try:
        return p.ppid() in {q.pid for q in procs} or p.pid in {
            q.pid for q in procs if q.poll() is None
        }
    except psutil.Error:
        return False


def _store_client(port: int) -> Any:
    import datetime

    from torch.distributed import TCPStore

    return TCPStore(
        "127.0.0.1", port, is_master=False, timeout=datetime.timedelta(seconds=120)
    )  # fmt: skip


def _rank(rank: int, port: int) -> subprocess.Popen:
    """A rank as torchrun starts it: `python -m envcheck.smoke` with torchrun's variables,
    of a job of two ranks, in its own process group as in a terminal."""
    from tests.test_faults_processes import as_in_a_terminal

    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port))  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "envcheck.smoke"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_in_a_terminal,
    )


@needs_torch
@pytest.mark.parametrize("waiting_in", ["python", "c"])
@pytest.mark.slow
def test_an_interrupted_rank_says_so_in_one_line_and_exits_130(waiting_in: str) -> None:
    """Ctrl-C (a real SIGINT to the rank's group) ends a rank with one line and 128 + SIGINT,
    as `envcheck smoke --distributed` does, not a traceback: rank 0 waiting (in Python) for a
    rank 1 that never joins; rank 1 inside init_process_group's C code, waiting for a rank 0
    that never comes (Python's handler cannot run there until the 120 s timeout: the
    signal watcher ends it)."""
    import datetime
    import json

    from torch.distributed import TCPStore

    port = free_port()
    store = None
    if waiting_in == "c":  # the test is rank 0's store: it says start, never joins the group
        store = TCPStore("127.0.0.1", port, is_master=True,
                         timeout=datetime.timedelta(seconds=120))  # fmt: skip
    proc = _rank(0 if store is None else 1, port)
    try:
        if store is None:
            _store_client(port).wait(["envcheck/joined/0"])
        else:
            store.wait(["envcheck/joined/1"])
            store.set("envcheck/start", json.dumps({"missing": [], "shared": False}))
            while store.num_keys() <= 2 and proc.poll() is None:  # its first group key
                time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        # well within the 120 s after which the process group's own timeout would end it
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == 128 + signal.SIGINT, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1:] == ["envcheck: interrupted"], err


@needs_torch
@pytest.mark.slow
def test_ctrl_c_on_a_torchrun_job_ends_every_rank_in_one_line(tmp_path: Path) -> None:
    """A real torchrun job of two ranks, and Ctrl-C (SIGINT to the whole process group, as a
    terminal sends it) while the ranks are in the job: each rank's own output is one
    "envcheck: interrupted" line, no KeyboardInterrupt traceback, and no rank outlives
    torchrun. (torchrun itself ends with its own SignalException and exit 1: its code, not
    envcheck's.) The ranks are held (SIGSTOP) from the moment both have joined until the
    signal is sent, so it finds them mid-run however busy the machine is."""
    from tests.test_faults_processes import as_in_a_terminal, wait_gone

    logs = tmp_path / "logs"
    port = free_port()
    job = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", "2",
         "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
         "--log-dir", str(logs), "--redirects", "3", "-m", "envcheck.smoke"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=as_in_a_terminal,
    )  # fmt: skip
    ranks: List[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while len(ranks) < 2 and time.monotonic() < deadline and job.poll() is None:
            ranks = [
                p
                for p in psutil.Process(job.pid).children(recursive=True)
                if "envcheck.smoke" in " ".join(p.cmdline())
            ]
            time.sleep(0.05)
        assert len(ranks) == 2, job.communicate(timeout=60)[0]
        store = _store_client(int(ranks[0].environ()["MASTER_PORT"]))
        store.wait(["envcheck/joined/0", "envcheck/joined/1"])
        for rank in ranks:
            rank.suspend()
        os.killpg(job.pid, signal.SIGINT)
        for rank in ranks:
            rank.resume()  # with the SIGINT pending
        out = job.communicate(timeout=120)[0]
        assert wait_gone(ranks, within=30) == [], "a rank outlived torchrun"
    finally:
        with contextlib.suppress(OSError):
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        for rank in ranks:
            with contextlib.suppress(psutil.Error):
                rank.kill()
    assert job.returncode != 0, out  # the job did not pass
    for number in (0, 1):
        (stderr,) = logs.glob(f"*/attempt_0/{number}/stderr.log")
        (stdout,) = logs.glob(f"*/attempt_0/{number}/stdout.log")
        said = stdout.read_text() + stderr.read_text()
        assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
        assert said.strip().splitlines()[-1:] == ["envcheck: interrupted"], said


@needs_torch
@pytest.mark.slow
def test_rank_0_stays_until_the_ranks_that_came_have_read_that_the_job_will_not_start() -> None:
    """Rank 0 holds the store: leaving right after it says "not starting" (a rank is
    missing) cut the others off mid-read (a DistNetworkError traceback, exit 3, now and then
    in test_a_node_that_never_starts_is_named_and_nothing_hangs). The test is rank 1 of a
    job of three whose rank 2 never comes, and reads the decision only when it chooses."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(RANK="0", WORLD_SIZE="3", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port))  # fmt: skip
    rank0 = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "smoke", "--distributed", "--timeout", "10"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        store = _store_client(port)
        store.set("envcheck/joined/1", json.dumps(joined_record(1, "n0", "")))
        store.wait(["envcheck/start"])  # rank 0 gave up on rank 2 (after its 10 s)
        with pytest.raises(subprocess.TimeoutExpired):
            rank0.wait(timeout=5)  # still there: its store holds what rank 1 must read
        assert json.loads(store.get("envcheck/start"))["missing"] == [2]
        store.set("envcheck/told/1", "1")
        out = rank0.communicate(timeout=60)[0]
    finally:
        with contextlib.suppress(OSError):
            os.killpg(rank0.pid, signal.SIGKILL)
        rank0.wait()
    assert rank0.returncode == 1, out
    assert "ranks 2 never reported" in out.strip().splitlines()[-1], out
