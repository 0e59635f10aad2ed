"""The pytest plugin (envcheck.pytest_plugin), run the way users run it: pytest in a fresh
process (pytest's own pytester) over a small suite, on this machine and on machines simulated
through envcheck's overrides (the NVML boundary), with and without xdist."""

from __future__ import annotations

import re
import sys
from typing import List

import pytest

pytest_plugins = ("pytester",)

SUITE = """
import sys
import pytest

@pytest.mark.envcheck(gpus=1)
def test_needs_a_gpu():
    pass

@pytest.mark.envcheck(compute_capability="8.0", gpu_memory="40GiB")
def test_needs_ampere_40g():
    pass

@pytest.mark.envcheck(python=">=3.8")
def test_needs_python():
    pass

def test_plain():
    pass
"""

H100 = {
    "ENVCHECK_GPUS": "NVIDIA H100 80GB HBM3:9.0:80GiB",
    "ENVCHECK_DRIVER_VERSION": "570.86.10",
    # a CUDA torch that counts the GPU: the facts a GPU machine's deep probe gives
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
    "ENVCHECK_FACT_TORCH_CUDA": "12.6",
    "ENVCHECK_FACT_TORCH_RUNTIME_STATUS": "ok",
    "ENVCHECK_FACT_TORCH_RUNTIME_DEVICE_COUNT": "1",
}


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """pytest in a child process, with this suite's own xdist and envcheck settings cleared."""
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ENVCHECK_GPUS", raising=False)

    def go(*args: str, env=None) -> pytest.RunResult:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rsf", *args)

    return go


def skipped_reasons(result: pytest.RunResult) -> List[str]:
    return [line for line in result.outlines if line.startswith("SKIPPED")]


@pytest.mark.slow  # the gpus marker asks torch in a child
def test_a_marked_test_is_skipped_with_envcheck_reason(pytester, run):
    pytester.makepyfile(SUITE)
    result = run()
    result.assert_outcomes(passed=2, skipped=2)
    reasons = "\n".join(skipped_reasons(result))
    # the skip is reported at the test, with the requirement as the marker wrote it
    assert re.search(
        r"test_a_marked_test_is_skipped_with_envcheck_reason.py:\d+: REQ004 0 GPU", reasons
    )
    assert "required by @pytest.mark.envcheck(gpus=1)" in reasons
    assert "REQ00" in reasons and "compute_capability='8.0'" in reasons
    # the summary line under pytest's header
    header = [line for line in result.outlines if line.startswith("envcheck: ")]
    assert len(header) == 1 and "no GPU" in header[0], result.outlines


@pytest.mark.slow
def test_the_same_tests_pass_on_a_simulated_gpu_machine(pytester, run):
    pytester.makepyfile(SUITE)
    result = run(env=H100)
    result.assert_outcomes(passed=4)
    assert any("1x NVIDIA H100 80GB HBM3" in line for line in result.outlines)


@pytest.mark.slow
def test_a_cpu_build_on_a_gpu_machine_names_the_cause_and_the_command(pytester, run):
    pytester.makepyfile(SUITE)
    result = run(env={k: v for k, v in H100.items() if "TORCH" not in k} | _cpu_torch())
    reasons = "\n".join(skipped_reasons(result))
    assert "REQ004 0 GPU(s) here" in reasons
    assert "because TRC001 torch 2.13.0+cpu is CPU-only" in reasons
    assert re.search(r"\$ \S*python\S* -m pip install torch==\S+\+cu\d+ --index-url", reasons)


def _cpu_torch() -> dict:
    return {
        "ENVCHECK_FACT_PYTHON_VERSION": "3.12.3",  # a Python torch 2.13 has wheels for
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",
        "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
        "ENVCHECK_FACT_TORCH_CUDA": "null",
    }


@pytest.mark.slow
@pytest.mark.parametrize("how", ["option", "ini"])
def test_strict_fails_what_would_be_skipped(pytester, run, how):
    pytester.makepyfile(SUITE)
    if how == "ini":
        pytester.makeini("[pytest]\nenvcheck_strict = true\n")
    result = run("--envcheck-strict") if how == "option" else run()
    result.assert_outcomes(passed=2, failed=2)
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert any("::test_needs_a_gpu" in line for line in failed), failed
    assert "envcheck (strict): REQ004 0 GPU(s) here" in result.stdout.str()


