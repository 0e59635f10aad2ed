"""A container that expects NVIDIA GPUs but was started without them (SYS006).

The NVIDIA library is the boundary: here there is none, as in a container started
without ``--gpus``. Container markers are real files in a temporary root, or the
override the probe honours; every command runs as a real ``python -m envcheck``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

import pytest

from envcheck.checks.system import check as system_check
from envcheck.containers import gpus_expected
from envcheck.facts import Facts
from envcheck.healthcheck import check as health
from envcheck.probes.system import detect_container
from envcheck.tables import load_tables
from tests.runner import envcheck

CUDA_TORCH = {
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
    "ENVCHECK_FACT_TORCH_CUDA": "12.6",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",  # a Python torch 2.13 has wheels for
}
IN_DOCKER = {"ENVCHECK_FACT_SYSTEM_CONTAINER": "docker"}


@pytest.mark.parametrize(
    "environ, container, expected",
    [
        ({"NVIDIA_VISIBLE_DEVICES": "all"}, "docker", "NVIDIA_VISIBLE_DEVICES=all"),
        ({"NVIDIA_VISIBLE_DEVICES": "0,1"}, "kubernetes", "NVIDIA_VISIBLE_DEVICES=0,1"),
        ({"NVIDIA_VISIBLE_DEVICES": "void"}, "docker", None),
        ({"NVIDIA_VISIBLE_DEVICES": "none"}, "docker", None),
        ({"NVIDIA_VISIBLE_DEVICES": ""}, "docker", None),
        ({"NVIDIA_VISIBLE_DEVICES": "all"}, None, None),  # a host: the variable means nothing
        ({"CUDA_VERSION": "12.4.1"}, None, "CUDA_VERSION=12.4.1 (a CUDA image)"),
        (
            {"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"},
            "podman",
            "NVIDIA_REQUIRE_CUDA=cuda>=12.4 (a CUDA image)",
        ),
        ({}, "docker", None),  # a plain container: no GPU wanted
        ({"NVIDIA_VISIBLE_DEVICES": "void", "CUDA_VERSION": "12.4.1"}, "docker", None),
    ],
)
def test_what_says_a_container_expects_gpus(
    environ: Dict[str, str], container: Optional[str], expected: Optional[str]
) -> None:
    assert gpus_expected(environ, container) == expected


def _facts(
    environ: Dict[str, str], container: Optional[str], nodes=(), nvml_error="library_not_found"
) -> Facts:
    facts = Facts()
    facts.environment = dict(environ)
    facts.system.container = container
    facts.nvidia.device_nodes = list(nodes)
    facts.nvidia.nvml.ok = nvml_error is None
    facts.nvidia.nvml.error = nvml_error
    return facts


def test_sys006_needs_expectation_and_no_device_and_failed_nvml() -> None:
    tables = load_tables()
    codes = lambda f: [x.code for x in system_check(f, tables)]  # noqa: E731
    wants = {"NVIDIA_VISIBLE_DEVICES": "all"}
    assert codes(_facts(wants, "docker")) == ["SYS006"]
    assert codes(_facts(wants, "docker", nodes=["/dev/nvidiactl", "/dev/nvidia-uvm"])) == ["SYS006"]
    assert codes(_facts(wants, "docker", nodes=["/dev/nvidiactl", "/dev/nvidia0"])) == []
    assert codes(_facts(wants, "docker", nvml_error=None)) == []
    assert codes(_facts({"NVIDIA_VISIBLE_DEVICES": "void"}, "docker")) == []
    assert codes(_facts(wants, None)) == []
    unprobed = _facts(wants, "docker")  # a pasted report that says nothing of NVML
    unprobed.nvidia.nvml.error = None
    assert codes(unprobed) == []


def test_a_docker_marker_file_is_a_container(tmp_path: Path) -> None:
    assert detect_container(tmp_path, {}) is None
    (tmp_path / ".dockerenv").write_text("")
    assert detect_container(tmp_path, {}) == "docker"


def test_check_of_a_cuda_torch_in_a_container_without_gpus_is_an_error_not_a_cpu_install() -> None:
    run = envcheck(
        "check", "--no-deep", env={"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER, **CUDA_TORCH}
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert (
        "ERROR SYS006 This container expects NVIDIA GPUs but was started without them" in run.stdout
    )
    assert "docker run --gpus all" in run.stdout
    # the CUDA torch on the CPU follows from it, and no CPU build is advised
    assert "follows from SYS006" in run.stdout
    assert "--index-url https://download.pytorch.org/whl/cpu" not in run.stdout


def test_check_of_a_container_meant_to_run_without_gpus_has_no_sys006() -> None:
    run = envcheck("check", "--no-deep", env={"NVIDIA_VISIBLE_DEVICES": "void", **IN_DOCKER})
    assert "SYS006" not in run.stdout, run.stdout


def test_healthcheck_of_a_container_without_gpus_is_unhealthy() -> None:
    run = envcheck("healthcheck", env={"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER})
    assert run.returncode == 1
    assert run.stdout.startswith(
        "unhealthy: a GPU container without GPUs (NVIDIA_VISIBLE_DEVICES=all"
    )
    assert "--gpus all" in run.stdout and len(run.stdout.splitlines()) == 1


@pytest.mark.parametrize(
    "env, args",
    [
        ({"NVIDIA_VISIBLE_DEVICES": "void", **IN_DOCKER}, ()),
        ({"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER}, ("--gpus", "0")),  # said: none wanted
    ],
)
def test_healthcheck_of_a_container_without_gpus_wanted_is_healthy(env, args) -> None:
    run = envcheck("healthcheck", *args, env=env)
    assert (run.returncode, run.stdout) == (0, "healthy: no NVIDIA GPU here, none expected\n")


def test_healthcheck_honours_the_simulation_overrides() -> None:
    gpus = {"ENVCHECK_GPUS": "NVIDIA A100-SXM4-80GB:8.0:80GiB;NVIDIA A100-SXM4-80GB:8.0:80GiB"}
    run = envcheck("healthcheck", env={"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER, **gpus})
    assert (run.returncode, run.stdout) == (0, "healthy: 2 GPU(s)\n")
    run = envcheck("healthcheck", "--gpus", "3", env=gpus)
    assert (run.returncode, run.stdout) == (1, "unhealthy: 2 of 3 GPUs visible\n")
    bad = envcheck("healthcheck", env={"ENVCHECK_GPUS": "A100"})
    assert bad.returncode == 1 and bad.stdout.startswith("unhealthy: ENVCHECK_GPUS: 'A100'")
    assert "Traceback" not in bad.stderr


def test_healthcheck_reads_the_container_from_the_root_it_is_given(tmp_path: Path) -> None:
    env = {"NVIDIA_VISIBLE_DEVICES": "all"}
    assert health(environ=env, root=tmp_path)[0] == 0  # no container here: the variable is moot
    (tmp_path / ".dockerenv").write_text("")
    code, line = health(environ=env, root=tmp_path)
    assert code == 1 and "a GPU container without GPUs" in line


NO_TORCH = {"ENVCHECK_FACT_TORCH_INSTALLED": "false", "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7"}


def test_check_without_torch_in_a_container_without_gpus_advises_no_cpu_wheel() -> None:
    """Issue 28.4: the missing torch follows from the hidden GPUs; no build is planned from
    what is visible (the CPU wheel for a CUDA image), so the report has no install command."""
    run = envcheck(
        "check", "--no-deep", env={"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER, **NO_TORCH}
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "ERROR SYS006" in run.stdout
    assert "follows from SYS006:\n    i INFO TRC003 torch is not installed" in run.stdout
    assert "whl/cpu" not in run.stdout and "(cpu) fits" not in run.stdout, run.stdout
    assert "pip install" not in run.stdout and "No torch fits" not in run.stdout
    assert "which build fits depends on its GPUs and driver" in " ".join(run.stdout.split())


@pytest.mark.parametrize("torch_env", [NO_TORCH, CUDA_TORCH], ids=["no torch", "cuda torch"])
def test_install_in_a_container_without_gpus_plans_nothing_until_asked(torch_env) -> None:
    env = {"NVIDIA_VISIBLE_DEVICES": "all", **IN_DOCKER, **torch_env}
    run = envcheck("install", env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "expects NVIDIA GPUs (NVIDIA_VISIBLE_DEVICES=all) but was started without them" in (
        run.stdout
    )
    assert "whl/cpu" not in run.stdout and "pip install" not in run.stdout, run.stdout
    assert "docker run --gpus all" in run.stdout
    # the build the image is for, asked by name: planned, and said to be unchecked
    asked = envcheck("install", "--variant", "cu126", env=env)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "whl/cu126" in asked.stdout
    assert "not verified: cu126 against this container's GPUs and driver" in asked.stdout
    # the CPU build, asked by name: planned as asked, without a note on GPUs
    cpu = envcheck("install", "--variant", "cpu", env=env)
    assert cpu.returncode == 0 and "whl/cpu" in cpu.stdout, cpu.stdout


def test_a_container_meant_to_run_without_gpus_gets_the_cpu_wheel() -> None:
    run = envcheck("install", env={"NVIDIA_VISIBLE_DEVICES": "void", **IN_DOCKER, **NO_TORCH})
    assert run.returncode == 0 and "whl/cpu" in run.stdout, run.stdout


def test_a_follow_on_of_a_follow_on_is_shown_under_the_root() -> None:
    """REQ001 (no torch; the project wants one) follows TRC003, which follows SYS006: both are
    grouped under SYS006, the one root a text report shows its follow-ons under."""
    from packaging.specifiers import SpecifierSet

    from envcheck.requirements import Requirements
    from tests.fixtures import report_of

    facts = _facts({"NVIDIA_VISIBLE_DEVICES": "all"}, "docker")
    facts.system.os, facts.system.machine, facts.python.version = "Linux", "x86_64", "3.11.7"
    facts.torch.installed = False
    report = report_of(facts, requirements=Requirements(torch=SpecifierSet(">=2.4")))
    (root,) = report.roots
    assert root.code == "SYS006"
    assert sorted(f.code for f in report.follow_ons(root)) == ["REQ001", "TRC003"]
    assert report.install is None
