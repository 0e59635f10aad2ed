"""Project requirements, CI reports (JUnit, GitHub Actions) and the healthcheck."""

from __future__ import annotations

import importlib.util
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from envcheck.core import require
from envcheck.facts import Facts
from envcheck.healthcheck import check as health
from envcheck.healthcheck import expected_gpus
from envcheck.report.ci import github_annotations, render_junit
from envcheck.requirements import (
    ConfigError,
    RequirementError,
    evaluate,
    find_config,
    parse_requirements,
)
from envcheck.rules import RULES
from tests.fake_nvml import MACHINES, make_nvml
from tests.runner import envcheck, user_env

PROFILES = Path(__file__).parent / "profiles"


def profile(name: str) -> Facts:
    return Facts.from_json((PROFILES / f"{name}.json").read_text())


# --------------------------------------------------------------------------- requirements


def test_requirements_met_by_the_h100_server() -> None:
    req = parse_requirements(
        {
            "torch": ">=2.4",
            "python": ">=3.10",
            "cuda": "12.1",
            "gpus": 8,
            "gpu_memory": "64GiB",
            "compute_capability": "8.0",
            "dtypes": ["bf16", "tf32"],
            "backend": "nccl",
        },
        "pyproject.toml",
    )
    assert evaluate(req, profile("h100-server")) == []


@pytest.mark.parametrize(
    ("raw", "code", "title"),
    [
        ({"torch": ">=2.8"}, "REQ001", "torch 2.7.1+cu126; torch>=2.8 is required by p.toml"),
        ({"python": ">=3.13"}, "REQ002", "Python 3.12.3; Python>=3.13 is required by p.toml"),
        (
            {"cuda": "12.8"},
            "REQ003",
            "torch 2.7.1+cu126 is CUDA 12.6; CUDA >= 12.8 is required by p.toml",
        ),
        ({"gpus": 16}, "REQ004", "8 GPU(s) here; 16 required by p.toml"),
        (
            {"gpu_memory": "96GiB"},
            "REQ005",
            "GPU 0 (NVIDIA H100 80GB HBM3) has 79.6 GiB; 96.0 GiB per GPU is required by p.toml",
        ),
        (
            {"compute_capability": "10.0"},
            "REQ006",
            "NVIDIA H100 80GB HBM3 is compute capability 9.0; 10.0 is required by p.toml",
        ),
        (
            {"backend": "mpi"},
            "REQ008",
            "torch.distributed backend mpi is required by p.toml, but not available",
        ),
    ],
)
def test_each_unmet_requirement_is_a_finding(raw, code, title) -> None:
    findings = evaluate(parse_requirements(raw, "p.toml"), profile("h100-server"))
    assert findings and findings[0].code == code and findings[0].severity == "error"
    assert findings[0].title == title
    assert findings[0].fix


def test_bf16_on_a_pre_ampere_gpu() -> None:
    (finding,) = evaluate(
        parse_requirements({"dtypes": ["bf16"]}, "p.toml"), profile("gtx1080-cu128")
    )
    assert finding.code == "REQ007"  # the deep probe said is_bf16_supported() is False
    facts = profile("gtx1080-cu128")
    facts.torch_runtime.status = "skipped"
    (finding,) = evaluate(parse_requirements({"dtypes": ["bf16"]}, "p.toml"), facts)
    assert "NVIDIA GeForce GTX 1080 (6.1) predate Ampere" in finding.title


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"gpu": 2}, "unknown key 'gpu'"),
        ({"torch": "new"}, "torch = 'new' is not a version specifier"),
        ({"gpus": "two"}, "gpus = 'two' is not a whole number"),
        ({"dtypes": ["int4"]}, "dtypes = ['int4']: a list of bf16, fp16, tf32"),
        ({"smoke": ["burn"]}, "smoke = ['burn']"),
        ({"backend": "mpich"}, "backend = 'mpich'"),
        ({"gpu_memory": "lots"}, "gpu_memory = 'lots' is not a size"),
    ],
)
def test_bad_config_names_file_and_key(raw, message) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_requirements(raw, "pyproject.toml")


