"""`envcheck install --manager conda` against every conda command of PyTorch's
previous-versions page for torch 1.8 .. 2.5 (tests/conda_commands.json, copied from the
page with its source commit by tools/conda_commands.py).

The expected command is the page's line; whitespace runs are collapsed (the page has two
spaces before ``pytorch-cuda=11.8`` in 2.4.x and 2.5.x). The variant asked for is read
from the line itself (``cudatoolkit=11.3`` -> cu113), not from the table under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List, Tuple

import pytest
from click.testing import CliRunner

from envcheck.cli import cli
from envcheck.facts import Facts, PythonFacts
from envcheck.install import Wish, render, resolve
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability
from tests.fixtures import TABLES  # the resolver's logic on the frozen tables
from tests.runner import envcheck

DATA = json.loads((Path(__file__).parent / "conda_commands.json").read_text())
# The arch lists of torch 1.10.1 builds, which the frozen torch_releases.json lacks (see
# test_unknown.py): the one test that turns on them reads the shipped tables.
SHIPPED = load_tables()

# Page lines envcheck deliberately prints otherwise, with why.
KNOWN_DIFFERENCES = {
    # 1.8.2 LTS: the page pins nothing; envcheck pins the LTS versions (those of the page's
    # own pip lines for 1.8.2), so the command cannot pick up another release later.
    "conda install pytorch torchvision torchaudio cudatoolkit=10.2 -c pytorch-lts": "conda install pytorch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 cudatoolkit=10.2 -c pytorch-lts",
    "conda install pytorch torchvision torchaudio cudatoolkit=11.1 -c pytorch-lts -c nvidia": "conda install pytorch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 cudatoolkit=11.1 -c pytorch-lts -c nvidia",
    "conda install pytorch torchvision torchaudio cudatoolkit=11.1 -c pytorch-lts -c conda-forge": "conda install pytorch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 cudatoolkit=11.1 -c pytorch-lts -c conda-forge",
    "conda install pytorch torchvision torchaudio cpuonly -c pytorch-lts": "conda install pytorch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 cpuonly -c pytorch-lts",
}


def variant_of(command: str) -> str:
    found = re.search(r"\b(?:cudatoolkit|pytorch-cuda)=(\d+)\.(\d+)\b", command)
    return f"cu{found.group(1)}{found.group(2)}" if found else "cpu"


def python_for(torch: str) -> str:
    """A Python the release (and the LTS conda build, Python <= 3.8) supports."""
    return "3.9" if torch.startswith("2.5") else "3.8"


CASES: List[Tuple[str, str, str, str]] = [
    (entry["torch"], platform, variant_of(entry["command"]), " ".join(entry["command"].split()))
    for entry in DATA["commands"]
    for platform in entry["platforms"]
]


def test_the_page_data_covers_1_8_to_2_5_on_three_platforms() -> None:
    versions = {torch for torch, *_ in CASES}
    assert {"1.8.0", "1.8.2", "1.10.1", "2.0.0", "2.4.0", "2.5.1"} <= versions
    assert len(versions) == 26  # every 1.8.0 .. 2.5.1 version on the page (not 1.10.2)
    kinds = {p.split("-")[0] for _, p, _, _ in CASES}
    assert kinds == {"linux", "windows", "macos"}
    assert len(CASES) >= 200
    assert "e3f009bbc0d7509ed5c85b633313ec72aa2d1a40" in DATA["source"]["PV_OFFICIAL"]


@pytest.mark.parametrize(("torch", "platform", "variant", "page"), CASES)
def test_every_page_command_is_reproduced(torch, platform, variant, page) -> None:
    expected = KNOWN_DIFFERENCES.get(page, page)
    args = ["install", "--torch", torch, "--variant", variant, "--platform", platform]
    args += ["--python-version", python_for(torch), "--manager", "conda"]
    args += ["--with", "torchvision,torchaudio"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip("\n").splitlines()[-1] == expected


def test_the_mirror_reading_of_1_9_1_cpu_is_not_followed() -> None:
    """The mirror's '1.9.1 CPU Only' line pins pytorch==1.9.0; the official revision 1.9.1."""
    entry = next(e for e in DATA["commands"] if "also" in e)
    assert "pytorch==1.9.0" in entry["also"]["command"]
    plan = elsewhere("1.9.1", "cpu", "linux-x86_64", "3.8")
    assert render(plan, "conda") == entry["command"] != entry["also"]["command"]


def elsewhere(torch: str, variant: str, platform: str, python: str):
    wish = Wish(
        torch=torch,
        variant=variant,
        companions=("torchvision", "torchaudio"),
        python=python,
        platform=platform,
        manager="conda",
    )
    return resolve(Facts(python=PythonFacts(version=python)), TABLES, wish, platform)


