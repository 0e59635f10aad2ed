"""The checks over realistic machine profiles (Facts JSON), each with its exact findings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envcheck.checks import run_checks
from envcheck.facts import SCHEMA_VERSION, Facts
from envcheck.values import ComputeCapability, Severity, parse_gpu_arch
from tests.fixtures import PROFILES, TABLES, profile, report_of

# profile -> [(severity, code)] in report order, and the commands the fixes give.
EXPECTED = {
    "h100-server": ([("warning", "DRV002"), ("info", "TK001")], {}),
    "old-laptop-new-build": (
        [("error", "DRV001")],
        # the fixture tables lack the list of 2.7's cu118 build that this driver runs: a plan
        # resting on unknown kernels is no fit, so no command (the shipped tables give one)
        {},
        # RUN003 (CUDA unavailable) follows from the driver: one root cause, one error
    ),
    "rtx5090-cu126": (
        [("error", "ARC001")],
        # the same version in another build: local pins, or pip keeps +cu126; the installed
        # torchvision comes along
        {
            "ARC001": "pip install torch==2.7.1+cu128 torchvision==0.22.1+cu128 "
            "--index-url https://download.pytorch.org/whl/cu128"
        },
    ),
    "gtx1080-cu128": (
        [("error", "ARC001"), ("warning", "ARC003")],
        {
            "ARC001": "pip install torch==2.8.0+cu126 torchvision==0.23.0+cu126 "
            "--index-url https://download.pytorch.org/whl/cu126"
        },
    ),
    "docker-small-shm": (
        [("error", "SYS001"), ("info", "INS004"), ("info", "SYS002"), ("info", "SYS003")],
        {},
    ),
    "intel-mac": (
        [("warning", "PY002"), ("info", "TRC003")],
        {"TRC003": "pip install torch==2.2.2"},
    ),
    "windows-cpu-default": (
        [("error", "TRC001")],
        {
            "TRC001": "pip install torch==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128"
        },
    ),
    "shadowed-cudnn": ([("error", "RUN001")], {}),  # ARC004 follows from it
}


def test_every_profile_has_expectations() -> None:
    assert {p.stem for p in PROFILES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_profile_findings(name: str) -> None:
    report = report_of(profile(name))
    codes, commands = EXPECTED[name]
    assert [(f.severity, f.code) for f in report.roots] == codes
    assert {f.code: f.command for f in report.findings if f.command} == commands
    for f in report.findings:
        assert f.title and f.fix, f"{f.code} needs a title and a fix"


def test_a_follow_on_is_grouped_under_its_cause() -> None:
    report = report_of(profile("old-laptop-new-build"))
    (run003,) = [f for f in report.findings if f.code == "RUN003"]
    assert run003.caused_by == "DRV001"
    assert report.counts() == {"error": 1, "warning": 0, "info": 0, "follow_on": 1}


def test_explanations_name_the_cause() -> None:
    """The words users need: the real error messages and the real limits."""
    texts = {
        name: {
            f.code: f"{f.title} {' '.join(f.evidence)} {f.fix}"
            for f in run_checks(profile(name), TABLES)
        }
        for name in EXPECTED
    }
    assert "no kernel image is available" in texts["rtx5090-cu126"]["ARC001"]
    assert "sm_120" in texts["rtx5090-cu126"]["ARC001"]
    assert "driver 470.82.01 < 525.60.13" in texts["old-laptop-new-build"]["DRV001"]
    assert "found version 11040" in texts["old-laptop-new-build"]["RUN003"]
    assert "--shm-size" in texts["docker-small-shm"]["SYS001"]
    assert "Bus error" in texts["docker-small-shm"]["SYS001"]
    assert "LD_LIBRARY_PATH" in texts["shadowed-cudnn"]["RUN001"]
    assert "CPU-only wheels" in texts["windows-cpu-default"]["TRC001"]
    assert "Intel Macs get no wheels after torch 2.2.2" in texts["intel-mac"]["PY002"]
    assert "torch 2.14.1 (cu126)" in texts["gtx1080-cu128"]["ARC003"]
    assert "minor-version compatibility" in texts["h100-server"]["DRV002"]


def test_ignore_by_code_or_name() -> None:
    facts = profile("docker-small-shm")
    report = report_of(facts, ignore=["sys002", "no-virtual-environment"])
    assert [f.code for f in report.findings] == ["SYS001", "SYS003"]
    assert report.ignored == ("SYS002", "INS004")


def test_heterogeneous_gpus_are_judged_by_every_gpu() -> None:
    """An H100 and an RTX 5090 in one box on a cu126 build: the 5090 decides."""
    facts = profile("h100-server")
    facts.nvidia.gpus[1].name = "NVIDIA GeForce RTX 5090"
    facts.nvidia.gpus[1].compute_capability = ComputeCapability.parse("12.0")
    facts.torch_runtime.arch_list = []  # fall back to the table of 2.7 cu126: unknown -> ARC004
    findings = run_checks(facts, TABLES)
    assert "ARC004" in [f.code for f in findings]
    facts.torch_runtime.arch_list = [
        parse_gpu_arch(a) for a in ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    ]
    (arc,) = [f for f in run_checks(facts, TABLES) if f.code == "ARC001"]
    assert "RTX 5090 (sm_120)" in arc.title and "H100" not in arc.title


def test_ptx_only_gpu_is_a_warning() -> None:
    facts = profile("rtx5090-cu126")
    facts.torch_runtime.arch_list = [parse_gpu_arch(a) for a in ["sm_80", "sm_90", "compute_90"]]
    (finding,) = run_checks(facts, TABLES)
    assert (finding.code, finding.severity) == ("ARC002", "warning")
    assert finding.severity is Severity.WARNING
    assert "compute_90" in finding.title


def test_driver_newer_than_tables_is_a_warning_naming_the_date() -> None:
    facts = profile("h100-server")
    facts.nvidia.driver_version = "999.10.01"
    (finding,) = [f for f in run_checks(facts, TABLES) if f.code == "TBL001"]
    assert finding.severity == "warning"
    assert TABLES.files["cuda_driver"].as_of in finding.title


def test_torch_newer_than_tables() -> None:
    facts = profile("h100-server")
    facts.torch.version = facts.torch.dist_version = "2.99.0+cu140"
    facts.torch.cuda = "14.0"
    codes = [f.code for f in run_checks(facts, TABLES)]
    assert codes.count("TBL001") == 2  # the torch and its CUDA
    assert "INT001" not in codes


def test_lost_gpu_and_sick_memory() -> None:
    facts = profile("h100-server")
    facts.nvidia.gpus[2].status = "lost"
    facts.nvidia.gpus[3].ecc_uncorrected_volatile = 2
    facts.nvidia.gpus[4].row_remap_failure = True
    facts.nvidia.gpus[5].mig_mode, facts.nvidia.gpus[5].mig_devices = True, 0
    codes = [f.code for f in run_checks(facts, TABLES)]
    for code in ("GPU001", "GPU002", "GPU004", "GPU005"):
        assert code in codes


def test_companion_mismatches() -> None:
    facts = profile("rtx5090-cu126")
    facts.torch.companions[0].version = "0.21.0+cu124"
    report = report_of(facts)
    findings = {f.code: f for f in report.findings}
    assert "cu124" in findings["PKG002"].title
    assert set(report.install.fixes) == {"ARC001", "PKG001", "PKG002"}
    # one plan fixes all three: the build for the 5090, and the torchvision that matches it
    assert findings["ARC001"].command == (
        "pip install torch==2.7.1+cu128 torchvision==0.22.1 "
        "--index-url https://download.pytorch.org/whl/cu128"
    )
    assert findings["PKG001"].command is None  # the command is given once


def test_torchaudio_2_11_is_accepted_with_later_torch() -> None:
    facts = profile("docker-small-shm")
    facts.torch.companions = [
        dataclasses.replace(facts.torch.installs[0], name="torchaudio", version="2.11.0+cpu")
    ]
    assert "PKG001" not in [f.code for f in run_checks(facts, TABLES)]
    facts.torch.companions[0].version = "2.10.0+cpu"
    assert "PKG001" in [f.code for f in run_checks(facts, TABLES)]


def test_nvidia_wheels_of_the_wrong_major() -> None:
    facts = profile("shadowed-cudnn")
    facts.torch.companions.append(
        dataclasses.replace(
            facts.torch.companions[0], name="nvidia-cudnn-cu13", version="9.13.0.50"
        )
    )
    codes = [f.code for f in run_checks(facts, TABLES)]
    assert "PKG004" in codes and "PKG003" not in codes
    facts.torch.cuda = "13.0"
    facts.torch.companions = [c for c in facts.torch.companions if c.name.endswith("cu12")]
    assert "PKG003" in [f.code for f in run_checks(facts, TABLES)]


@pytest.mark.parametrize(
    ("visible", "container", "nodes", "cause"),
    [
        ("", None, ["/dev/nvidia0"], "CUDA_VISIBLE_DEVICES=''"),
        ("-1", None, ["/dev/nvidia0"], "hides every GPU"),
        (None, "docker", [], "the container was started without GPUs"),
    ],
)
def test_why_cuda_is_unavailable(visible, container, nodes, cause) -> None:
    facts = profile("rtx5090-cu126")
    facts.torch_runtime.cuda_available = False
    facts.torch_runtime.arch_list = [parse_gpu_arch(a) for a in ["sm_120"]]
    facts.nvidia.device_nodes = nodes
    facts.system.container = container
    if visible is not None:
        facts.environment["CUDA_VISIBLE_DEVICES"] = visible
    (finding,) = [f for f in run_checks(facts, TABLES) if f.code == "RUN003"]
    assert cause in finding.title


# JSON has no NaN or infinity; Facts never holds them.
st.register_type_strategy(float, st.floats(allow_nan=False, allow_infinity=False))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_type(Facts).map(lambda f: dataclasses.replace(f, schema_version=SCHEMA_VERSION)))
def test_no_check_crashes_on_any_facts(facts: Facts) -> None:
    """Whatever a Facts record holds (a pasted report, a strange machine), checks answer."""
    findings = run_checks(facts, TABLES)
    assert [f for f in findings if f.code == "INT001"] == []


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(EXPECTED)),
    st.sampled_from(["", "abc", "1", "535", "9999.99.99", "12.8.x", "1e3"]),
    st.sampled_from(["", "x.y", "12", "12.8", "99.9", "-1"]),
)
def test_no_check_crashes_on_odd_versions(name: str, driver: str, cuda: str) -> None:
    facts = profile(name)
    facts.nvidia.driver_version = driver or None
    facts.torch.cuda = cuda or None
    findings = run_checks(facts, TABLES)
    assert [f for f in findings if f.code == "INT001"] == []


def test_every_code_is_documented() -> None:
    from envcheck.rules import RULES

    doc = (Path(__file__).parent.parent / "docs" / "checks.md").read_text()
    for rule in RULES.values():
        assert f"### {rule.code} {rule.name} ({rule.severity}" in doc, rule.code
