"""One plan, one text: every fix in a report that names a torch build or a CUDA toolkit to
install names the one plan the core resolved, the plan whose command stands under them.

Machines are profiles and simulated variations of them (the NVIDIA facts are the boundary:
no GPU is here). What a fix tells the user to install is read from the sentences envcheck
uses for it; a report whose fixes name two different builds, or a toolkit whose CUDA is
not that of the torch the report leaves, fails.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional, Set, Tuple

import pytest
from packaging.specifiers import SpecifierSet

from envcheck.core import Report
from envcheck.facts import Facts, GpuFacts
from envcheck.requirements import Requirements
from envcheck.values import ComputeCapability
from tests.fixtures import profile, profile_names, report_of

# The sentences a fix uses to name a torch build to install, and a toolkit to install.
_BUILD = [
    re.compile(r"torch (\d+\.\d+\.\d+) \(([\w.]+)\) (?:fits|may fit|is the nearest release)"),
    re.compile(r"install (?:torch )?(\d+\.\d+\.\d+)\+([\w.]+)"),
    re.compile(r"the torch this report installs \((\d+\.\d+\.\d+)\+([\w.]+)\)"),
]
_TOOLKIT = re.compile(r"[Ii]nstall the CUDA (\d+\.\d+) toolkit")
_PIN = re.compile(r"\btorch==(\d+\.\d+\.\d+)(?:\+([\w.]+))?")
_INDEX = re.compile(r"(?:whl/|--torch-backend=)([\w.]+)")


def named_builds(report: Report) -> Set[Tuple[str, str]]:
    """(version, variant) of every torch build a fix or the command tells the user to install.
    The command's variant is its index (or local label); a default-index command (macOS) is
    read as the plan's own variant: it names no other."""
    out: Set[Tuple[str, str]] = set()
    for f in report.findings:
        for pattern in _BUILD:
            out |= {(v, w) for v, w in pattern.findall(f.fix or "")}
        if f.command:
            pin = _PIN.search(f.command)
            index = _INDEX.search(f.command)
            assert pin is not None and report.install is not None, f.command
            variant = pin.group(2) or (index.group(1) if index else report.install.plan.variant)
            out.add((pin.group(1), str(variant)))
    return out


def named_toolkits(report: Report) -> Set[str]:
    return {m for f in report.findings for m in _TOOLKIT.findall(f.fix or "")}


def torch_left(report: Report) -> Optional[str]:
    """The CUDA (X.Y) of the torch this report leaves: the one its command installs, else
    the installed one."""
    if report.install is not None and report.install.command:
        variant = report.install.plan.variant
        cuda = variant.cuda if variant is not None else None
        return f"{cuda.major}.{cuda.minor}" if cuda else None
    return report.facts.torch.cuda if report.facts.torch.installed else None


def _gpu(name: str, cc: str) -> GpuFacts:
    return GpuFacts(
        index=0, name=name, compute_capability=ComputeCapability.parse(cc), memory_total=32 * 2**30
    )


def _machine(
    base: str,
    torch: Optional[str] = None,
    cuda: Optional[str] = None,
    driver: Optional[Tuple[str, str]] = None,
    gpu: Optional[Tuple[str, str]] = None,
    nvcc: Optional[str] = None,
) -> Callable[[], Facts]:
    def make() -> Facts:
        facts = profile(base)
        if torch is not None:
            facts.torch.version = facts.torch.dist_version = torch
            facts.torch.cuda = cuda
            facts.torch_runtime.status = "not_run"
        if driver is not None:
            facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = driver
        if gpu is not None:
            facts.nvidia.gpus = [_gpu(*gpu)]
        if nvcc is not None:
            facts.toolkit.nvcc_version = nvcc
            facts.toolkit.toolchain_probed = True
        return facts

    return make


