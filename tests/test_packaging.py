"""The wheel holds every package, its tables and its typing marker: built for real (pip wheel,
no network) and read back, then installed into a fresh venv and run, as a user installs it
(not the editable install the tests run from)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def packages_in_tree() -> set:
    return {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "envcheck").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }


def source_copy(dest: Path) -> Path:
    """The source tree without its venvs, builds and caches: what a checkout holds. Builds
    run there, so two at once (xdist) never write the same build/ folder."""
    skip = shutil.ignore_patterns(
        ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", ".ruff_cache"
    )
    shutil.copytree(ROOT, dest, ignore=skip)
    return dest


def build_wheel(out: Path) -> Path:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(source_copy(out / "source")),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (found,) = out.glob("torch_envcheck-*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_has_everything_and_runs_installed(tmp_path):
    wheel = build_wheel(tmp_path / "wheel")
    has_every_package_and_its_data(wheel)
    runs_installed(wheel, tmp_path)


def has_every_package_and_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.rpartition("/")[0].replace("/", ".") for n in names if n.endswith("/__init__.py")}
    missing = packages_in_tree() - shipped
    assert not missing, f"not in the wheel (add them to pyproject.toml's packages): {missing}"
    tables = {Path(n).name for n in names if n.startswith("envcheck/compat_tables/")}
    assert {p.name for p in (ROOT / "compat_tables").glob("*.json")} <= tables
    assert "envcheck/py.typed" in names
    assert "envcheck/diagnose/pattern_answers.json" in names  # else every run parses patterns
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    assert "[pytest11]" in text and "envcheck.pytest_plugin" in text


def runs_installed(wheel: Path, tmp_path: Path) -> None:
    """Installed without its source tree beside it: every import the commands make works."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)],  # and its dependencies
        check=True,
        capture_output=True,
        timeout=300,
    )
    run = subprocess.run(
        [str(python), "-m", "envcheck", "check", "--no-deep", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert '"verdict"' in run.stdout
    where = subprocess.run(
        [str(python), "-c", "import envcheck; print(envcheck.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert str(venv) in where.stdout, where.stdout  # the wheel's copy, not the source tree
