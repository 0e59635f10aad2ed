"""`envcheck compare`: simulated fleets made from a real `probe --json` (the GPUs, driver and
torch build given by the probe's overrides, the fake boundary), edited per machine, compared by
a real envcheck process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from envcheck.fleet.hostlist import fold
from tests.runner import envcheck

H100 = "NVIDIA H100 80GB HBM3:9.0:80GiB"
MACHINE = {
    "ENVCHECK_DRIVER_VERSION": "580.65.06",
    "ENVCHECK_CUDA_DRIVER_VERSION": "13.0",
    "ENVCHECK_GPUS": "; ".join([H100] * 8),
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_DIST_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_CUDA": "13.0",
    # a whole simulated machine, also where the suite runs without torch or on another Python
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.12.3",
}
Edit = Callable[[int, Dict[str, Any]], None]


@pytest.fixture(scope="module")
def base() -> Dict[str, Any]:
    done = envcheck("probe", "--json", "--no-deep", env=MACHINE)
    assert done.returncode == 0, done.stderr
    facts: Dict[str, Any] = json.loads(done.stdout)
    return facts


def fleet(base: Dict[str, Any], folder: Path, n: int = 8, edit: Optional[Edit] = None) -> Path:
    """n reports of gpu-node-01..n (host names as `probe --show-ids` writes them)."""
    folder.mkdir(exist_ok=True)
    width = max(2, len(str(n)))
    for i in range(1, n + 1):
        facts = json.loads(json.dumps(base))
        facts["system"]["hostname"] = f"gpu-node-{i:0{width}d}"
        if edit is not None:
            edit(i, facts)
        (folder / f"report-{i}.json").write_text(json.dumps(facts), encoding="utf-8")
    return folder


def compare(*args: str) -> Any:
    return envcheck("compare", *args)


def compare_json(*args: str) -> Dict[str, Any]:
    done = envcheck("compare", "--json", *args)
    assert done.returncode in (0, 1), done.stderr
    document: Dict[str, Any] = json.loads(done.stdout)
    document["returncode"] = done.returncode
    return document


def codes(document: Dict[str, Any]) -> List[str]:
    return [f["code"] for f in document["findings"]]


def test_eight_identical_machines_are_compatible(base, tmp_path) -> None:
    done = compare(str(fleet(base, tmp_path / "r")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "COMPATIBLE" in done.stdout and "gpu-node-[01-08]" in done.stdout
    assert "CMP0" not in done.stdout


def test_one_node_with_another_torch_build_breaks_the_job(base, tmp_path) -> None:
    def other_torch(i: int, facts: Dict[str, Any]) -> None:
        if i == 7:
            facts["torch"].update(version="2.12.0+cu126", dist_version="2.12.0+cu126", cuda="12.6")

    reports = fleet(base, tmp_path / "r", edit=other_torch)
    document = compare_json(str(reports))
    assert document["returncode"] == 1
    torch = [f for f in document["findings"] if f["code"] == "CMP001"]
    assert len(torch) == 1, document["findings"]
    assert "gpu-node-07 has 2.12.0+cu126" in torch[0]["title"]
    assert "the other 7 have 2.13.0+cu130" in torch[0]["title"]
    # the build's CUDA comes with the torch: one cause, one finding
    assert "CMP003" not in codes(document)
    assert any("CUDA 12.6" in e for e in torch[0]["evidence"])
    # the resolver's command for the odd machine installs the majority's build
    assert "torch==2.13.0" in torch[0]["command"] and "/whl/cu130" in torch[0]["command"]
    text = compare(str(reports)).stdout
    assert "x ERROR CMP001 torch differs: gpu-node-07" in text


def test_a_mixed_gpu_fleet_is_a_warning_naming_the_odd_nodes(base, tmp_path) -> None:
    def fewer(i: int, facts: Dict[str, Any]) -> None:
        if i in (3, 4, 5):
            facts["nvidia"]["gpus"] = facts["nvidia"]["gpus"][:4]

    document = compare_json(str(fleet(base, tmp_path / "r", edit=fewer)))
    assert document["returncode"] == 0
    gpus = [f for f in document["findings"] if f["code"] == "CMP006"]
    assert gpus and gpus[0]["severity"] == "warning"
    assert "gpu-node-[03-05] have 4x NVIDIA H100 80GB HBM3" in gpus[0]["title"]


def test_an_nccl_variable_on_half_the_nodes_is_a_warning(base, tmp_path) -> None:
    def half(i: int, facts: Dict[str, Any]) -> None:
        if i % 2 == 0:
            facts["environment"]["NCCL_IB_DISABLE"] = "1"

    document = compare_json(str(fleet(base, tmp_path / "r", edit=half)))
    assert document["returncode"] == 0
    found = [f for f in document["findings"] if f["code"] == "CMP010"]
    assert found and found[0]["severity"] == "warning"
    assert found[0]["title"] == (
        "$NCCL_IB_DISABLE differs, with no majority: "
        "unset on 4 machines (gpu-node-[01,03,05,07]); 1 on 4 machines (gpu-node-[02,04,06,08])"
    )
    difference = next(d for d in document["differences"] if d["code"] == "CMP010")
    assert {g["value"] for g in difference["groups"]} == {"1", "unset"}


def test_a_driver_under_the_builds_floor_is_that_nodes_own_error(base, tmp_path) -> None:
    def old_driver(i: int, facts: Dict[str, Any]) -> None:
        if i == 2:
            facts["nvidia"].update(driver_version="535.104.05", cuda_driver_version="12.2")

    document = compare_json(str(fleet(base, tmp_path / "r", edit=old_driver)))
    assert document["returncode"] == 1
    own = [f for f in document["findings"] if f["code"] == "CMP015"]
    assert own and own[0]["title"].startswith("DRV001 on gpu-node-02:"), own
    # another torch on that node alone would make it differ from the rest: no such command
    assert own[0]["command"] is None and "gpu-node-02 alone would make them differ" in own[0]["fix"]
    assert "CMP007" in codes(document)  # and the branch differs from the others'


def test_a_thousand_machines_read_as_grouped_host_lists(base, tmp_path) -> None:
    def odd(i: int, facts: Dict[str, Any]) -> None:
        if i in (17, 18, 19, 33, 640):
            facts["torch"].update(version="2.12.0+cu126", dist_version="2.12.0+cu126", cuda="12.6")
        if i > 500:
            facts["environment"]["NCCL_SOCKET_IFNAME"] = "eth0"

    reports = fleet(base, tmp_path / "r", n=1000, edit=odd)
    done = compare(str(reports))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) < 60, done.stdout
    assert "5 machines (gpu-node-[0017-0019,0033,0640]) have 2.12.0+cu126" in done.stdout
    assert "gpu-node-[0001-1000]" in lines[0]


def test_check_json_reports_bring_their_own_findings(base, tmp_path) -> None:
    done = envcheck("check", "--json", "--no-deep", env=MACHINE)
    report = json.loads(done.stdout)
    report["facts"] = json.loads(json.dumps(base))
    report["facts"]["system"]["hostname"] = "gpu-node-01"
    report["findings"].append(
        {"code": "GPU001", "name": "gpu-lost", "severity": "error", "title": "GPU 3 fell off"}
    )
    folder = fleet(base, tmp_path / "r", n=3)
    (folder / "report-1.json").write_text(json.dumps(report), encoding="utf-8")
    document = compare_json(str(folder))
    own = [f["title"] for f in document["findings"] if f["code"] == "CMP015"]
    assert own == ["GPU001 on gpu-node-01: GPU 3 fell off"]


@pytest.mark.parametrize(
    "content, why",
    [
        ('{"schema_version": 1, "system": {"os": "Li', "not JSON"),
        ("hello", "not JSON"),
        ("[1, 2]", "not an envcheck report"),
        ('{"name": "x"}', "not an envcheck report"),
        ('{"schema_version": 99, "system": {}}', "schema_version 99 is newer than this envcheck"),
    ],
)
def test_an_unreadable_report_is_named_and_the_rest_compared(
    base, tmp_path, content: str, why: str
) -> None:
    folder = fleet(base, tmp_path / "r", n=3)
    (folder / "bad.json").write_text(content, encoding="utf-8")
    (folder / "README.txt").write_text("reports of the nodes", encoding="utf-8")
    done = compare(str(folder))
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    flat = " ".join(done.stdout.split())  # lines are wrapped to the terminal
    assert flat.count("unreadable:") == 1 and why in flat.split("bad.json:")[1]
    assert "skipped 1 file(s) not named *.json" in flat
    assert "gpu-node-[01-03]" in done.stdout  # the others were compared
    assert "1 report could not be read" in flat


def test_too_few_reports_and_a_host_reported_twice(base, tmp_path) -> None:
    folder = fleet(base, tmp_path / "r", n=1)
    done = compare(str(folder))
    assert done.returncode == 2 and "two or more reports" in done.stderr
    assert compare(str(tmp_path / "missing")).returncode == 2
    twice = fleet(base, tmp_path / "t", n=2)
    (twice / "again.json").write_text((twice / "report-1.json").read_text(), encoding="utf-8")
    done = compare(str(twice))
    assert done.returncode == 0 and "gpu-node-01 is reported twice" in done.stdout


def test_reports_on_stdin_one_per_line(base) -> None:
    lines = []
    for i in (1, 2):
        facts = json.loads(json.dumps(base))
        facts["system"]["hostname"] = f"n{i}"
        lines.append(json.dumps(facts))
    import subprocess
    import sys

    from tests.runner import user_env

    done = subprocess.run(
        [sys.executable, "-m", "envcheck", "compare", "-"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "n[1-2]" in done.stdout


def test_host_lists_fold_like_slurms() -> None:
    assert fold(["gpu-node-017", "gpu-node-018", "gpu-node-019", "gpu-node-033"]) == (
        "gpu-node-[017-019,033]"
    )
    assert fold(["n9", "n10", "n11", "login"]) == "login,n[9-11]"
    assert fold(["n099", "n100"]) == "n[099-100]"
    assert fold(["a"]) == "a"


def test_markdown_and_html_tables_mark_the_odd_values(base, tmp_path) -> None:
    def odd(i: int, facts: Dict[str, Any]) -> None:
        if i == 5:
            facts["torch"].update(version="2.12.0+cu126", dist_version="2.12.0+cu126", cuda="12.6")
            facts["environment"]["NCCL_DEBUG"] = "<script>INFO"

    reports = str(fleet(base, tmp_path / "r", edit=odd))
    markdown = compare("--format", "markdown", reports)
    assert markdown.returncode == 1
    assert "| 7: gpu-node-[01-04,06-08] | 2.13.0+cu130 | unset |" in markdown.stdout
    assert "| 1: gpu-node-05 | **2.12.0+cu126** | **<script>INFO** |" in markdown.stdout
    page = compare("--format", "html", reports).stdout
    assert page.startswith("<!DOCTYPE html>") and "<script>" not in page
    assert "&lt;script&gt;INFO" in page and "CMP001" in page
    assert compare("--json", "--format", "html", reports).returncode == 2


def test_a_line_on_stdin_longer_than_any_report_is_skipped_not_held(base) -> None:
    import io

    from envcheck.fleet import inputs

    good = json.dumps({**base, "system": {**base["system"], "hostname": "n1"}})
    stream = io.StringIO(good + "\n" + "x" * (inputs.MAX_REPORT_BYTES + 10) + "\n" + good + "\n")
    read = inputs.read_inputs(["-"], stream)
    assert [u.source for u in read.unreadable] == ["stdin:2"]
    assert [m.source for m in read.machines] == ["stdin:1"]  # the third: the same host
    assert "reported twice" in read.notes[0]


def test_a_smaller_memlock_limit_on_one_node_is_a_warning(base, tmp_path) -> None:
    def limited(i: int, facts: Dict[str, Any]) -> None:
        facts["system"]["memlock_limit"] = 64 << 10 if i == 4 else -1

    document = compare_json(str(fleet(base, tmp_path / "r", edit=limited)))
    found = [f for f in document["findings"] if f["code"] == "CMP016"]
    assert found and found[0]["severity"] == "warning"
    assert (
        found[0]["title"]
        == "memlock limit differs: gpu-node-04 has 64 KiB; the other 7 have unlimited"
    )
    assert "--ulimit memlock=-1" in found[0]["fix"]
