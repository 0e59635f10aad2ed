"""The core: one Report per run, one install plan, one selection, one verdict.

Each test here stands for an observation of the core issue that failed on the
main before it (a CPU->CUDA fix that installed nothing, two command builders,
commands that could never work, selection in four places, CI outputs missing
findings, formats mixed on stdout, two verdicts).
"""

from __future__ import annotations

import json
import sys

import pytest

import envcheck
from envcheck.facts import Facts, GpuFacts, PackageFacts, TorchFacts, TorchRuntimeFacts
from envcheck.install import Wish, installed_wish, render, resolve
from envcheck.values import ComputeCapability, Severity
from tests.fixtures import TABLES, finding, profile, profile_names, report_of
from tests.runner import envcheck as run_envcheck

GPU_BOX = {
    "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
    "ENVCHECK_DRIVER_VERSION": "550.54.14",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.4",
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
    "ENVCHECK_FACT_TORCH_CUDA": "",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
}


def _linux(version: str, cuda=None, gpus=(), companions=()) -> Facts:
    facts = profile("docker-small-shm")  # a Linux x86_64 machine with no GPU
    facts.torch = TorchFacts(
        installed=True,
        version=version,
        dist_version=version,
        cuda=cuda,
        location="/x/site-packages/torch",
        installer="pip",
        companions=[PackageFacts(name=n, version=v) for n, v in companions],
    )
    facts.python.version = "3.11.7"
    facts.nvidia.gpus = list(gpus)
    if gpus:
        facts.nvidia.driver_version = "550.54.14"
        facts.nvidia.cuda_driver_version = "12.4"
        facts.nvidia.device_nodes = ["/dev/nvidia0"]
    return facts


RTX4090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 4090", compute_capability=ComputeCapability.parse("8.9")
)


def test_a_cpu_build_is_replaced_by_the_cuda_build_of_the_same_version() -> None:
    """Observation 1: `torch==2.13.0` is met by 2.13.0+cpu, so the pin carries the label."""
    facts = _linux("2.13.0+cpu", gpus=[RTX4090], companions=[("torchvision", "0.28.0+cpu")])
    report = report_of(facts)
    assert finding(report, "TRC001").command == (
        "pip install torch==2.13.0+cu126 torchvision==0.28.0+cu126 "
        "--index-url https://download.pytorch.org/whl/cu126"
    )
    assert report.install.plan.replaces_build is True


def test_every_command_in_a_report_is_the_resolvers() -> None:
    """Observation 2: one builder. For every profile, each command shown is exactly what the
    resolver and renderer give for the report's wish (what `envcheck install --keep` asks)."""
    compared = 0
    for name in profile_names():
        facts = profile(name)
        report = report_of(facts)
        commands = [f.command for f in report.findings if f.command]
        assert len(commands) <= 1, name  # one plan, shown once
        if commands:
            compared += 1
            plan = resolve(facts, TABLES, installed_wish(facts))
            assert commands == [render(plan, "pip", TABLES.uv_torch_backends)], name
            if facts.torch.installed:
                assert report.install.plan.wish.cli_args[-1:] == ["--keep"]
    assert compared >= 3  # profiles without a command would compare nothing


@pytest.mark.parametrize(
    ("installed", "command"),
    [
        (
            "2.5.1+cu121",
            "pip install torch==2.5.1+cpu --index-url https://download.pytorch.org/whl/cpu",
        ),
        (
            "2.6.0a0+ecf3bae40a",
            "pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cpu",
        ),
        (
            "2.7.0.dev20250301+cu128",
            "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cpu",
        ),
        (
            "2.3.0a0+ebedce2",
            "pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cpu",
        ),
    ],
)
def test_cuda_build_without_gpu_gets_a_command_that_can_work(installed, command) -> None:
    """Observation 3: never a local CUDA label, nightly or source hash with the CPU index."""
    report = report_of(_linux(installed, cuda="12.4"))
    assert finding(report, "TRC002").command == command


def test_selection_by_code_or_name_for_every_family() -> None:
    """Observation 4: --ignore by name works for requirements and smoke findings too, and an
    unknown code is said."""
    from envcheck.requirements import parse_requirements
    from envcheck.smoke.runner import SmokeResult

    req = parse_requirements({"gpus": 1}, "pyproject.toml")
    failed = SmokeResult("matmul", "cpu", "failed", error="boom")
    facts = profile("docker-small-shm")
    base = report_of(facts, requirements=req, smoke=[failed])
    assert {"REQ004", "SMK001"} <= {f.code for f in base.findings}
    report = report_of(
        facts, requirements=req, smoke=[failed], ignore=["gpu-count", "smoke-failed", "BOGUS"]
    )
    codes = {f.code for f in report.findings}
    assert "REQ004" not in codes and "SMK001" not in codes
    sel = finding(report, "SEL001")
    assert sel.severity is Severity.WARNING and "BOGUS" in sel.title
    assert set(report.ignored) == {"REQ004", "SMK001"}