RTX5090 = ("NVIDIA GeForce RTX 5090", "12.0")
RTX4090 = ("NVIDIA GeForce RTX 4090", "8.9")
H100 = ("NVIDIA H100 80GB HBM3", "9.0")
# name -> (facts, the project's torch specifier)
MACHINES: Dict[str, Tuple[Callable[[], Facts], Optional[str]]] = {
    **{f"profile {name}": (lambda name=name: profile(name), None) for name in profile_names()},
    **{
        f"issue 28.3: RTX 5090, torch 2.13.0+cu126, driver 570, nvcc {nvcc}": (
            _machine("rtx5090-cu126", "2.13.0+cu126", "12.6", ("570.86.16", "12.8"), RTX5090, nvcc),
            None,
        )
        for nvcc in ("12.4", "12.6", "12.8", "13.0")
    },
    "RTX 5090, torch 2.13.0+cu126, driver 535 (nothing fits), nvcc 12.8": (
        _machine("rtx5090-cu126", "2.13.0+cu126", "12.6", ("535.104.05", "12.2"), RTX5090, "12.8"),
        None,
    ),
    "RTX 4090, torch 2.13.0+cu126 that fits, nvcc 13.0": (
        _machine("rtx5090-cu126", "2.13.0+cu126", "12.6", ("580.95.05", "13.0"), RTX4090, "13.0"),
        None,
    ),
    "issue 28.14: H100, CPU torch 2.13.0, the project wants >=2.14": (
        _machine("h100-server", "2.13.0+cpu", None, ("580.65.06", "13.0"), H100),
        ">=2.14",
    ),
    "H100, CPU torch 2.13.0, the project wants >=2.14, nvcc 12.6": (
        _machine("h100-server", "2.13.0+cpu", None, ("580.65.06", "13.0"), H100, "12.6"),
        ">=2.14",
    ),
    "H100, torch 2.13.0+cu126, the project wants >=2.14, nvcc 12.6": (
        _machine("h100-server", "2.13.0+cu126", "12.6", ("580.65.06", "13.0"), H100, "12.6"),
        ">=2.14",
    ),
    "H100, torch 2.13.0+cu130 on driver 535, nvcc 13.0": (
        _machine("h100-server", "2.13.0+cu130", "13.0", ("535.104.05", "12.2"), H100, "13.0"),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_no_two_fixes_in_a_report_name_different_builds(name: str) -> None:
    make, wanted = MACHINES[name]
    req = Requirements(torch=SpecifierSet(wanted), source="pyproject.toml") if wanted else False
    report = report_of(make(), requirements=req)
    texts = "\n".join(f"{f.code}: {f.fix}\n  $ {f.command}" for f in report.findings)
    builds = named_builds(report)
    assert len(builds) <= 1, f"two builds named: {sorted(builds)}\n{texts}"
    if report.install is not None and report.install.plan.ok and builds:
        plan = report.install.plan
        assert builds == {(plan.torch, plan.variant)}, texts
    left = torch_left(report)
    for toolkit in named_toolkits(report):
        assert toolkit == left, f"CUDA {toolkit} toolkit advised, torch left: {left}\n{texts}"


def test_the_item_machines_say_what_the_plan_installs() -> None:
    """The two machines of issue 28 (items 3 and 14), as the user reads them."""
    make, _ = MACHINES["issue 28.3: RTX 5090, torch 2.13.0+cu126, driver 570, nvcc 13.0"]
    report = report_of(make())
    (tk001,) = [f for f in report.findings if f.code == "TK001"]
    assert "torch this report installs (2.11.0+cu128)" in tk001.title
    assert "Install the CUDA 12.8 toolkit" in (tk001.fix or "")
    assert "12.6" not in (tk001.fix or "")
    # nvcc 12.8 is what the planned torch needs: nothing to say
    make, _ = MACHINES["issue 28.3: RTX 5090, torch 2.13.0+cu126, driver 570, nvcc 12.8"]
    assert "TK001" not in [f.code for f in report_of(make()).findings]

    make, _ = MACHINES["issue 28.14: H100, CPU torch 2.13.0, the project wants >=2.14"]
    req = Requirements(torch=SpecifierSet(">=2.14"), source="pyproject.toml")
    report = report_of(make(), requirements=req)
    (trc001,) = [f for f in report.findings if f.code == "TRC001"]
    assert "torch 2.13.0 does not satisfy the project's torch>=2.14" in (trc001.fix or "")
    assert "torch 2.14.1 (cu130) fits" in (trc001.fix or ""), trc001.fix
    assert report.install is not None and report.install.command is not None
    assert "torch==2.14.1" in report.install.command


def test_a_report_that_installs_nothing_judges_nvcc_against_the_torch_that_stays() -> None:
    """With the finding an install fixes ignored, the report has no command: the toolkit
    advice is for the installed torch (whose CUDA 12.6 cannot compile for an sm_120, which
    is said instead of advising it), and names no build the report does not install."""
    make, _ = MACHINES["issue 28.3: RTX 5090, torch 2.13.0+cu126, driver 570, nvcc 12.8"]
    facts = make()
    facts.torch.companions = []  # its torchvision 0.22.1 would be a PKG001 to install
    report = report_of(facts, ignore=["ARC001"])
    assert report.install is None
    (tk001,) = [f for f in report.findings if f.code == "TK001"]
    assert tk001.title == "nvcc is CUDA 12.8, torch was built with CUDA 12.6"
    assert "No CUDA 12.6 toolkit compiles for the GPUs here" in (tk001.fix or ""), tk001.fix
    assert "NVIDIA GeForce RTX 5090 (sm_120) needs CUDA 12.8 or newer" in (tk001.fix or "")
    assert "2.11.0" not in (tk001.fix or "")


def test_with_no_install_in_the_report_a_build_for_nvcc_is_offered() -> None:
    """The installed torch fits (no command): matching nvcc's CUDA by another build is the
    one alternative named, and it is a build that runs here."""
    make = _machine("h100-server", "2.13.0+cu126", "12.6", ("580.95.05", "13.0"), H100, "13.0")
    facts = make()
    facts.torch.companions = []
    report = report_of(facts)
    assert report.install is None
    (tk001,) = [f for f in report.findings if f.code == "TK001"]
    assert "Install the CUDA 12.6 toolkit" in (tk001.fix or "")
    assert "or install torch 2.13.0+cu130" in (tk001.fix or ""), tk001.fix
