"""The GitHub Action (action.yml, action/run.sh): its definition checked against the GitHub
Actions schema (vendored by check-jsonschema: no network), its step run here as the runner runs
it (the INPUT_* variables, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, a copy of the repository as the
action's checkout), and its documented example kept one: docs/ci.md's and the README's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
import yaml

from tests.test_packaging import source_copy

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def schema_check(schema: str, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_action_yml_is_a_valid_action():
    run = schema_check("vendor.github-actions", ROOT / "action.yml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert ACTION["runs"]["using"] == "composite"


def test_every_input_reaches_the_script_and_nothing_else_does():
    (step,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "check"]
    passed = {k for k in step["env"] if k.startswith("INPUT_")}
    script = (ROOT / "action" / "run.sh").read_text()
    read = set(re.findall(r"\bINPUT_[A-Z_]+", script))
    # python-version is setup-python's, before the script
    wanted = {f"INPUT_{n.upper().replace('-', '_')}" for n in ACTION["inputs"]} - {
        "INPUT_PYTHON_VERSION"
    }
    assert passed == wanted == read, (passed, wanted, read)
    for name, value in step["env"].items():
        key = name[len("INPUT_") :].lower().replace("_", "-")
        assert value == f"${{{{ inputs.{key} }}}}", name


def documented_examples(path: Path) -> list:
    """The YAML blocks of ``path`` that use the action."""
    blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(), re.S)
    return [b for b in blocks if "/envcheck@" in b]


def test_the_documented_example_is_one_valid_workflow(tmp_path):
    docs = documented_examples(ROOT / "docs" / "ci.md")
    readme = documented_examples(ROOT / "README.md")
    assert docs and readme and readme[0] == docs[0], "README's example is docs/ci.md's first"
    for i, block in enumerate(docs):
        (tmp_path / f"w{i}.yml").write_text(block)
        run = schema_check("vendor.github-workflows", tmp_path / f"w{i}.yml")
        assert run.returncode == 0, run.stdout + run.stderr
        for job in yaml.safe_load(block)["jobs"].values():
            for step in job["steps"]:
                if "/envcheck@" in step.get("uses", ""):
                    assert set(step.get("with", {})) <= set(ACTION["inputs"]), step


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The action as the runner checks it out: a copy of the repository."""
    return source_copy(tmp_path_factory.mktemp("action") / "envcheck")


def run_step(checkout: Path, work: Path, inputs: Dict[str, str], **env: str):
    """action/run.sh with the variables the runner sets for a composite step."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ENVCHECK_", "INPUT_"))}
    environ.update(
        GITHUB_ACTIONS="true",
        GITHUB_ACTION_PATH=str(checkout),
        GITHUB_OUTPUT=str(work / "output"),
        GITHUB_STEP_SUMMARY=str(work / "summary.md"),
        RUNNER_TEMP=str(work),
        **{f"INPUT_{k.upper().replace('-', '_')}": v for k, v in inputs.items()},
        **env,
    )
    run = subprocess.run(
        ["bash", str(checkout / "action" / "run.sh")],
        capture_output=True,
        text=True,
        timeout=600,
        env=environ,
        cwd=work,
    )
    out = work / "output"
    outputs = dict(
        line.split("=", 1) for line in (out.read_text().splitlines() if out.exists() else ())
    )
    return run, outputs


DEFAULTS = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}


@pytest.mark.slow  # installs envcheck from the checkout into the step's own venv
def test_the_step_on_a_ready_machine_writes_every_report(checkout, tmp_path):
    inputs = dict(
        DEFAULTS,
        python=sys.executable,
        args="--no-deep",
        junit="reports/envcheck.xml",
        **{"html-report": "reports/envcheck.html"},
    )
    run, outputs = run_step(checkout, tmp_path, inputs)
    assert run.returncode == 0, run.stdout + run.stderr
    assert outputs == {"verdict": "ready", "exit-code": "0"}
    assert "READY" in run.stdout
    assert (tmp_path / "summary.md").read_text().startswith("## envcheck: ✅ ready")
    assert "<testsuite" in (tmp_path / "reports" / "envcheck.xml").read_text()
    assert "<!DOCTYPE html>" in (tmp_path / "reports" / "envcheck.html").read_text()


@pytest.mark.slow
def test_the_step_fails_a_cpu_build_on_a_gpu_runner_with_an_annotation(checkout, tmp_path):
    inputs = dict(DEFAULTS, python=sys.executable, args="--no-deep")
    gpu = {
        "ENVCHECK_GPUS": "NVIDIA L4:8.9:24GiB",
        "ENVCHECK_DRIVER_VERSION": "570.86.10",
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",
        "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
    }
    run, outputs = run_step(checkout, tmp_path, inputs, **gpu)
    assert run.returncode == 1, run.stdout + run.stderr
    assert outputs == {"verdict": "not-ready", "exit-code": "1"}
    assert "::error title=envcheck TRC001" in run.stderr
    assert "❌" in (tmp_path / "summary.md").read_text()


def test_a_bad_input_is_one_annotation_and_a_usage_exit(checkout, tmp_path):
    run, outputs = run_step(checkout, tmp_path, dict(DEFAULTS, **{"fail-on": "sometimes"}))
    assert run.returncode == 2
    assert run.stdout.strip() == (
        "::error title=envcheck action::fail-on must be 'error' or 'warning', not 'sometimes'"
    )
    assert outputs == {"verdict": "error", "exit-code": "2"}
    run, _ = run_step(checkout, tmp_path, dict(DEFAULTS, python="no-such-python3"))
    assert run.returncode == 2 and "python 'no-such-python3' was not found" in run.stdout