def test_config_is_found_from_the_current_folder_upwards(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.envcheck]\ngpus = 1\n')
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    path, table = find_config(deep)
    assert path == tmp_path / "pyproject.toml" and table == {"gpus": 1}
    (deep / "envcheck.toml").write_text("gpus = 4\n")
    path, table = find_config(deep)
    assert path.name == "envcheck.toml" and table == {"gpus": 4}


@pytest.mark.slow
def test_require_raises_one_error_listing_everything() -> None:
    with pytest.raises(RequirementError) as info:
        require(torch=">=99", gpus=64, python="<3.0")
    message = str(info.value)
    assert message.startswith("this machine does not meet 3 requirement(s):")
    assert "REQ001" in message and "REQ002" in message and "REQ004" in message
    # Without torch here, the torch requirement follows from TRC003, listed first as its cause.
    cause = ["TRC003"] if importlib.util.find_spec("torch") is None else []
    assert [f.code for f in info.value.findings] == [*cause, "REQ001", "REQ002", "REQ004"]


def test_requirement_error_counts_requirements_and_names_their_cause() -> None:
    missing = RULES["TRC003"]("torch is not installed in this environment", [], "Install torch.")
    unmet = RULES["REQ001"]("no torch, but >=99 is required", [], "Install torch>=99.")
    error = RequirementError([missing, unmet.but(caused_by="TRC003")])
    lines = str(error).splitlines()
    assert lines[0] == "this machine does not meet 1 requirement(s):"
    assert lines[1].startswith("  - REQ001 no torch")
    assert lines[2] == (
        "      because TRC003 torch is not installed in this environment (fix: Install torch.)"
    )
    assert len(lines) == 3


def test_require_returns_facts_when_met() -> None:
    facts = require(python=">=3.9")
    assert isinstance(facts, Facts)


# --------------------------------------------------------------------------- CI reports


