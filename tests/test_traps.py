"""Small traps a new user fell into (issue: "fit the way people really run it"), each run
as the user ran it: the real console script, simulated hardware through the overrides."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.runner import envcheck

# A torch and Python every test machine can simulate: CI also runs on Python 3.9 without torch.
ANY_TORCH = {"ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu", "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7"}
KNOWN_MESSAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_explain_dash_reads_the_message_from_stdin() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "explain", "-"],
        input=KNOWN_MESSAGE + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("no-kernel-image:")


def test_explain_of_an_empty_message_is_a_usage_error() -> None:
    run = envcheck("explain", "   ")
    assert run.returncode == 2 and "the message is empty" in run.stderr


def test_an_unrecognised_message_gets_a_next_step() -> None:
    run = envcheck("explain", "something nobody has seen before")
    assert run.returncode == 1
    assert "Next:" in run.stdout and "envcheck diagnose" in run.stdout


def test_an_unknown_variant_is_a_usage_error_naming_the_known_ones() -> None:
    run = envcheck("install", "--variant", "cu999")
    assert run.returncode == 2
    assert "--variant cu999: no torch release in the tables was built for it" in run.stderr
    assert "cu128" in run.stderr and "rocm6.2" in run.stderr and "upgrade" not in run.stderr
    assert run.stdout == ""


def test_a_known_variant_missing_for_a_release_stays_a_plan_conflict() -> None:
    run = envcheck("install", "--variant", "cu113", "--torch", "2.5")
    assert run.returncode == 1
    assert "no cu113 build for linux-x86_64" in run.stdout


@pytest.mark.parametrize(
    "with_",
    [["--with", "torchvision,torchaudio"], ["--with", "torchaudio", "--with", "torchvision"]],
)
def test_torchaudio_is_kept_when_a_compatible_release_exists(with_) -> None:
    """torch 2.12-2.14 have no torchaudio of their own; 2.11.1 (torch>=2.11) works with them."""
    run = envcheck(
        "install", "--torch", "2.13", "--variant", "cpu", "--python-version", "3.11", *with_
    )
    assert run.returncode == 0, run.stderr
    command = run.stdout.strip().splitlines()[-1]
    assert "torchaudio==2.11.1" in shlex.split(command)
    assert "torchvision==0.28.0" in shlex.split(command)
    assert "torchaudio 2.11.1: torchaudio has no release for torch 2.13.0" in run.stdout


H100_ON_535 = {
    "ENVCHECK_GPUS": "NVIDIA H100 80GB HBM3:9.0:80GiB",
    "ENVCHECK_DRIVER_VERSION": "535.183.01",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
    "ENVCHECK_FACT_TORCH_CUDA": "12.6",
}


def _fix(stdout: str, code: str) -> str:
    block = stdout.split(code, 1)[1].split("\n\n", 1)[0]
    fix = block.split("fix:", 1)[1]
    return " ".join(fix.split())


def test_drv002_fix_is_short_and_points_to_the_source() -> None:
    run = envcheck("check", "--no-deep", "--format", "text", env=H100_ON_535)
    fix = _fix(run.stdout, "DRV002")
    assert len(fix) < 400, fix
    assert "'" not in fix  # no quoted documentation
    assert "minor-version-compatibility.html" in fix and "560.28.03" in fix


def test_markdown_counts_are_singular_for_one() -> None:
    run = envcheck(
        "check",
        "--no-deep",
        "--format",
        "markdown",
        env={"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB", **ANY_TORCH},
    )
    assert "1 error, 0 warnings, 0 infos" in run.stdout, run.stdout
    assert "1 errors" not in run.stdout


@pytest.mark.parametrize(
    "shm, severity, words", [("64MiB", "ERROR", "will fail"), ("512MiB", "WARNING", "may run out")]
)
def test_sys001_wording_matches_its_severity(shm, severity, words) -> None:
    run = envcheck("check", "--no-deep", env={"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": shm})
    line = next(x for x in run.stdout.splitlines() if "SYS001" in x)
    assert severity in line and words in line, line


def test_diagnose_header_says_what_the_text_did_not_give() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "diagnose", "-"],
        input=KNOWN_MESSAGE + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    header = proc.stdout.splitlines()[0]
    assert "torch: not in the text" in header and "Python: not in the text" in header
    assert "no torch" not in header and "no driver" not in header
    assert not re.search(r"Python\s+·", header)


@pytest.mark.parametrize(
    "machine, expected",
    [
        (  # a GTX 1080 Ti on driver 550: no CUDA 13 build runs (driver, and Pascal is gone)
            {
                "ENVCHECK_GPUS": "NVIDIA GeForce GTX 1080 Ti:6.1:11GiB",
                "ENVCHECK_DRIVER_VERSION": "550.54.14",
                "ENVCHECK_CUDA_DRIVER_VERSION": "12.4",
                "ENVCHECK_FACT_TORCH_VERSION": "2.5.1+cu124",
                "ENVCHECK_FACT_TORCH_CUDA": "12.4",
                "ENVCHECK_FACT_TOOLKIT_NVCC_VERSION": "13.0.88",
                "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
            },
            "No torch build for CUDA 13.x is known to run on this machine",
        ),
        (  # an RTX 4090 on driver 580: torch's cu130 build runs
            {
                "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
                "ENVCHECK_DRIVER_VERSION": "580.95.05",
                "ENVCHECK_CUDA_DRIVER_VERSION": "13.0",
                "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
                "ENVCHECK_FACT_TORCH_CUDA": "12.6",
                "ENVCHECK_FACT_TOOLKIT_NVCC_VERSION": "13.0.88",
                "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
            },
            "or install torch 2.13.0+cu130, which this machine runs",
        ),
        (  # nvcc 12.0: no torch was built for it; a 12.x build that runs is named instead
            {
                "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
                "ENVCHECK_DRIVER_VERSION": "580.95.05",
                "ENVCHECK_CUDA_DRIVER_VERSION": "13.0",
                "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
                "ENVCHECK_FACT_TORCH_CUDA": "13.0",
                "ENVCHECK_FACT_TOOLKIT_NVCC_VERSION": "12.0.140",
                "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
            },
            "or install torch 2.13.0+cu126, which this machine runs",
        ),
    ],
)
def test_tk001_names_only_builds_that_exist_and_run_here(machine, expected) -> None:
    run = envcheck("check", "--no-deep", env=machine)
    fix = _fix(run.stdout, "TK001")
    assert expected in fix, fix
    assert "CUDA 12.0." not in fix and "built for CUDA 13.0" not in fix


def test_shell_completion_works_as_the_readme_says() -> None:
    """`eval "$(_ENVCHECK_COMPLETE=bash_source envcheck)"`, then Tab after `envcheck ch`."""
    source = envcheck(env={"_ENVCHECK_COMPLETE": "bash_source"})
    assert source.returncode == 0 and "_envcheck_completion" in source.stdout, source.stderr
    complete = envcheck(
        env={"_ENVCHECK_COMPLETE": "bash_complete", "COMP_WORDS": "envcheck ch", "COMP_CWORD": "1"}
    )
    assert complete.returncode == 0, complete.stderr
    assert "plain,check" in complete.stdout.split()
