"""deploy/slurm/prolog.sh as Slurm runs it: real bash, real envcheck, a fake `scontrol` on PATH
(the cluster is the boundary) that records how it was called."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from tests.runner import user_env

PROLOG = Path(__file__).resolve().parent.parent / "deploy" / "slurm" / "prolog.sh"


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {tmp_path}/scontrol.calls\n')
    scontrol.chmod(0o755)
    return tmp_path


def prolog(cluster: Path, env: Optional[Dict[str, str]] = None) -> Tuple[int, List[str]]:
    full = user_env(
        {
            "PATH": f"{cluster / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "ENVCHECK": f"{sys.executable} -m envcheck",
            "ENVCHECK_PYTHON": sys.executable,
            "ENVCHECK_REPORTS": str(cluster / "reports"),
            "SLURMD_NODENAME": "gpu-node-07",
            **(env or {}),
        }
    )
    done = subprocess.run(
        ["bash", str(PROLOG)], env=full, capture_output=True, text=True, timeout=300
    )
    calls = cluster / "scontrol.calls"
    return done.returncode, calls.read_text().splitlines() if calls.exists() else []


def test_a_healthy_node_runs_the_job_and_keeps_its_report(cluster) -> None:
    code, calls = prolog(cluster)
    assert code == 0 and calls == []
    report = json.loads((cluster / "reports" / "gpu-node-07.json").read_text())
    assert report["command"] == "check" and "facts" in report
    assert [p.name for p in (cluster / "reports").iterdir()] == ["gpu-node-07.json"]


def test_missing_gpus_drain_the_node_with_the_reason(cluster) -> None:
    code, calls = prolog(cluster, {"SLURM_JOB_GPUS": "0,1"})  # no GPU is here
    assert code == 1
    assert calls[:3] == ["update", "nodename=gpu-node-07", "state=drain"]
    assert calls[3].startswith("reason=envcheck: healthcheck: unhealthy")


def test_an_error_finding_drains_the_node_naming_it(cluster) -> None:
    # an H100 beside this CPU-only torch (the GPU is the probe's override): TRC001
    gpu = {
        "ENVCHECK_GPUS": "NVIDIA H100 80GB HBM3:9.0:80GiB",
        "ENVCHECK_DRIVER_VERSION": "580.65.06",
        # the CPU build, also where the suite runs without torch or on another Python
        "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",
        "ENVCHECK_FACT_PYTHON_VERSION": "3.12.3",
    }
    code, calls = prolog(cluster, gpu)
    assert code == 1 and calls[2] == "state=drain"
    assert calls[3].startswith("reason=envcheck: check: TRC001 torch")
    assert len(calls[3]) <= len("reason=") + 200


def test_a_checker_that_cannot_run_never_drains(cluster) -> None:
    broken = cluster / "bin" / "broken-envcheck"
    broken.write_text("#!/bin/sh\necho 'internal error' >&2\nexit 3\n")
    broken.chmod(0o755)
    code, calls = prolog(cluster, {"ENVCHECK": str(broken)})
    assert code == 0 and calls == []


def test_the_report_replaces_a_link_instead_of_writing_through_it(cluster) -> None:
    reports = cluster / "reports"
    reports.mkdir()
    target = cluster / "elsewhere"
    target.write_text("keep")
    (reports / "gpu-node-07.json").symlink_to(target)
    code, _ = prolog(cluster)
    assert code == 0 and target.read_text() == "keep"
    assert not (reports / "gpu-node-07.json").is_symlink()


def test_reports_of_the_prolog_are_what_compare_reads(cluster) -> None:
    prolog(cluster)
    first = cluster / "reports" / "gpu-node-07.json"
    second = json.loads(first.read_text())
    second["facts"]["system"]["hostname"] = "gpu-node-08"
    (cluster / "reports" / "gpu-node-08.json").write_text(json.dumps(second))
    done = subprocess.run(
        [sys.executable, "-m", "envcheck", "compare", str(cluster / "reports")],
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 machines: gpu-node-[07-08]" in done.stdout