def test_sample_project_fails_check_with_junit_annotations_and_summary(tmp_path: Path) -> None:
    """The issue's 'done when': a project asking for a GPU, checked here."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "train"\n\n[tool.envcheck]\ngpus = 1\n'
    )
    junit, summary = tmp_path / "envcheck.xml", tmp_path / "summary.md"
    out = subprocess.run(
        [sys.executable, "-m", "envcheck", "check", "--no-deep", "--junit", str(junit)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **__import__("os").environ,
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(summary),
        },
    )
    assert out.returncode == 1
    assert "REQ004" in out.stdout and "0 GPU(s) here; 1 required by" in out.stdout
    # annotations go to stderr: stdout carries one format
    assert "::error title=envcheck REQ004::" in out.stderr and "::error" not in out.stdout
    root = ET.parse(junit).getroot()
    (checks,) = [s for s in root if s.get("name") == "envcheck checks"]
    failed = [c.get("name") for c in checks if c.find("failure") is not None]
    assert failed == ["REQ004 gpu-count"]
    assert int(checks.get("tests")) == len(list(checks)) > 40
    text = summary.read_text()
    assert text.startswith("## envcheck: ❌ not ready") and "| ❌ | REQ004 |" in text


def test_junit_marks_errors_as_failures_and_keeps_warnings_as_output() -> None:
    from tests.fixtures import report_of

    report = report_of(profile("h100-server"))  # DRV002 warning, TK001 info
    root = ET.fromstring(render_junit(report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["DRV002 minor-version-compatibility"].find("failure") is None
    assert (
        "minor-version compatibility"
        in cases["DRV002 minor-version-compatibility"].find("system-out").text
    )
    assert root.find("testsuite").get("failures") == "0"
    # the smoke tests did not run: their rules are skipped, never passed
    assert cases["SMK001 smoke-failed"].find("skipped") is not None
    assert cases["INT001 check-crashed"].find("skipped") is None


def test_junit_skips_what_did_not_run_and_reports_a_crashed_check(monkeypatch) -> None:
    from envcheck.checks import run as catalogue  # where run_checks reads CHECKS
    from tests.fixtures import report_of

    def broken(facts, tables):
        raise KeyError("boom")

    monkeypatch.setattr(catalogue, "CHECKS", (*catalogue.CHECKS, broken))
    facts = profile("h100-server")
    report = report_of(facts, observed={"system", "python", "nvidia", "torch", "toolkit"})
    root = ET.fromstring(render_junit(report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert "boom" in cases["INT001 check-crashed"].find("system-out").text
    assert "deep probe" in cases["RUN001 import-failed"].find("skipped").get("message")
    assert int(root.find("testsuite").get("skipped")) >= 6  # RUN*, MAC001, SMK*


def test_junit_counts_failures_and_lists_only_the_checks_of_this_run() -> None:
    """An error is counted in the suite's failures; a failed smoke test is a failure of the
    smoke suite; REQ rules are cases only with project requirements, MSG rules only when
    diagnosing a pasted report."""
    from envcheck.smoke.runner import SmokeResult
    from tests.fixtures import report_of

    failed = SmokeResult("matmul", "cpu", "failed", 1.0, error="boom\nmore")
    report = report_of(profile("gtx1080-cu128"), smoke=[failed])  # ARC001 error
    root = ET.fromstring(render_junit(report))
    checks, smoke = root.findall("testsuite")
    names = [c.get("name") for c in checks.iter("testcase")]
    failed_cases = [c.get("name") for c in checks.iter("testcase") if c.find("failure") is not None]
    assert failed_cases == ["ARC001 no-kernels-for-gpu", "SMK001 smoke-failed"]
    assert checks.get("failures") == "2"
    assert not [n for n in names if n.startswith(("REQ", "MSG"))], names
    assert smoke.get("failures") == "1"
    assert smoke.find("testcase/failure").get("message") == "failed: boom"
    req = parse_requirements({"gpus": 1}, "pyproject.toml")
    names = [
        c.get("name")
        for c in ET.fromstring(
            render_junit(report_of(profile("gtx1080-cu128"), requirements=req))
        ).iter("testcase")
    ]
    assert "REQ004 gpu-count" in names and not [n for n in names if n.startswith("MSG")]


def test_markdown_shows_the_command_and_github_says_info_as_a_notice() -> None:
    from tests.fixtures import report_of

    report = report_of(profile("intel-mac"))  # PY002 warning, TRC003 info with the command
    (trc,) = [f for f in report.findings if f.code == "TRC003"]
    assert trc.command and trc.severity.value == "info"
    from envcheck.report.ci import render_markdown

    (row,) = [line for line in render_markdown(report).splitlines() if "| TRC003 |" in line]
    assert f"`{trc.command}`" in row
    levels = [line.split(" ", 1)[0] for line in github_annotations(report).splitlines()]
    assert levels == ["::warning", "::notice"]


def test_github_annotation_escaping() -> None:
    from envcheck.core import Report, Verdict
    from envcheck.facts import Facts
    from envcheck.findings import Finding

    finding = Finding("X001", "x", "warning", "50% done, a:b", fix="line1\nline2")
    report = Report("check", Facts(), (finding,), Verdict.READY, False, "2026-12-02", {})
    out = github_annotations(report)
    assert out == "::warning title=envcheck X001::50%25 done, a:b%0Aline1%0Aline2\n"


def test_github_actions_keeps_json_and_markdown_whole(tmp_path: Path) -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}
    for args in (["--json"], ["--format", "markdown"]):
        out = envcheck("check", "--no-deep", *args, "--ignore", "TRC003,INS004", env=env)
        assert "::" not in out.stdout.replace("::nms", "")
        if args == ["--json"]:
            json.loads(out.stdout)  # stdout is one JSON document
        else:
            assert out.stdout.startswith("## envcheck: ")


def test_markdown_format() -> None:
    out = envcheck("check", "--no-deep", "--format", "markdown")
    assert out.stdout.startswith("## envcheck: ")


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "envcheck.toml"
    bad.write_text("gpu = 1\n")
    out = envcheck("check", "--no-deep", "--config", str(bad))
    assert out.returncode == 2 and "unknown key 'gpu'" in out.stderr


# --------------------------------------------------------------------------- healthcheck


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "dev").mkdir()
    return tmp_path


def test_healthy_server(root: Path) -> None:
    code, line = health(gpus=8, root=root, nvml=make_nvml(MACHINES["8xH100-SXM"]), environ={})
    assert (code, line) == (0, "healthy: 8 GPU(s), 31-38 C")


@pytest.mark.parametrize(
    ("machine", "gpus", "line"),
    [
        ("lost-GPU", None, "unhealthy: GPU 1 is lost"),
        ("unknown-error", None, "unhealthy: GPU 0: unknown: Unknown Error"),
        ("8xH100-SXM", 9, "unhealthy: 8 of 9 GPUs visible"),
        (
            "version-mismatch",
            None,
            "unhealthy: NVML lib_rm_version_mismatch: RM has detected an NVML/RM version mismatch.",
        ),
        (
            "hung-driver",
            None,
            "unhealthy: NVML timeout: NVML did not answer within 0.5 s (a hung driver or GPU) "
            "in nvmlInit",
        ),
    ],
)
def test_unhealthy_machines(root, machine, gpus, line) -> None:
    start = time.monotonic()
    code, out = health(
        gpus=gpus,
        timeout=0.5,
        root=root,
        nvml=make_nvml(MACHINES[machine]),
        environ={},
    )
    assert (code, out) == (1, line)
    assert time.monotonic() - start < 10  # a hung driver fails the check, it does not hang it


def test_ecc_errors_since_the_driver_loaded_are_unhealthy_from_the_first_run(
    root: Path, tmp_path: Path
) -> None:
    """No baseline: NVML's volatile counts start at the driver load, so any is news to
    the container (a new container on a bad GPU must not call it healthy)."""
    machine = dict(MACHINES["sick-H100"])
    machine["gpus"] = [dict(machine["gpus"][0], remap=(0, 0, 0, 0))]
    expected = (1, "unhealthy: GPU 0: 3 uncorrectable ECC errors since the driver loaded")
    for _ in range(2):  # the same answer on every run: nothing is kept between runs
        assert health(root=root, nvml=make_nvml(machine), environ={}) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["dev"]  # the fake /dev only


def test_hot_gpu(root: Path) -> None:
    machine = {**MACHINES["8xH100-SXM"], "gpus": [dict(MACHINES["8xH100-SXM"]["gpus"][0], temp=91)]}
    assert health(root=root, nvml=make_nvml(machine), environ={}) == (
        1,
        "unhealthy: GPU 0 at 91 C (slowdown 87 C)",
    )


@pytest.mark.parametrize(
    ("temps", "heat"), [((35,), "35 C"), ((35, 35), "35 C"), ((35, 41, 38), "35-41 C")]
)
def test_the_temperatures_are_a_range_only_when_they_differ(root: Path, temps, heat) -> None:
    """A real H200 printed "healthy: 1 GPU(s), 35-35 C"."""
    gpu = MACHINES["8xH100-SXM"]["gpus"][0]
    machine = {**MACHINES["8xH100-SXM"], "gpus": [dict(gpu, temp=t) for t in temps]}
    assert health(root=root, nvml=make_nvml(machine), environ={}) == (
        0,
        f"healthy: {len(temps)} GPU(s), {heat}",
    )


@pytest.mark.parametrize(
    ("value", "count"),
    [("0,1,2", 3), ("GPU-aaa,GPU-bbb", 2), ("all", None), ("none", 0), ("", None)],
)
def test_expected_gpus_from_the_container(value, count) -> None:
    assert expected_gpus({"NVIDIA_VISIBLE_DEVICES": value}) == count


def test_healthcheck_cli_exits_0_or_1_with_one_line() -> None:
    for args, code in (
        (("healthcheck",), 0),
        (("healthcheck", "--gpus", "1"), 1),
        (("healthcheck", "--no-such"), 1),
    ):
        out = envcheck(*args)
        assert out.returncode == code
        assert len(out.stdout.strip().splitlines()) == 1 and out.stderr == ""


@pytest.mark.parametrize("gpus", ["none", "NVIDIA H100 80GB HBM3:9.0:80GiB"])
def test_healthcheck_never_imports_torch_or_the_cli_group(gpus: str) -> None:
    """The group (envcheck.cli) loads the compatibility tables, which a healthcheck does not
    need: the console script runs the healthcheck without it, and a plain command line
    without click. With a GPU to
    judge it loads the one health check, not the catalogue of checks (nor, through it, the
    resolver and the tables)."""
    code = (
        "import sys\nfrom envcheck._entry import main\n"
        "try:\n    main(['healthcheck'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m in sys.modules for m in "
        "('torch', 'envcheck.cli', 'envcheck.tables.load', 'envcheck.checks.run', "
        "'envcheck.install', 'click', 'envcheck.checks.health')]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        timeout=60,
        env=user_env({"ENVCHECK_GPUS": gpus}),
    )
    judged = gpus != "none"
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False] * 6 + [judged], out.stderr


def test_a_healthcheck_without_a_driver_decides_from_nvmls_plain_answer() -> None:
    """Where there is no NVIDIA device node and NVML does not start (a machine or container
    without a driver: this one), NVML's plain answer (envcheck.probes.nvml_child) decides, and
    the healthcheck loads neither the facts model, the value types, typing nor pathlib (a
    third of its own cost). With a GPU, the test above loads the model to judge it."""
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA driver")
    code = (  # what the interpreter loaded before (an editable install's finder) is not counted
        "import json, sys\nbefore = set(sys.modules)\nfrom envcheck._entry import main\n"
        "try:\n    main(['healthcheck'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m in sys.modules and m not in before for m in ('envcheck.facts', "
        "'envcheck.values', 'envcheck.probes.nvidia', 'envcheck.probes.system', 'typing', "
        "'pathlib')]))\n"
    )
    env = {k: v for k, v in user_env().items() if not k.startswith("ENVCHECK_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "healthy: no NVIDIA GPU here, none expected", out.stderr
    assert json.loads(lines[-1]) == [False] * 6, out.stderr


@pytest.mark.parametrize(
    "gpus, resolved",
    [("none", False), ("NVIDIA H100 80GB HBM3:9.0:80GiB", True)],
)
def test_the_static_check_resolves_a_plan_only_when_a_fix_needs_one(
    gpus: str, resolved: bool
) -> None:
    """The install plan is resolved on first use (checks._util.PlanOnce): a machine where
    nothing needs installing never imports the resolver; a CPU build on a GPU box does, and
    its report carries the command. What else a static check must not import is listed."""
    code = (
        "import json, sys\nfrom envcheck._entry import main\n"
        "try:\n    main(['check', '--no-deep', '--json'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m in sys.modules for m in ('envcheck.install.resolve', "
        "'envcheck.cli.diagnose', 'psutil', 'hashlib', 'dataclasses', "
        "'envcheck.tables.read_gpus', 'envcheck.tables.read_drivers', "
        "'envcheck.tables.read_jetpack')]))\n"
    )
    env = {
        "ENVCHECK_GPUS": gpus,
        "ENVCHECK_DRIVER_VERSION": "580.95.05",
        # torch 2.13's CPU build, installed for a Python it has wheels for, on any runner (CI's
        # Python 3.9 and 3.13 stages have no torch)
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",
        "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
        "ENVCHECK_FACT_PYTHON_VERSION": "3.12.3",
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=user_env(env),
    )
    *report, imported = out.stdout.strip().splitlines()
    # Nor does a check import another command's module, psutil (Linux: /proc and /sys say
    # it), hashlib (only a tables bundle is hashed) or dataclasses (records are made without
    # it; a plan written out asks dataclasses.asdict). The built-in tables are read as they
    # are used (tables.groups.OnUse): the GPU models where there is a GPU, the drivers' table
    # where there is a driver (both machines here have one), JetPack's only on a Jetson.
    linux = platform.system() == "Linux"
    expected = [resolved, False, not linux, False, resolved, gpus != "none", True, False]
    assert json.loads(imported) == expected, out.stderr
    install = json.loads("\n".join(report))["install"]
    assert (install is not None and "torch" in install["command"]) is resolved, install