CHECKS_IMPORTS = """
import json, os, sys

def pytest_sessionfinish(session):
    loaded = sorted(m for m in ("envcheck.core", "envcheck.marker", "envcheck.probes")
                    if m in sys.modules)
    with open(os.path.join(str(session.config.rootpath), "imported.json"), "w") as f:
        json.dump(loaded, f)
"""


def test_an_unmarked_suite_never_imports_the_check(pytester, run):
    pytester.makeconftest(CHECKS_IMPORTS)
    pytester.makepyfile("def test_one():\n    pass\n")
    result = run()
    result.assert_outcomes(passed=1)
    assert (pytester.path / "imported.json").read_text() == "[]"
    assert not [line for line in result.outlines if line.startswith("envcheck")]


def test_collect_only_runs_no_check(pytester, run):
    pytester.makeconftest(CHECKS_IMPORTS)
    pytester.makepyfile(SUITE)
    result = run("--collect-only", "-q")
    assert result.ret == 0 and "4 tests collected" in result.stdout.str()
    assert (pytester.path / "imported.json").read_text() == "[]"


PROBES = """
import os
from envcheck.pytest_plugin import judge_of

def pytest_sessionfinish(session):
    worker = getattr(session.config, "workerinput", None)
    judge = judge_of(session.config)
    name = worker["workerid"] if worker else "main"
    with open(os.path.join(str(session.config.rootpath), "probes-" + name), "w") as f:
        f.write(str(judge.probes if judge else 0))
"""


@pytest.mark.slow
def test_xdist_workers_probe_at_most_once_each(pytester, run):
    pytester.makeconftest(PROBES)
    pytester.makepyfile(
        **{f"test_part{i}": SUITE.replace("def test_", f"def test_{i}_") for i in range(3)}
    )
    result = run("-p", "xdist", "-n", "2", env=H100)
    result.assert_outcomes(passed=12)
    counts = {p.name: int(p.read_text()) for p in pytester.path.glob("probes-gw*")}
    assert set(counts) == {"probes-gw0", "probes-gw1"}, counts
    assert all(n <= 1 for n in counts.values()) and sum(counts.values()) >= 1, counts
    # workers print no header: the controller prints the summary they reported, once
    summary = [line for line in result.outlines if line.startswith("envcheck: ")]
    assert len(summary) == 1 and "H100" in summary[0], result.outlines


def test_a_broken_envcheck_runs_the_tests_and_says_so(pytester, run):
    pytester.makepyfile(SUITE.replace("gpus=1", "python='>=3'"))
    bad = {"ENVCHECK_GPUS": "NVIDIA H100:not-a-capability"}
    result = run("-W", "default", env=bad)
    result.assert_outcomes(passed=4)
    text = result.stdout.str()
    assert "envcheck could not check this machine" in text and "ENVCHECK_GPUS" in text
    strict = run("--envcheck-strict", env=bad)
    strict.assert_outcomes(passed=1, failed=3)


def test_a_marker_with_an_unknown_keyword_fails_its_test(pytester, run):
    pytester.makepyfile(
        "import pytest\n\n@pytest.mark.envcheck(gpu=1)\ndef test_typo():\n    pass\n"
        "\n@pytest.mark.envcheck(1)\ndef test_positional():\n    pass\n"
    )
    result = run()
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "envcheck marker:" in text and "gpu" in text and "takes keywords only" in text


def test_the_marker_is_registered(pytester, run):
    result = run("--markers")
    assert re.search(r"@pytest.mark.envcheck\(\*\*requirements\)", result.stdout.str())
    assert sys.modules.get("envcheck.pytest_plugin") is not None  # loaded by its entry point


@pytest.mark.slow
def test_the_users_junit_report_gets_nothing_of_envcheck_but_the_skip(pytester, run):
    pytester.makepyfile(SUITE.replace("gpus=1", "python='<3'"))  # static: no torch child
    result = run("--junitxml=out.xml", "-p", "xdist", "-n", "2")
    result.assert_outcomes(passed=2, skipped=2)
    xml = (pytester.path / "out.xml").read_text()
    assert "<property" not in xml and "envcheck_summary" not in xml
    assert "<skipped" in xml and "REQ002" in xml  # the skip and its reason
    assert [line for line in result.outlines if line.startswith("envcheck: ")]  # the summary
