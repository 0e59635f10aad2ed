"""The environment the user means (envcheck.target) and commands for the interpreter at hand.

envcheck installed as a tool (pipx, uvx) runs from a venv of its own; the user means the
environment they activated, or their project's .venv. Real venvs, real console-script
runs, and the rendered commands run by real pip against a local index of fake wheels.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from envcheck.target import OWN, choose, project_venv
from tests.localindex import TorchFamily, Venv, localize, torch_indexes

REPO = Path(__file__).resolve().parent.parent
EXTERNALLY_MANAGED = "/usr/bin/python3"


def make_venv(path: Path) -> Path:
    """A real venv without pip (fast); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project folder with pyproject.toml and a .venv, and a subfolder."""
    root = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (root / "src" / "pkg").mkdir(parents=True)
    make_venv(root / ".venv")
    return root


def test_python_option_wins(project: Path) -> None:
    env = {"VIRTUAL_ENV": str(project / ".venv")}
    assert choose("/usr/bin/python3", env, str(project)).python == "/usr/bin/python3"


def test_activated_venv_then_conda_then_project_venv_then_own(
    project: Path, tmp_path: Path
) -> None:
    other = make_venv(tmp_path / "other")
    conda = tmp_path / "conda"
    (conda / "bin").mkdir(parents=True)
    (conda / "conda-meta").mkdir()
    (conda / "bin" / "python").symlink_to(sys.executable)
    own = ("/nowhere/envcheck-tool-venv",)
    venv_env = {"VIRTUAL_ENV": str(tmp_path / "other"), "CONDA_PREFIX": str(conda)}
    picked = choose(None, venv_env, str(project), own)
    assert (picked.python, picked.reason) == (
        str(other),
        "the activated virtual environment (VIRTUAL_ENV)",
    )
    picked = choose(None, {"CONDA_PREFIX": str(conda)}, str(project), own)
    assert (picked.python, picked.reason) == (
        str(conda / "bin" / "python"),
        "the activated conda environment (CONDA_PREFIX)",
    )
    picked = choose(None, {}, str(project / "src" / "pkg"), own)
    assert picked.python == str(project / ".venv" / "bin" / "python")
    assert picked.reason == f"the project's .venv ({project / '.venv'})"
    assert choose(None, {}, str(tmp_path), own) == choose(None, {}, None, own)
    assert choose(None, {}, str(tmp_path), own).reason == OWN


def test_envchecks_own_active_env_is_described_in_process(project: Path) -> None:
    venv = str(project / ".venv")
    picked = choose(None, {"VIRTUAL_ENV": venv}, str(project), own_prefixes=(venv,))
    assert picked.python is None and "VIRTUAL_ENV" in picked.reason


def test_an_activated_venv_without_python_is_said_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    picked = choose(None, {"VIRTUAL_ENV": str(tmp_path / "gone")}, str(tmp_path), ("/x",))
    assert picked.python is None
    assert picked.reason == f"{OWN} (VIRTUAL_ENV={tmp_path / 'gone'} holds no Python)"


def test_the_venv_search_stops_at_the_project_root(tmp_path: Path) -> None:
    make_venv(tmp_path / ".venv")  # a .venv above the project: not the project's
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / ".git").mkdir()
    assert project_venv(str(inner)) is None
    assert project_venv(str(tmp_path)) == str(tmp_path / ".venv")


def console(args: List[str], env: Dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """envcheck's console script from envcheck's own venv, as a pipx install runs it."""
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ENVCHECK_") and k not in ("VIRTUAL_ENV", "CONDA_PREFIX")
    }
    full.update(env)
    full["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "envcheck", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=str(cwd),
        timeout=120,
    )


def dollar_command(stdout: str) -> str:
    lines = [line.strip()[2:] for line in stdout.splitlines() if line.strip().startswith("$ ")]
    assert lines, stdout
    return lines[0]


def test_a_tool_install_checks_the_activated_venv_and_says_so(
    project: Path, tmp_path: Path
) -> None:
    venv = project / ".venv"
    path = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    run = console(["check", "--no-deep"], {"VIRTUAL_ENV": str(venv), "PATH": path}, tmp_path)
    header = run.stdout.splitlines()[0]
    assert header.split("  ", 1)[1].startswith("no torch"), run.stdout  # envcheck's has one
    said = " ".join(run.stdout.split())  # as read, whatever the line breaks
    expected = (
        f"checking {venv / 'bin' / 'python'}: the activated virtual environment (VIRTUAL_ENV)"
    )
    assert expected in said, run.stdout
    assert "TRC003 torch is not installed in this environment" in run.stdout
    assert dollar_command(run.stdout).startswith("pip install torch==")  # activated: bare pip


def test_a_project_venv_not_activated_gets_its_interpreter_named_and_pip_installs_there(
    tmp_path: Path,
) -> None:
    """The command names the interpreter, and real pip run as printed installs into it."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    venv = Venv.create(project / ".venv")  # with pip
    run = console(["check", "--no-deep"], {}, project)
    assert f"checking {venv.python}: the project's .venv" in " ".join(run.stdout.split())
    command = dollar_command(run.stdout)
    argv = shlex.split(command)
    assert argv[:3] == [str(venv.python), "-m", "pip"], command
    index = torch_indexes(
        tmp_path / "index", variants=("cpu",), releases=(TorchFamily(torch=argv[4].split("==")[1]),)
    )
    local = localize(argv, index)
    done = subprocess.run(local, env=venv.pip_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert venv.installed()["torch"].startswith(argv[4].split("==")[1])


@pytest.mark.skipif(
    not Path(EXTERNALLY_MANAGED).exists()
    or not list(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED")),
    reason="no externally managed system Python here",
)
@pytest.mark.slow
def test_an_externally_managed_python_gets_a_venv_first(tmp_path: Path) -> None:
    run = console(["check", "--no-deep", "--python", EXTERNALLY_MANAGED], {}, tmp_path)
    command = dollar_command(run.stdout)
    make, install = command.split(" && ")
    assert make == f"{EXTERNALLY_MANAGED} -m venv .venv"
    # what pip does with the bare command: refuses (PEP 668)
    refused = subprocess.run(
        [EXTERNALLY_MANAGED, "-m", "pip", "install", "--dry-run", "--no-index", "torch"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    if "No module named pip" in refused.stderr:
        pytest.skip("the system Python has no pip")
    assert "externally-managed-environment" in refused.stderr
    # the printed steps work: the venv is made, pip installs into it
    subprocess.run(shlex.split(make), check=True, cwd=tmp_path, capture_output=True)
    version = shlex.split(install)[4].split("==")[1]
    index = torch_indexes(
        tmp_path / "index", variants=("cpu",), releases=(TorchFamily(torch=version),)
    )
    local = localize(install, index)
    assert local[0] == ".venv/bin/python"
    env = Venv(tmp_path / ".venv").pip_env()
    done = subprocess.run(local, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert Venv(tmp_path / ".venv").installed()["torch"].startswith(version)


def test_run_refuses_an_externally_managed_python_in_one_line(capsys) -> None:
    """--run never hands pip an interpreter that PEP 668 makes it refuse."""
    from envcheck.cli.run_install import run_install
    from envcheck.facts import Facts
    from envcheck.install import Wish, resolve
    from envcheck.tables import load_tables

    facts = Facts()
    facts.python.version, facts.python.executable = "3.11.2", EXTERNALLY_MANAGED
    facts.python.externally_managed = True
    facts.system.os, facts.system.machine = "Linux", "x86_64"
    tables = load_tables()
    plan = resolve(facts, tables, Wish(platform="linux-x86_64", variant="cpu"))
    assert plan.ok and plan.externally_managed
    assert run_install(plan, "pip", facts, tables) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{EXTERNALLY_MANAGED} is externally managed (PEP 668)")
    assert len(err.strip().splitlines()) == 1
