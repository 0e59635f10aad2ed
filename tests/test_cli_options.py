"""Options that meant two things or said too little (issue 28: 7, 10, 11, 12, 13), run as a
user runs them: a real ``python -m envcheck`` process, GPUs simulated with ENVCHECK_GPUS."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.checks import run_checks
from envcheck.facts import TorchRuntimeFacts
from envcheck.probes import DEFAULT_TIMEOUT
from envcheck.requirements import ConfigError
from tests.faketorch import make_fake_torch
from tests.fixtures import TABLES, profile, report_of
from tests.runner import envcheck

# A GPU machine whose torch is a CPU build that cannot use its GPU: TRC001 fires. The torch
# and Python are simulated too, so that the suite run without torch, or on Python 3.9, checks
# the same machine.
A100 = {
    "ENVCHECK_GPUS": "NVIDIA A100-SXM4-80GB:8.0:80GiB",
    "ENVCHECK_DRIVER_VERSION": "570.86.15",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.8",
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
    "ENVCHECK_FACT_TORCH_CUDA": "",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
}
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="the smoke runs a real torch")


# --------------------------------------------------------------- 13: ignored findings


@pytest.mark.slow
def test_the_verdict_says_what_was_ignored() -> None:
    """A READY that dropped a finding says so in the text, markdown and JSON."""
    plain = envcheck("check", "--no-deep", env=A100)
    assert plain.returncode == 1 and "TRC001" in plain.stdout, plain.stdout + plain.stderr
    text = envcheck("check", "--no-deep", "--ignore", "TRC001", env=A100)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "READY: 0 errors, 0 warnings, 0 infos (1 ignored: TRC001)" in text.stdout
    md = envcheck(
        "check", "--no-deep", "--ignore", "cpu-build-with-gpu", "--format", "markdown", env=A100
    )
    assert "(1 ignored: TRC001)" in md.stdout, md.stdout
    doc = json.loads(
        envcheck("check", "--no-deep", "--json", "--ignore", "TRC001", env=A100).stdout
    )
    assert doc["ignored_findings"] == ["TRC001"]


def test_an_ignored_code_that_did_not_fire_is_not_counted() -> None:
    """Nothing was dropped: the verdict does not claim an ignored finding."""
    facts = profile("docker-small-shm")
    report = report_of(facts, ignore=["SYS002", "ARC001"])
    assert report.ignored_findings == ("SYS002",)
    assert report.counts_text().endswith("(1 ignored: SYS002)")


# --------------------------------------------------------------- 11: a short --timeout


def test_a_short_timeout_is_named_as_the_users_not_as_a_hang(tmp_path: Path) -> None:
    """A torch import that outlives `--timeout 1` (a torch that sleeps on import: no
    wall-clock race) is said to have taken longer than the given timeout, with a longer
    --timeout as the fix, not "hung" with advice about a wedged driver."""
    fake = make_fake_torch(tmp_path, "hang")
    out = envcheck("check", "--timeout", "1", env={"PYTHONPATH": str(fake)})
    assert out.returncode == 1, out.stdout + out.stderr
    assert "RUN002 import torch took longer than the given timeout (1 s)" in out.stdout
    assert "--timeout 60 (the default) or more" in " ".join(out.stdout.split())
    assert "hung" not in out.stdout


def test_a_hang_at_the_default_timeout_keeps_the_wedged_driver_advice() -> None:
    facts = profile("docker-small-shm")
    facts.torch_runtime = TorchRuntimeFacts(
        status="timed_out", stage="cuda", timeout_s=DEFAULT_TIMEOUT, error="timed out after 60 s"
    )
    (run,) = [f for f in run_checks(facts, TABLES) if f.code == "RUN002"]
    assert run.title.startswith("import torch hung") and "wedged driver" in run.fix


# --------------------------------------------------------------- 10: [tool.envcheck] keys


def test_config_takes_bf16_as_require_does(tmp_path: Path) -> None:
    """`bf16 = true`, as the README lists it and require(bf16=True) takes it: a requirement
    (unmet here: no GPU), not an unknown key."""
    config = tmp_path / "pyproject.toml"
    config.write_text('[project]\nname = "x"\n\n[tool.envcheck]\nbf16 = true\n')
    out = envcheck("check", "--no-deep", "--config", str(config))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "REQ007 bf16 is required by" in out.stdout


def test_config_reports_every_unknown_key_with_a_suggestion(tmp_path: Path) -> None:
    config = tmp_path / "envcheck.toml"
    config.write_text("gpu = 2\nbf61 = true\ntorch = '>=2.4'\nzzz = 1\n")
    out = envcheck("check", "--no-deep", "--config", str(config))
    assert out.returncode == 2, out.stdout + out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert (
        "unknown keys 'gpu' (did you mean 'gpus'?), 'bf61' (did you mean 'bf16'?), 'zzz';" in line
    )
    assert "Traceback" not in out.stderr


def test_config_keys_are_require_keywords() -> None:
    """One list: every keyword of require() is a config key, and each config spelling of a
    dtype means what the keyword means."""
    import inspect

    from envcheck.core import require
    from envcheck.requirements import CONFIG_KEYS, parse_requirements

    assert tuple(inspect.signature(require).parameters) == CONFIG_KEYS
    assert {"bf16", "fp16", "tf32", "dtypes", "gpus", "ignore"} <= set(CONFIG_KEYS)
    both = parse_requirements({"bf16": True, "tf32": True, "fp16": False, "dtypes": ["bf16"]}, "p")
    assert both.dtypes == ["bf16", "tf32"]
    with pytest.raises(ConfigError, match=r"bf16 = 'yes' must be true or false"):
        parse_requirements({"bf16": "yes"}, "p")


# --------------------------------------------------------------- 7: install --python PATH


def _other_python() -> str:
    """A real interpreter of another minor version than this one (pyenv's), or skip."""
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for version in ("3.9", "3.10", "3.12", "3.13", "3.11"):
        if version == here:
            continue
        found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python3")))
        if found:
            return found[-1]
    pytest.skip("no Python of another minor version under ~/.pyenv/versions")


@pytest.mark.slow
def test_install_python_path_plans_for_that_interpreter(tmp_path: Path) -> None:
    """--python names an interpreter for install as it does for check and probe: the plan
    is for its version, and the command names it."""
    base = _other_python()
    subprocess.run([base, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    python = str(tmp_path / "venv" / "bin" / "python")
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    out = envcheck("install", "--python", python, "--variant", "cpu")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"for Python {version} on linux-x86_64" in out.stdout
    assert out.stdout.strip().splitlines()[-1].startswith(f"{python} -m pip install torch==")
    assert "deprecated" not in out.stderr


def test_install_python_version_plans_for_another_machine() -> None:
    out = envcheck(
        "install", "--python-version", "3.10", "--platform", "linux-x86_64", "--variant", "cpu"
    )
    assert out.returncode == 0 and out.stderr == "", out.stdout + out.stderr
    assert "for Python 3.10 on linux-x86_64" in out.stdout


def test_install_python_version_in_the_old_spelling_warns_once() -> None:
    args = ("--platform", "linux-x86_64", "--variant", "cpu")
    old = envcheck("install", "--python", "3.10", *args)
    new = envcheck("install", "--python-version", "3.10", *args)
    assert old.returncode == 0 and old.stdout == new.stdout, old.stdout + old.stderr
    (note,) = old.stderr.strip().splitlines()
    assert "deprecated" in note and "--python-version 3.10" in note


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--python", "/no/such/python"), "cannot run /no/such/python"),
        (("--python", sys.executable, "--python-version", "3.10"), "give one"),
    ],
)
def test_install_python_usage_errors(args, message) -> None:
    out = envcheck("install", *args)
    assert out.returncode == 2 and message in out.stderr, out.stdout + out.stderr
    assert "Traceback" not in out.stderr


# --------------------------------------------------------------- 12: a GPU the smoke left out


@pytest.mark.slow
@needs_torch
def test_smoke_says_a_gpu_it_could_not_use_was_not_exercised() -> None:
    """An NVIDIA GPU (simulated: ENVCHECK_GPUS) and this venv's CPU torch: the tests pass on
    the CPU, and the report says the GPU was not tested and why."""
    out = envcheck("smoke", env={"ENVCHECK_GPUS": A100["ENVCHECK_GPUS"]})
    assert out.returncode == 0, out.stdout + out.stderr
    text = " ".join(out.stdout.split())
    assert "note: the GPU here (1x NVIDIA A100-SXM4-80GB) was not exercised: torch" in text
    assert "is a CPU build, so the tests ran on the CPU" in text
    assert "SMOKE PASSED: 3 of 3 tests passed, but the GPU was not exercised" in text


@pytest.mark.slow
@needs_torch
def test_smoke_strict_fails_when_a_gpu_was_not_exercised() -> None:
    out = envcheck("smoke", "--strict", "--json", env={"ENVCHECK_GPUS": A100["ENVCHECK_GPUS"]})
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["passed"] is False and all(r["status"] == "passed" for r in doc["results"])
    assert "is a CPU build" in doc["gpus_not_exercised"]


def test_smoke_targets_name_why_the_gpus_are_left_out() -> None:
    from envcheck.core import SmokeTargets, smoke_targets

    facts = profile("docker-small-shm")
    facts.python.executable = sys.executable  # torch_runtime is this interpreter's: no probe
    facts.torch_runtime = TorchRuntimeFacts(status="ok", version="2.13.0+cpu", cuda=None)
    assert smoke_targets(facts, 10) == SmokeTargets(("cpu",))  # no GPU here: nothing left out
    facts.nvidia.gpus = profile("h100-server").nvidia.gpus
    facts.torch_runtime = TorchRuntimeFacts(
        status="ok", version="2.13.0+cu126", cuda="12.6", cuda_available=False
    )
    targets = smoke_targets(facts, 10)
    assert targets.devices == ("cpu",)
    assert "torch.cuda.is_available() is False" in (targets.gpus_not_exercised or "")
    assert targets.passed([]) and not targets.passed([], strict=True)


def test_smoke_targets_know_a_cpu_build_from_its_files(monkeypatch) -> None:
    """No deep probe (an import of torch) to learn that a CPU build offers no GPU: its files
    say so. A CUDA build, files of two installs mixed, or another interpreter's torch is
    still asked."""
    import envcheck.probes.torch_deep as deep
    from envcheck.core import SmokeTargets, smoke_targets

    asked = []

    def probe(python, timeout):
        asked.append(python)
        return TorchRuntimeFacts(
            status="ok", version="2.13.0+cu126", cuda="12.6", cuda_available=True, device_count=2
        )

    monkeypatch.setattr(deep, "probe_torch_deep", probe)
    facts = profile("docker-small-shm")  # torch 2.13.0+cpu, no GPU
    facts.python.executable = sys.executable
    facts.torch_runtime = TorchRuntimeFacts()  # not probed (status "skipped")
    assert smoke_targets(facts, 10) == SmokeTargets(("cpu",)) and asked == []
    facts.nvidia.gpus = profile("h100-server").nvidia.gpus
    targets = smoke_targets(facts, 10)
    assert targets.devices == ("cpu",) and asked == []
    assert "torch 2.13.0+cpu is a CPU build, so the tests ran on the CPU" in (
        targets.gpus_not_exercised or ""
    )
    unknowns = [  # a CUDA build; files of two installs; a simulated machine's torch facts
        ("torch", "cuda", "12.6"),
        ("torch", "dist_version", "2.13.0+cu126"),
        ("", "overrides", ["torch.version"]),
    ]
    for part, name, value in unknowns:
        unknown = profile("docker-small-shm")
        unknown.python.executable = sys.executable
        unknown.torch_runtime = TorchRuntimeFacts()
        setattr(getattr(unknown, part) if part else unknown, name, value)
        assert smoke_targets(unknown, 10).devices == ("cuda:0", "cuda:1")
    other = profile("docker-small-shm")  # facts of /usr/local/bin/python3, not envcheck's
    other.torch_runtime = TorchRuntimeFacts()
    assert smoke_targets(other, 10).devices == ("cuda:0", "cuda:1")
    assert asked == [sys.executable] * 4
