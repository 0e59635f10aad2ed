"""The command line, run as a user runs it: a real ``python -m envcheck`` process."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck import __version__
from envcheck.facts import Facts
from tests.runner import envcheck, user_env

HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_version() -> None:
    out = envcheck("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"envcheck, version {__version__}"


def test_static_probe_json_round_trips_without_importing_torch() -> None:
    code = (
        "import sys\n"
        "from envcheck.cli import cli\n"
        "cli.main(['probe', '--no-deep', '--json'], standalone_mode=False)\n"
        "print('torch imported' if 'torch' in sys.modules else 'torch not imported', file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=user_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().endswith("torch not imported")
    facts = Facts.from_json(out.stdout)
    assert Facts.from_json(facts.to_json()) == facts
    assert facts.torch_runtime.status == "skipped"
    assert facts.python.executable == sys.executable
    assert facts.torch.installed is HAS_TORCH


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed in this environment")
@pytest.mark.slow
def test_deep_probe_json() -> None:
    out = envcheck("probe", "--json")
    assert out.returncode == 0, out.stderr
    facts = Facts.from_json(out.stdout)
    assert facts.torch_runtime.status == "ok"
    assert facts.torch_runtime.version == facts.torch.version


def test_text_report_is_readable_and_plain_when_piped() -> None:
    out = envcheck("probe", "--no-deep")
    assert out.returncode == 0, out.stderr
    for heading in ("System", "Python", "NVIDIA", "PyTorch", "CUDA toolkit", "Environment"):
        assert f"\n{heading}\n" in out.stdout
    assert "\x1b[" not in out.stdout  # not a terminal: no colour
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in out.stdout


@pytest.mark.slow
def test_bare_envcheck_runs_check() -> None:
    out = envcheck(env={"ENVCHECK_FACT_TORCH_RUNTIME_STATUS": "skipped"})
    assert out.returncode in (0, 1), out.stderr
    assert out.stdout.startswith(f"envcheck {__version__} check")
    assert "READY" in out.stdout


@pytest.mark.parametrize(
    ("env", "colored"),
    [({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False), ({}, False)],
)
def test_colour_follows_the_conventions(env: dict, colored: bool) -> None:
    out = envcheck("probe", "--no-deep", env=env)
    assert out.returncode == 0, out.stderr
    assert ("\x1b[" in out.stdout) is colored


def test_overrides_show_in_the_report_and_the_json() -> None:
    env = {
        "ENVCHECK_DRIVER_VERSION": "535.104.05",
        "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
        "ENVCHECK_GPUS": "NVIDIA GeForce RTX 5090:12.0:32GiB",
    }
    text = envcheck("probe", "--no-deep", env=env).stdout
    assert "overridden from the environment" in text
    assert "535.104.05 (from override), supports CUDA 12.2" in text
    assert "NVIDIA GeForce RTX 5090, sm_120, 32.0 GiB" in text
    facts = Facts.from_json(envcheck("probe", "--no-deep", "--json", env=env).stdout)
    assert facts.nvidia.gpus[0].compute_capability == "12.0"
    assert facts.overrides == ["nvidia.cuda_driver_version", "nvidia.driver_version", "nvidia.gpus"]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("probe",), {"ENVCHECK_GPUS": "RTX 5090"}, "ENVCHECK_GPUS"),
        (("probe", "--python", "/no/such/python"), {}, "cannot run /no/such/python"),
        (("probe", "--timeout", "-1"), {}, "--timeout"),
        (("probe", "--frobnicate"), {}, "No such option"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(args, env, message) -> None:
    out = envcheck(*args, env=env)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout


def test_another_interpreter_with_python_option(tmp_path: Path) -> None:
    venv = tmp_path / "project-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    out = envcheck("probe", "--json", "--python", str(python))
    assert out.returncode == 0, out.stderr
    facts = Facts.from_json(out.stdout)
    assert facts.python.executable == str(python)
    assert facts.python.env_kind == "venv" and facts.python.env_name == "project-venv"
    assert facts.python.pip_version is None
    assert facts.torch.installed is False
    assert facts.torch_runtime.status == "not_installed"


def test_secrets_in_the_environment_are_never_printed() -> None:
    env = {
        "HF_TOKEN": "hf_secretvalue123",
        "NCCL_SOCKET_IFNAME": "eth0",
        "PIP_INDEX_URL": "https://alice:hunter2@pypi.internal/simple",
    }
    for args in (("probe", "--no-deep"), ("probe", "--no-deep", "--json")):
        out = envcheck(*args, env=env)
        assert "secretvalue" not in out.stdout and "hunter2" not in out.stdout
        assert "NCCL_SOCKET_IFNAME" in out.stdout


def test_help_lists_the_options() -> None:
    out = envcheck("probe", "--help")
    assert out.returncode == 0
    for option in ("--json", "--deep / --no-deep", "--timeout", "--python", "--show-ids"):
        assert option in out.stdout


def test_module_and_console_script_agree() -> None:
    """`python -m envcheck` and the `envcheck` script are the same program."""
    script = Path(sys.executable).parent / "envcheck"
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout == envcheck("--version").stdout


def test_json_is_valid_even_with_a_broken_torch(tmp_path: Path) -> None:
    from tests.faketorch import make_fake_torch

    path = make_fake_torch(tmp_path, "segfault")
    # The static probe sees this torch on PYTHONPATH too; the deep probe records the crash.
    out = envcheck("probe", "--json", env={"PYTHONPATH": str(path)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["torch_runtime"]["status"] == "crashed"
    assert data["torch_runtime"]["signal"] == "SIGSEGV"


# --------------------------------------------------------------------------- check and tables

GPU_BOX = {
    "ENVCHECK_DRIVER_VERSION": "570.86.16",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.8",
    "ENVCHECK_GPUS": "NVIDIA GeForce RTX 5090:12.0:32GiB",
}


def test_check_on_this_machine_is_ready() -> None:
    out = envcheck("check", "--no-deep")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "READY" in out.stdout and "tables as of" in out.stdout


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch installed to judge its build")
def test_check_fails_on_a_simulated_gpu_box_with_the_fix() -> None:
    out = envcheck("check", "--no-deep", env=GPU_BOX)
    assert out.returncode == 1
    assert "TRC001" in out.stdout and "NOT READY" in out.stdout
    flat = " ".join(out.stdout.split())  # fix text wraps with the terminal width
    assert "upgrade the driver to 580.65.06 or newer for its cu132 build" in flat
    # the nearest torch that runs here, as one command under the finding
    assert out.stdout.count("$ pip install torch==2.11.0 --index-url") == 1


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch installed to judge its build")
def test_check_json_report() -> None:
    out = envcheck("check", "--no-deep", "--json", env=GPU_BOX)
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["schema_version"] == 1 and report["ready"] is False
    assert report["summary"]["error"] >= 1
    (trc,) = [f for f in report["findings"] if f["code"] == "TRC001"]
    assert set(trc) == {
        "code",
        "name",
        "severity",
        "title",
        "evidence",
        "fix",
        "command",
        "caused_by",
    }
    assert report["verdict"] == "not ready" and report["install"]["fixes"] == ["TRC001"]
    assert report["install"]["command"] == trc["command"]
    assert report["install"]["argv"] == trc["command"].split()
    assert Facts.from_dict(report["facts"]).nvidia.driver_version == "570.86.16"
    assert report["tables"]["torch_releases"]["builtin"] is True


def test_strict_and_ignore() -> None:
    """A warning fails only with --strict; --ignore drops it. Judged against the report
    itself, since the other findings depend on the machine and Python running the tests."""
    env = {"ENVCHECK_FACT_SYSTEM_DISKS": '[{"path": "/x", "total": 100000000000, "free": 1000000}]'}

    def run(*extra: str):
        out = envcheck("check", "--no-deep", "--json", *extra, env=env)
        report = json.loads(out.stdout)
        return out.returncode, report, [f["code"] for f in report["findings"]]

    rc, report, codes = run()
    assert "SYS004" in codes
    assert rc == (0 if report["summary"]["error"] == 0 else 1)
    rc, report, codes = run("--strict")
    assert rc == 1 and report["ready"] is False and report["strict"] is True
    rc, report, codes = run("--strict", "--ignore", "SYS004")
    assert "SYS004" not in codes
    worse = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
    assert report["ready"] is (not worse) and rc == (0 if not worse else 1)


def test_tables_command_and_env_var(tmp_path: Path) -> None:
    out = envcheck("tables")
    assert out.returncode == 0
    assert "torch_releases  as of" in out.stdout and "range: 1.8 to 2.15" in out.stdout
    data = json.loads(envcheck("tables", "--json").stdout)
    assert data["schema_version"] == 1
    data = data["tables"]
    assert data["cuda_driver"]["builtin"] is True and data["gpu_arches"]["gpu_models"] > 100
    from envcheck.tables import builtin_dir

    newer = json.loads((builtin_dir() / "torch_releases.json").read_text())
    newer["as_of"] = "2027-03-01"
    (tmp_path / "torch_releases.json").write_text(json.dumps(newer))
    data = json.loads(envcheck("tables", "--json", env={"ENVCHECK_TABLES": str(tmp_path)}).stdout)
    data = data["tables"]
    assert (
        data["torch_releases"]["as_of"] == "2027-03-01"
        and data["torch_releases"]["builtin"] is False
    )


def test_unreadable_tables_exit_3(tmp_path: Path) -> None:
    (tmp_path / "cuda_driver.json").write_text("{ not json")
    for args in (
        ("--tables", str(tmp_path), "check", "--no-deep"),
        ("--tables", str(tmp_path), "tables"),
    ):
        out = envcheck(*args)
        assert out.returncode == 3
        assert (
            "cannot use the compatibility tables" in out.stderr and "cuda_driver.json" in out.stderr
        )
        assert "Traceback" not in out.stderr
