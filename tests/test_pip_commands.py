"""Every pip command of PyTorch's previous-versions page, torch 1.8 to the newest, on each
platform the page gives it for: `envcheck install --torch V --variant X --platform P
--manager pip` prints an equivalent command (tests/data/pytorch_pip_commands.json, one
source per row; tools/pip_commands_from_page.py extracts them). The get-started selector's
commands (2.4.0 to 2.13.0, every OS and compute platform it lists; unpinned) are checked
the same way below (tests/data/pytorch_getstarted_commands.json).

"Equivalent" is literal equality after the spellings below, each a deliberate choice
explained where it is made; any other difference is a bug in the tables or resolver.
This runs the shipped tables through the real CLI (in process: click's runner).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from click.testing import CliRunner

from envcheck.cli import cli
from tests.runner import envcheck

DATA = json.loads((Path(__file__).parent / "data" / "pytorch_pip_commands.json").read_text())
INDEX = "https://download.pytorch.org/whl/"

# The page says "Linux and Windows" above CUDA 10.2 for 1.11 and 1.12, but no cu102 Windows
# build was made (pytorch.github.io PR 1030): envcheck refuses, with the builds there are.
REFUSED = {
    ("1.11.0", "cu102", "windows-x86_64"),
    ("1.12.0", "cu102", "windows-x86_64"),
    ("1.12.1", "cu102", "windows-x86_64"),
}
# torch 1.8.0 on ROCm: the page installs torch without a pin from the ROCm page, then
# builds torchvision from source (`pip install 'git+...vision.git@v0.9.0'`): no
# torchvision+rocm wheel exists. envcheck cannot express a source build of torchvision.
NOT_EXPRESSIBLE = {("1.8.0", "rocm4.0.1", "linux-x86_64")}
# Where the page itself is wrong: for ROCm 4.0.1 the 1.10 page pins torchvision
# 0.10.x+rocm4.0.1, built for torch 1.9 (torchvision 0.10.1's wheel metadata requires
# torch==1.9.1), so pip cannot install the pair; no torchvision 0.11 was listed for ROCm
# 4.0.1. envcheck installs torch and torchaudio of the page and leaves torchvision out, saying why.
PAGE_UNINSTALLABLE = {
    ("1.10.0", "rocm4.0.1", "linux-x86_64"): "torchvision",
    ("1.10.1", "rocm4.0.1", "linux-x86_64"): "torchvision",
}
# The build of each version on the default index for Linux x86_64 where it is a CUDA build
# (measured: torch/version.py of the PyPI wheels 1.8.1..1.12.1 '+cu102', 1.13.1 and 2.0.1
# '+cu117'; research/pypi_measured.txt). There a plain pin installs the same build as the
# page's labelled pin from PyTorch's index, and envcheck prints the plain one up to 2.0.
DEFAULT_INDEX_BUILD = {
    **{m: "cu102" for m in ("1.8", "1.9", "1.10", "1.11", "1.12")},
    "1.13": "cu117",
    "2.0": "cu117",
}


def python_for(torch: str) -> str:
    """A Python every platform of that era has wheels for (PyPI's file lists)."""
    key = tuple(int(p) for p in torch.split("."))
    if key < (1, 11):
        return "3.8"
    if key < (2, 9):
        return "3.10"
    return "3.12"


def cases() -> List[Tuple[str, str, str, str, str]]:
    out = []
    for row in DATA["rows"]:
        for platform in row["platforms"]:
            out.append((row["torch"], row["variant"], platform, row["command"], row["source"]))
    return out


CASES = cases()


def parse(command: str) -> Tuple[Dict[str, str], Optional[str], Optional[str]]:
    """(pins, index option, index URL) of a `pip install` line."""
    words = shlex.split(command)
    assert words[0] in ("pip", "pip3") and words[1] == "install", command
    pins: Dict[str, str] = {}
    option = url = None
    rest = iter(words[2:])
    for word in rest:
        if word in ("--index-url", "--extra-index-url", "-f"):
            option, url = word, next(rest)
        else:
            name, _, version = word.partition("==")
            pins[name] = version
    return pins, option, url


def page_form(torch: str, variant: str, platform: str, command: str) -> str:
    """The page's command in the spelling envcheck prints, for the same pip behaviour."""
    pins, option, url = parse(command)
    if option == "-f":
        # 1.x pages used `-f https://download.pytorch.org/whl/[<variant>/]torch_stable.html`,
        # a flat page of every labelled build; with every torch/torchvision pin labelled
        # `+<variant>`, `--extra-index-url .../whl/<variant>` picks the same files (the
        # form the pages use from 1.11 on, and that still works for older builds).
        assert url is not None and url.endswith("torch_stable.html"), command
        assert all(
            pins[name].endswith(f"+{variant}") for name in ("torch", "torchvision") if name in pins
        ), command
        option, url = "--extra-index-url", INDEX + variant
    if option is None and platform == "windows-x86_64":
        # The page's plain command for the default CUDA build (1.8.0 cu102, 2.0.x cu117)
        # sits under "Linux and Windows", but the Windows wheel on the default index is the
        # CPU build: on Windows envcheck names the variant's index (with 1.x labels).
        legacy = torch.startswith("1.")
        if legacy:
            for name in ("torch", "torchvision"):
                if name in pins:
                    pins[name] += f"+{variant}"
        option, url = ("--extra-index-url" if legacy else "--index-url"), INDEX + variant
    minor = ".".join(torch.split(".")[:2])
    if (
        platform == "linux-x86_64"
        and DEFAULT_INDEX_BUILD.get(minor) == variant
        and url == INDEX + variant
        and torch != "1.8.2"
    ):
        pins = {n: v.split("+")[0] for n, v in pins.items()}
        option = url = None
    words = ["pip", "install", *(f"{n}=={v}" if v else n for n, v in pins.items())]
    if option:
        words += [option, url or ""]
    return " ".join(words)


def run_install(torch: str, variant: str, platform: str, with_: str, python: str):
    args = ["install", "--torch", torch, "--variant", variant, "--platform", platform]
    args += ["--python-version", python, "--with", with_, "--manager", "pip"]
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize(("torch", "variant", "platform", "command", "source"), CASES)
def test_page_command(torch, variant, platform, command, source) -> None:
    assert source in DATA["sources"].values()
    pins, _, _ = parse(command)
    companions = ",".join(n for n in ("torchvision", "torchaudio") if n in pins) or "none"
    result = run_install(torch, variant, platform, companions, python_for(torch))
    if (torch, variant, platform) in REFUSED:
        assert result.exit_code != 0
        assert f"no {variant} build for {platform}" in result.output
        return
    if (torch, variant, platform) in NOT_EXPRESSIBLE:
        pytest.xfail("the page builds torchvision from source")
    assert result.exit_code == 0, result.output
    printed = result.output.strip().splitlines()[-1]
    left_out = PAGE_UNINSTALLABLE.get((torch, variant, platform))
    if left_out:
        assert f"{left_out} has no {variant} build for torch {torch}: left out" in result.output
        assert "requires torch==1.9.1" in result.output
        kept = [w for w in command.split() if not w.startswith(f"{left_out}==")]
        command = " ".join(kept)
    assert printed == page_form(torch, variant, platform, command), (command, result.output)


def test_the_table_covers_every_release_and_platform() -> None:
    """1.8 to the newest on the page, Linux, Windows and macOS, CUDA, ROCm and CPU."""
    minors = {".".join(t.split(".")[:2]) for t, *_ in CASES}
    assert {"1.8", "1.13", "2.0", "2.3", "2.4", "2.12"} <= minors
    assert {p for _, _, p, _, _ in CASES} == {
        "linux-x86_64",
        "windows-x86_64",
        "macos-arm64",
        "macos-x86_64",
    }
    kinds = {v[:2] for _, v, *_ in CASES}
    assert {"cu", "ro", "cp"} <= kinds
    lts = [c for c in CASES if c[0] == "1.8.2"]
    assert {c[1] for c in lts} == {"cu102", "cu111", "cpu"}
    assert all("/whl/lts/1.8/" in c[3] for c in lts)


def test_the_lts_command_as_a_user_runs_it() -> None:
    """A real `python -m envcheck` process, as the page's 1.8.2 LTS line."""
    result = envcheck(
        "install", "--torch", "1.8.2", "--variant", "cu111", "--platform", "windows-x86_64",
        "--python-version", "3.8", "--with", "torchvision,torchaudio",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == (
        "pip install torch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 "
        "--extra-index-url https://download.pytorch.org/whl/lts/1.8/cu111"
    )


# PyTorch's get-started selector (published_versions.json), 2.4.0 to 2.13.0: unpinned
# commands for the release it showed as stable (tests/data/pytorch_getstarted_commands.json,
# tools/pip_commands_from_getstarted.py).
GETSTARTED = json.loads(
    (Path(__file__).parent / "data" / "pytorch_getstarted_commands.json").read_text()
)
GS_CASES = [
    (r["torch"], r["selection"], r["variant"], p, r["command"], r["fallback"], r["source"])
    for r in GETSTARTED["rows"]
    for p in r["platforms"]
]


def _default_variant(torch: str, platform: str) -> Optional[str]:
    """What the tables say the default index serves (read, to check it against the page)."""
    minor = ".".join(torch.split(".")[:2])
    tables = json.loads(
        (Path(__file__).parents[1] / "compat_tables" / "torch_releases.json").read_text()
    )
    for release in tables["releases"]:
        if release["minor"] == minor:
            return release["default_variant"].get(platform)
    return None


def getstarted_form(torch: str, variant: str, platform: str, command: str) -> str:
    """The selector's unpinned command in the spelling envcheck prints, versions aside.

    A command without an index installs the default index's build of the platform, which
    the page's own data names (its libtorch link: Linux x86_64's default CUDA build, the
    Windows CPU build): envcheck names that variant's index, as the previous-versions page
    does for every build. macOS has one (CPU) build and no index in either."""
    pins, option, url = parse(command.replace("pip3 install", "pip install", 1))
    assert all(v == "" for v in pins.values()), command  # unpinned: the newest release
    if option is None and not platform.startswith("macos"):
        option, url = "--index-url", INDEX + variant
    words = ["pip", "install", *pins]
    if option:
        words += [option, url or ""]
    return " ".join(words)


@pytest.mark.parametrize(
    ("torch", "selection", "variant", "platform", "command", "fallback", "source"), GS_CASES
)
def test_getstarted_command(torch, selection, variant, platform, command, fallback, source):
    assert source in GETSTARTED["sources"].values()
    if command is None or fallback:
        # The page: no such build here (ROCm on Windows), or "CUDA is not available on
        # MacOS, please use default package". envcheck refuses the variant, offers the
        # CPU build, and proposes no NVIDIA driver for a platform without CUDA builds.
        result = run_install(torch, variant, platform, "torchvision", python_for(torch))
        assert result.exit_code != 0, result.output
        assert f"no {variant} build for {platform}" in result.output
        assert "use the CPU build (--variant cpu)" in result.output
        if fallback or not variant.startswith("cu"):
            assert "NVIDIA driver" not in result.output, result.output
        return
    pins, option, _ = parse(command.replace("pip3 install", "pip install", 1))
    if option is None and not platform.startswith("macos"):
        # The page's plain command is the default index's build: the tables must agree.
        assert _default_variant(torch, platform) == variant, (selection, platform)
    companions = ",".join(n for n in ("torchvision", "torchaudio") if n in pins) or "none"
    result = run_install(torch, variant, platform, companions, python_for(torch))
    assert result.exit_code == 0, result.output
    printed = result.output.strip().splitlines()[-1]
    words = printed.split()
    pinned = [w for w in words if "==" in w]
    assert pinned[0] == f"torch=={torch}", printed
    assert all(w.split("==")[1] for w in pinned), printed
    unpinned = " ".join(w.split("==")[0] for w in words)
    assert unpinned == getstarted_form(torch, variant, platform, command), (command, printed)


def test_getstarted_covers_every_selection() -> None:
    """2.4.0 (upstream) to 2.13.0 (the newest stored), every OS and compute platform."""
    releases = {c[0] for c in GS_CASES}
    assert {"2.4.0", "2.13.0"} <= releases
    assert {c[1].split("/")[1] for c in GS_CASES} == {
        "accnone",
        "cuda.x",
        "cuda.y",
        "cuda.z",
        "rocm5.x",
    }
    assert {c[3] for c in GS_CASES} >= {"linux-x86_64", "windows-x86_64", "macos-arm64"}
    newest = [c for c in GS_CASES if c[0] == "2.13.0" and c[4] and not c[5]]
    assert {c[2] for c in newest} == {"cpu", "cu126", "cu130", "cu132", "rocm7.2"}


@pytest.mark.parametrize("row", GETSTARTED["python_min"]["rows"], ids=lambda r: r["torch"])
def test_getstarted_python_minimum(row) -> None:
    """The selector's "requires Python 3.X or later" is the table's minimum for that release,
    and envcheck refuses the Python just below it."""
    minor = ".".join(row["torch"].split(".")[:2])
    tables = json.loads(
        (Path(__file__).parents[1] / "compat_tables" / "torch_releases.json").read_text()
    )
    release = next(r for r in tables["releases"] if r["minor"] == minor)
    assert release["python"]["min"] == row["min"]
    major, below = row["min"].split(".")
    older = f"{major}.{int(below) - 1}"
    result = run_install(row["torch"], "cpu", "linux-x86_64", "none", older)
    assert result.exit_code != 0, result.output
    assert run_install(row["torch"], "cpu", "linux-x86_64", "none", row["min"]).exit_code == 0
