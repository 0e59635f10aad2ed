"""tools/structure.py counts what it says it counts: circles through lazy imports, imports up
the layers, long modules and long functions (decorators left out), on a small package laid
out like envcheck's; and envcheck itself keeps to the limits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parent.parent


def _structure(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "structure.py"), "--no-mypy", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _package(tmp_path: Path, files: Dict[str, str]) -> Path:
    package = tmp_path / "envcheck"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (package / "__init__.py").touch()
    return package


def _figure(output: str, title: str) -> int:
    for line in output.splitlines():
        if line.startswith(title + ":"):
            return int(line.split(":")[1])
    raise AssertionError(f"no {title!r} figure in:\n{output}")


def test_a_lazy_import_closes_a_circle_and_a_type_checking_one_does_not(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "core.py": "from envcheck import requirements\n",
            "requirements.py": "def require():\n    from envcheck.core import check\n",
            "facts.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from envcheck.rules import Rule\n",
            "rules.py": "from envcheck import facts\n",
        },
    )
    done = _structure("--package", str(package))
    assert done.returncode == 1, done.stdout
    assert _figure(done.stdout, "import circles") == 1
    assert "envcheck.core <-> envcheck.requirements" in done.stdout
    assert "envcheck.facts <-> envcheck.rules" not in done.stdout


def test_an_import_up_the_layers_is_named(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {"values.py": "import envcheck.cli.check\n", "cli/__init__.py": "", "cli/check.py": ""},
    )
    done = _structure("--package", str(package))
    assert _figure(done.stdout, "upward imports") == 1
    assert "envcheck.values (layer 0) imports envcheck.cli.check (layer 8)" in done.stdout


def test_long_modules_and_functions_are_counted_without_decorators(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    decorated = "@a\n@b\n@c\ndef short():\n" + body  # 60 lines from the def: within the limit
    long = "def long():\n" + body + "    x = 0\n"  # 61 lines
    package = _package(
        tmp_path,
        {
            "core.py": "a = b = c = lambda f: f\n" + decorated + long,
            "facts.py": "x = 1\n" * 501,
        },
    )
    done = _structure("--package", str(package))
    assert _figure(done.stdout, "functions over 60 lines") == 1
    assert "core.py:" in done.stdout and "long: 61 lines" in done.stdout
    assert "short" not in done.stdout
    assert _figure(done.stdout, "modules over 500 lines") == 1
    assert "facts.py: 501 lines" in done.stdout


def test_a_package_within_the_limits_passes(tmp_path: Path) -> None:
    package = _package(tmp_path, {"core.py": "from envcheck import facts\n", "facts.py": "x = 1\n"})
    done = _structure("--package", str(package))
    assert done.returncode == 0, done.stdout
    for title in ("import circles", "upward imports", "modules over 500 lines"):
        assert _figure(done.stdout, title) == 0


def test_envcheck_keeps_to_the_limits() -> None:
    """The package itself: no circle, no upward import, no long module or function (CI runs
    the script with its mypy --strict figure too)."""
    done = _structure()
    assert done.returncode == 0, done.stdout
