"""Rendered commands judged by what real pip and real uv do with them.

A local PEP 503 index of small fake wheels stands for PyTorch's per-variant indexes
(tests/localindex.py). A venv holds torch 2.13.0+cpu and torchvision 0.28.0+cpu; the
machine is simulated to have an RTX 4090. envcheck probes that venv for real, plans,
renders, and the command runs through pip and uv: what ends up installed must be
the CUDA build, companions included. The public pin that envcheck printed before
(``torch==2.13.0 --index-url .../cu126``) is run too, to show the test can fail:
both managers keep the CPU build with it.
"""

from __future__ import annotations

import pytest

from envcheck.core import check
from envcheck.facts import GpuFacts
from envcheck.install import render
from envcheck.probes import probe
from envcheck.values import ComputeCapability
from tests.fixtures import TABLES
from tests.localindex import TorchFamily, Venv, torch_indexes

pytestmark = pytest.mark.slow

CPU = {"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"}
CUDA = {"torch": "2.13.0+cu126", "torchvision": "0.28.0+cu126"}


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    return torch_indexes(tmp_path_factory.mktemp("index"), ("cpu", "cu126"), (TorchFamily(),))


@pytest.fixture(scope="module")
def cpu_venv(tmp_path_factory, indexes):
    venv = Venv.create(tmp_path_factory.mktemp("base") / "venv")
    venv.pip(
        "install", "torch==2.13.0+cpu", "torchvision==0.28.0+cpu", "--index-url", indexes["cpu"]
    )
    assert _torch_family(venv) == CPU
    return venv


def _torch_family(venv: Venv) -> dict:
    have = venv.installed()
    return {n: have.get(n) for n in ("torch", "torchvision")}


def _report(venv: Venv, manager: str):
    """The real static probe of the venv, on a simulated GPU box, through the core."""
    facts = probe(deep=False, python=str(venv.python))
    facts.nvidia.gpus = [
        GpuFacts(
            index=0,
            name="NVIDIA GeForce RTX 4090",
            compute_capability=ComputeCapability.parse("8.9"),
        )
    ]
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "550.54.14", "12.4"
    facts.nvidia.device_nodes = ["/dev/nvidia0"]
    facts.python.version = "3.11.7"  # the plan for 2.13.0 does not depend on it
    return check(facts=facts, tables=TABLES, requirements=False, manager=manager)


@pytest.mark.parametrize("manager", ["pip", "uv"])
def test_the_fix_replaces_the_cpu_build_with_the_cuda_build(cpu_venv, indexes, tmp_path, manager):
    report = _report(cpu_venv, manager)
    (trc,) = [f for f in report.findings if f.code == "TRC001"]
    assert "torch==2.13.0+cu126" in trc.command and "torchvision==0.28.0+cu126" in trc.command
    venv = cpu_venv.clone(tmp_path / "venv")
    # uv's --torch-backend reads PyTorch's real index and cannot be redirected: for uv the
    # same plan rendered with the index URL is what runs here
    command = render(report.install.plan, "uv") if manager == "uv" else trc.command
    venv.run_command(command, indexes)
    assert _torch_family(venv) == CUDA
    assert venv.module_version()["cuda"] == "12.6"  # the files on disk, not only the metadata


@pytest.mark.parametrize("manager", ["pip", "uv"])
def test_the_public_pin_installs_nothing(cpu_venv, indexes, tmp_path, manager):
    """What envcheck printed before the core: pip and uv count it as met."""
    venv = cpu_venv.clone(tmp_path / "venv")
    prefix = "pip install" if manager == "pip" else "uv pip install"
    venv.run_command(
        f"{prefix} torch==2.13.0 torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cu126",
        indexes,
    )
    assert _torch_family(venv) == CPU


def test_run_installs_and_verifies(cpu_venv, indexes, tmp_path):
    """`--run`'s check after installing: the probe of the venv again says what is there."""
    from envcheck.cli import installed_mismatches

    venv = cpu_venv.clone(tmp_path / "venv")
    report = _report(venv, "pip")
    plan = report.install.plan
    assert installed_mismatches(plan, probe(deep=False, python=str(venv.python)))
    venv.run_command(report.install.command, indexes)
    assert installed_mismatches(plan, probe(deep=False, python=str(venv.python))) == []


def test_a_pasted_reports_swap_of_the_cpu_build_runs(tmp_path):
    """A pasted report that leaves the platform open gets no plan, only the commands that
    swap the CPU build (checks._util.on_x86_64): run through real pip, they leave the CUDA
    build of the same release, companions included. Installing without the uninstall keeps
    the CPU build (pip counts 2.13.0+cpu as torch==2.13.0): the test can fail."""
    import re

    from envcheck.diagnose import diagnose_text

    text = (
        "torch 2.13.0+cpu\nGPU: NVIDIA GeForce RTX 4090\n"
        "| NVIDIA-SMI 550.54.14    Driver Version: 550.54.14    CUDA Version: 12.4 |\n"
    )
    (trc,) = [f for f in diagnose_text(text, TABLES).findings if f.code == "TRC001"]
    found = re.search(r"(pip uninstall [\w -]+), then (pip install [^(]+?/whl/(cu\d+))", trc.fix)
    assert found is not None, trc.fix
    uninstall, install, variant = found.groups()
    family = TorchFamily(torchaudio="2.13.0")
    indexes = torch_indexes(tmp_path / "index", ("cpu", variant), (family,))
    venv = Venv.create(tmp_path / "venv")
    cpu = ("torch==2.13.0+cpu", "torchvision==0.28.0+cpu", "torchaudio==2.13.0+cpu")
    venv.pip("install", *cpu, "--index-url", indexes["cpu"])
    kept = venv.clone(tmp_path / "kept")
    kept.run_command(install, indexes)
    assert kept.installed()["torch"] == "2.13.0+cpu"
    venv.pip(*uninstall.split()[1:])
    venv.run_command(install, indexes)
    have = venv.installed()
    want = {"torch": f"2.13.0+{variant}", "torchvision": f"0.28.0+{variant}"}
    assert {n: have.get(n) for n in want} == want
    assert have.get("torchaudio") == f"2.13.0+{variant}"
