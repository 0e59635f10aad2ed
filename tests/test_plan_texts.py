"""What `envcheck install` says about a plan: for the interpreter it describes or for
another platform, what its heading names, and how a wish no release can answer is said.
Every command runs as a real `python -m envcheck` on simulated machines."""

from __future__ import annotations

from envcheck.facts import GpuFacts
from envcheck.install import Wish, render, resolve
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability
from tests.fixtures import TABLES, profile
from tests.runner import envcheck

# This interpreter, described as a user's Linux box with a CUDA torch installed.
LINUX_CUDA_TORCH = {
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
    "ENVCHECK_FACT_TORCH_CUDA": "12.6",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
    "ENVCHECK_FACT_SYSTEM_OS": "Linux",
    "ENVCHECK_FACT_SYSTEM_MACHINE": "x86_64",
    "ENVCHECK_GPUS": "NVIDIA H100 80GB HBM3:9.0:80GiB",
    "ENVCHECK_DRIVER_VERSION": "580.65.06",
    "ENVCHECK_CUDA_DRIVER_VERSION": "13.0",
}


def test_a_plan_for_another_platform_lists_no_changes_against_this_torch() -> None:
    """Issue 28.9: planning for macOS on a Linux box; the installed Linux torch is not what
    the macOS command replaces, and the heading names what the command installs."""
    run = envcheck("install", "--platform", "macos-arm64", env=LINUX_CUDA_TORCH)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "what changes against the installed torch" not in run.stdout, run.stdout
    assert "2.13.0+cu126" not in run.stdout
    heading, command = run.stdout.splitlines()[0], run.stdout.splitlines()[-1]
    assert heading == "torch 2.15.0 for Python 3.11 on macos-arm64", heading
    assert command == "pip install torch==2.15.0", command
    # another Python on this platform: not this interpreter either
    other = envcheck("install", "--python", "3.13", env=LINUX_CUDA_TORCH)
    assert "what changes against the installed torch" not in other.stdout, other.stdout
    # this interpreter: the changes are listed, the heading names the labelled build
    here = envcheck("install", env=LINUX_CUDA_TORCH)
    assert "what changes against the installed torch:" in here.stdout, here.stdout
    # 2.15's cu130 is inferred from nightlies (its row is read from its wheels): 2.14's
    assert here.stdout.startswith("torch 2.14.1+cu130 for Python 3.11 on linux-x86_64")
    assert "torch 2.13.0+cu126 -> 2.14.1+cu130" in here.stdout


def test_a_plan_for_another_platform_pins_no_label_against_this_torch() -> None:
    """The same version as the installed one, for Windows: nothing installed there to
    replace, so no ``+cpu`` local label is pinned."""
    facts = profile("h100-server")
    facts.torch.version = facts.torch.dist_version = "2.13.0+cu130"
    facts.torch.companions = []
    plan = resolve(facts, TABLES, Wish(torch="2.13.0", variant="cpu", platform="windows-x86_64"))
    assert plan.ok and not plan.replaces_build and list(plan.changes) == []
    assert "torch==2.13.0 " in render(plan, "pip") + " ", render(plan, "pip")


def test_the_heading_names_the_default_index_build_as_its_version_does() -> None:
    facts = profile("h100-server")
    facts.torch.installed = False
    plan = resolve(
        facts, TABLES, Wish(torch="2.0.1", variant="cu117", companions=(), python="3.10")
    )
    assert plan.ok and plan.default_index, plan
    assert render(plan, "pip").startswith("pip install torch==2.0.1 ")  # and its triton pin
    assert plan.installs == "2.0.1 (cu117 on the default index)"


def test_a_variant_no_matching_release_has_is_said_before_the_driver() -> None:
    """Also in issue 28: `--torch 2.15 --variant cu126` on a machine whose driver is too old
    (or older than its GPU) says that 2.15 has no cu126 build, and where one is."""
    for driver, gpu in (
        (("535.104.05", "12.2"), "NVIDIA GeForce RTX 5090:12.0:32GiB"),  # driver predates it
        (("470.82.01", "11.4"), "NVIDIA GeForce RTX 3060:8.6:12GiB"),  # too old for cu126
    ):
        env = {
            **LINUX_CUDA_TORCH,
            "ENVCHECK_GPUS": gpu,
            "ENVCHECK_DRIVER_VERSION": driver[0],
            "ENVCHECK_CUDA_DRIVER_VERSION": driver[1],
        }
        run = envcheck("install", "--torch", "2.15", "--variant", "cu126", env=env)
        assert run.returncode == 1, run.stdout + run.stderr
        lines = run.stdout.splitlines()
        assert lines[1] == (
            "  - torch 2.15 has no cu126 build for linux-x86_64 (published: cpu, cu130, cu132)"
        ), run.stdout
        assert "driver" not in run.stdout, run.stdout
        assert "torch 2.14 is the newest release with a cu126 build" in run.stdout


def test_the_note_on_releases_passed_over_is_english() -> None:
    facts = profile("h100-server")
    facts.torch.installed = False
    facts.nvidia.gpus = [
        GpuFacts(
            index=0, name="NVIDIA H100 80GB HBM3", compute_capability=ComputeCapability.parse("9.0")
        )
    ]
    plan = resolve(facts, TABLES, Wish(variant="cu126"))
    (note,) = [n for n in plan.notes if n.startswith("newer releases do not fit")]
    assert "release(s)" not in note and " neither" not in note.split(";")[0]
    plan = resolve(facts, TABLES, Wish(variant="cu118"))
    (note,) = [n for n in plan.notes if n.startswith("newer releases do not fit")]
    assert "; neither do " in note and note.endswith(" more newer releases"), note


def test_the_cpu_reason_reads_as_one_sentence_after_fits() -> None:
    """Also in issue 28: "fits: no NVIDIA GPU here: the CPU build." had two colons."""
    run = envcheck(
        "check",
        "--no-deep",
        env={"ENVCHECK_FACT_TORCH_INSTALLED": "false", "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7"},
    )
    text = " ".join(run.stdout.split())
    assert "(cpu) fits: no NVIDIA GPU here, so the CPU build." in text, run.stdout


def _cpu_build_on_an_h100(python: str, driver: str):
    from tests.fixtures import report_of

    facts = profile("h100-server")
    facts.python.version, facts.nvidia.driver_version = python, driver
    facts.nvidia.cuda_driver_version = None
    facts.torch.version, facts.torch.cuda = "2.13.0+cpu", None
    # the shipped tables: the fixture ones lack the lists of the cu118 builds this driver
    # runs, and a plan resting on unknown kernels is no fit to name
    tables = load_tables()
    return next(f for f in report_of(facts, tables=tables).findings if f.code == "TRC001")


def test_a_driver_upgrade_is_offered_only_when_the_driver_keeps_the_release_out():
    """ "Or keep torch 2.13.0: upgrade the driver to X" only where the driver is older than X
    and the release has a wheel for this Python: else the upgrade changes nothing."""
    held_back = _cpu_build_on_an_h100("3.11.7", "520.61.05")
    assert "Or keep torch 2.13.0: upgrade the driver to 525.60.13 or newer for its cu126 build" in (
        held_back.fix or ""
    )
    no_wheel = _cpu_build_on_an_h100("3.9.18", "520.61.05")  # 2.13 has no Python 3.9 wheel
    new_driver = _cpu_build_on_an_h100("3.9.18", "570.86.10")  # driver is already past it
    for finding in (no_wheel, new_driver):
        assert "nearest release that does" in (finding.fix or "")
        assert "upgrade the driver" not in (finding.fix or ""), finding.fix