def test_selection_takes_commas_the_project_file_and_ignoring_sel001() -> None:
    """--ignore "a,b" is two codes; the project file's ignore list is applied like --ignore;
    and ignoring SEL001 silences the warning about a code that names nothing."""
    from envcheck.requirements import parse_requirements

    facts = profile("docker-small-shm")  # SYS001, INS004, SYS002, SYS003
    report = report_of(facts, ignore=["sys002,no-virtual-environment"])
    assert [f.code for f in report.findings] == ["SYS001", "SYS003"]
    req = parse_requirements({"ignore": ["SYS003", "BOGUS"]}, "pyproject.toml")
    report = report_of(facts, requirements=req, ignore=["SYS002"])
    assert set(report.ignored) == {"SYS002", "SYS003"}
    assert [f.code for f in report.findings] == ["SYS001", "SEL001", "INS004"]
    assert "pyproject.toml: BOGUS" in finding(report, "SEL001").evidence
    report = report_of(facts, requirements=req, ignore=["SYS002", "SEL001"])
    assert [f.code for f in report.findings] == ["SYS001", "INS004"]


def test_the_advice_keeps_the_installed_build_where_it_fits() -> None:
    """torch 2.13.0+cu126 on a driver that also runs cu130: the advice keeps cu126 (--keep),
    while a fresh install takes the newest CUDA the driver runs."""
    facts = profile("h100-server")
    facts.torch.version = facts.torch.dist_version = "2.13.0+cu126"
    facts.torch.cuda = "12.6"
    facts.torch.companions = []
    facts.nvidia.driver_version = "580.95.05"
    facts.torch_runtime = TorchRuntimeFacts(status="skipped")
    kept = resolve(facts, TABLES, installed_wish(facts), "linux-x86_64")
    assert (kept.ok, kept.torch, str(kept.variant)) == (True, "2.13.0", "cu126")
    assert "(the installed build)" in kept.reasons[0]
    fresh = resolve(facts, TABLES, Wish(), "linux-x86_64")
    assert str(fresh.variant) != "cu126"


def test_a_plan_on_an_unknown_driver_says_so() -> None:
    """Neither the driver version nor the CUDA it runs is known: the plan picks a build but
    lists the driver as unverified, never as a pass."""
    facts = profile("h100-server")
    facts.nvidia.driver_version = None
    facts.nvidia.cuda_driver_version = None
    plan = resolve(facts, TABLES, installed_wish(facts), "linux-x86_64")
    assert plan.ok
    assert any(
        str(u).startswith("whether the driver runs CUDA") and "no driver version known" in str(u)
        for u in plan.unverified
    ), plan.unverified


def test_one_root_cause_gives_one_error() -> None:
    """Observation 7: no torch and a required smoke test: one error, the failure under it."""
    from envcheck.requirements import parse_requirements
    from envcheck.smoke.runner import SmokeResult

    facts = profile("docker-small-shm")
    facts.torch = TorchFacts(installed=False)
    facts.torch_runtime = TorchRuntimeFacts(status="skipped")
    req = parse_requirements({"smoke": ["matmul"], "torch": ">=2.4", "backend": "gloo"}, "p")
    failed = SmokeResult("matmul", "cpu", "failed", error="No module named 'torch'")
    # (the profile's 64 MB /dev/shm is another root cause: set aside here)
    report = report_of(facts, requirements=req, smoke=[failed], ignore=["SYS001"])
    trc = finding(report, "TRC003")
    assert trc.severity is Severity.ERROR  # raised to what follows from it
    assert {f.code for f in report.follow_ons(trc)} == {"SMK001", "REQ001", "REQ008"}
    assert report.counts()["error"] == 1 and not report.ready


def test_python_api_is_the_cli() -> None:
    report = envcheck.check(deep=False, requirements=False)
    out = run_envcheck("check", "--no-deep", "--json")
    data = json.loads(out.stdout)
    assert data["verdict"] == report.verdict.value
    assert [f["code"] for f in data["findings"]] == [f.code for f in report.findings]


def test_report_command_equals_envcheck_install_keep() -> None:
    """Parity through the CLI on a simulated GPU box: the report's one command is what
    `envcheck install` prints for the same wish."""
    report = json.loads(run_envcheck("check", "--no-deep", "--json", env=GPU_BOX).stdout)
    args = report["install"]["install_args"]
    printed = run_envcheck("install", *args, env=GPU_BOX).stdout.strip().splitlines()[-1]
    assert printed == report["install"]["command"]
    assert printed.startswith("pip install torch==2.13.0+cu126")


def test_run_refuses_a_plan_for_another_python_or_platform() -> None:
    other = "3.9" if sys.version_info[:2] != (3, 9) else "3.10"  # never this interpreter's
    out = run_envcheck("install", "--python-version", other, "--run")
    assert out.returncode == 2 and f"the plan is for Python {other}" in out.stderr
    out = run_envcheck("install", "--platform", "windows-x86_64", "--run")
    assert out.returncode == 2 and "the plan is for windows-x86_64" in out.stderr


def test_run_reports_a_mismatch_as_failure() -> None:
    from envcheck.cli import installed_mismatches

    facts = _linux("2.13.0+cpu", gpus=[RTX4090])
    plan = resolve(facts, TABLES, installed_wish(facts))
    assert installed_mismatches(plan, facts) == [
        "torch build: planned cu126, installed 2.13.0+cpu (cpu)"
    ]
    after = _linux("2.13.0+cu126", cuda="12.6", gpus=[RTX4090])
    assert installed_mismatches(plan, after) == []