def test_cu113_of_1_10_1_exists_on_conda_only() -> None:
    """The issue's example: pip has no cu113 build of 1.10.1; PyTorch's conda channel has."""
    pip = resolve(
        Facts(python=PythonFacts(version="3.9")),
        TABLES,
        Wish(torch="1.10.1", variant="cu113", python="3.9", platform="linux-x86_64"),
    )
    assert not pip.ok and "no cu113 build" in pip.conflicts[0]
    plan = elsewhere("1.10.1", "cu113", "linux-x86_64", "3.9")
    assert plan.ok and plan.conda is not None
    assert list(plan.conda.channels) == ["pytorch", "conda-forge"]
    assert plan.conda.package == "cudatoolkit=11.3"


def test_a_variant_on_neither_is_refused_with_what_exists() -> None:
    plan = elsewhere("1.10.1", "cu111", "linux-x86_64", "3.9")
    assert not plan.ok
    assert list(plan.conflicts) == [
        "torch 1.10.1: no cu111 build on the pytorch conda channel for linux-x86_64 "
        "(published there: cu102, cu113, cpu)"
    ]
    rocm = elsewhere("2.5.1", "rocm6.2", "linux-x86_64", "3.11")
    assert not rocm.ok and "no rocm6.2 build on the pytorch conda channel" in rocm.conflicts[0]


def test_conda_companions_come_from_the_conda_view() -> None:
    plan = elsewhere("2.0.0", "cu118", "windows-x86_64", "3.10")
    assert [p.pin for p in plan.packages] == [
        "torch==2.0.0",
        "torchvision==0.15.0",
        "torchaudio==2.0.0",
    ]  # pip pairs 0.15.1 / 2.0.1
    assert any("conda pairs torchvision 0.15.0" in n for n in plan.notes)


def test_a_version_the_page_does_not_cover_is_unknown() -> None:
    plan = elsewhere("1.10.2", "cu102", "linux-x86_64", "3.9")
    assert not plan.ok
    assert "not known" in plan.conflicts[0] and plan.unverified
    assert "torch 1.10.0, 1.10.1: PyTorch's pages give conda commands" in plan.ways_out
    minor = elsewhere("1.10", "cu102", "linux-x86_64", "3.9")
    assert minor.ok and minor.torch == "1.10.1"
    assert any("1.10.2 left out" in n for n in minor.notes)


def test_a_platform_the_page_does_not_cover_is_unknown() -> None:
    plan = elsewhere("2.5.1", "cpu", "linux-aarch64", "3.11")
    assert not plan.ok and "not known" in plan.conflicts[0]


def test_the_lts_conda_build_keeps_its_python_limit() -> None:
    plan = elsewhere("1.8.2", "cu102", "linux-x86_64", "3.9")
    assert not plan.ok and "Python 3.8 and older" in plan.conflicts[0]


def test_after_2_5_conda_forge_and_the_channel_end_is_said() -> None:
    plan = elsewhere("2.6.0", "cu126", "linux-x86_64", "3.12")
    assert plan.ok and plan.conda is None
    assert any("conda channel ended with torch 2.5" in n for n in plan.notes)
    assert any("conda-forge" in u for u in plan.unverified)
    assert render(plan, "conda").startswith(
        'conda install -c conda-forge "pytorch==2.6.0=cuda126*"'
    )


def test_auto_variant_on_a_gpu_machine_picks_among_conda_builds() -> None:
    """A T4 on driver 470: the conda channel's 1.10.1 builds are cu102 and cu113 (pip's are
    cu102 and cu111). cu113 has no architecture list in the tables (no pip wheel of it), so
    the build known to carry sm_75 kernels, cu102, is chosen: never pip's cu111."""
    from envcheck.facts import GpuFacts

    facts = Facts(python=PythonFacts(version="3.9"))
    facts.system.os = "Linux"
    facts.system.machine = "x86_64"
    facts.nvidia.driver_version = "470.82.01"
    facts.nvidia.gpus = [
        GpuFacts(index=0, name="Tesla T4", compute_capability=ComputeCapability.parse("7.5"))
    ]
    wish = Wish(torch="1.10.1", python="3.9", platform="linux-x86_64", manager="conda")
    plan = resolve(facts, SHIPPED, wish, "linux-x86_64")
    assert plan.ok, plan.conflicts
    assert plan.variant == "cu102", plan.reasons
    assert plan.conda is not None and plan.conda.package == "cudatoolkit=10.2"
    asked = resolve(facts, SHIPPED, Wish(**{**wish.__dict__, "variant": "cu113"}), "linux-x86_64")
    assert asked.ok and any("architecture list" in u for u in asked.unverified)


def test_the_console_command_prints_the_issue_command() -> None:
    """One real process, as a user runs it."""
    result = envcheck(
        "install",
        "--torch",
        "1.10.1",
        "--variant",
        "cu113",
        "--platform",
        "linux-x86_64",
        "--python-version",
        "3.9",
        "--manager",
        "conda",
        "--with",
        "torchvision,torchaudio",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == (
        "conda install pytorch==1.10.1 torchvision==0.11.2 torchaudio==0.10.1 "
        "cudatoolkit=11.3 -c pytorch -c conda-forge"
    )
