"""Fragments users paste instead of a whole collect_env (issue "diagnose real reports",
observation 1): each is read for its facts, wherever it stands, and a missing fact never
becomes a finding."""

from __future__ import annotations

import pytest

from envcheck.diagnose import diagnose_text, read_text
from envcheck.tables import load_tables

TABLES = load_tables()

NVCC = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release 12.4, V12.4.131
Build cuda_12.4.r12.4/compiler.34097967_0"""


def test_nvcc_v() -> None:
    reading = read_text(NVCC, TABLES)
    assert reading.facts.toolkit.nvcc_version == "12.4.131"
    assert "toolkit" in reading.observed and "nvcc -V" in reading.pieces


@pytest.mark.parametrize(
    "text, version, cuda",
    [
        ("2.1.0+cu121 12.1", "2.1.0+cu121", "12.1"),
        (">>> print(torch.__version__)\n2.3.1+cu118", "2.3.1+cu118", "11.8"),
        ("2.5.1+cpu None", "2.5.1+cpu", None),
        ("2.4.0+rocm6.1", "2.4.0+rocm6.1", None),
    ],
)
def test_torch_version_print(text: str, version: str, cuda) -> None:
    t = read_text(text, TABLES).facts.torch
    assert (t.installed, t.version, t.cuda) == (True, version, cuda)


def test_pip_list_freeze_and_conda_list() -> None:
    pip_list = "Package    Version\n---------- ---------\ntorch                    2.1.0+cu121\ntorchvision              0.16.0+cu121\nnumpy 1.26.4"
    facts = read_text(pip_list, TABLES).facts
    assert (facts.torch.version, facts.torch.cuda) == ("2.1.0+cu121", "12.1")
    assert [(p.name, p.version) for p in facts.torch.companions] == [
        ("torchvision", "0.16.0+cu121")
    ]
    freeze = "filelock==3.13.1\ntorch==2.2.2\ntorchaudio==2.2.2\n"
    facts = read_text(freeze, TABLES).facts
    assert facts.torch.version == "2.2.2" and facts.torch.companions[0].name == "torchaudio"
    conda = "# Name Version Build Channel\npytorch                   2.1.0           py3.11_cuda12.1_cudnn8.9.2_0    pytorch"
    facts = read_text(conda, TABLES).facts
    assert (facts.torch.version, facts.torch.cuda) == ("2.1.0", "12.1")


@pytest.mark.parametrize(
    "line, kernel, machine, wsl, judged",
    [
        (
            "Linux DESKTOP-1 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux",
            "5.15.153.1-microsoft-standard-WSL2",
            "x86_64",
            2,
            True,
        ),
        (
            "Linux pc 4.4.0-19041-Microsoft #1237-Microsoft Sat Sep 11 14:32:00 PST 2021 x86_64 x86_64 x86_64 GNU/Linux",
            "4.4.0-19041-Microsoft",
            "x86_64",
            1,
            True,
        ),
        (
            "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-054) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #115-Ubuntu SMP",
            "5.15.0-105-generic",
            "",
            None,
            False,  # /proc/version gives no architecture: the platform is not judged
        ),
    ],
)
def test_uname_and_proc_version(line, kernel, machine, wsl, judged) -> None:
    reading = read_text(line, TABLES)
    s = reading.facts.system
    assert (s.os, s.kernel, s.machine, s.wsl) == ("Linux", kernel, machine, wsl)
    assert ("system" in reading.observed) is judged


def test_sw_vers_gives_macos_but_not_an_architecture() -> None:
    reading = read_text("ProductName:\tmacOS\nProductVersion:\t14.5\nBuildVersion:\t23F79", TABLES)
    assert (reading.facts.system.os, reading.facts.system.os_version) == ("Darwin", "14.5")
    assert "system" not in reading.observed  # PY003 must not fire on a machine it cannot see


def test_a_combined_paste_is_diagnosed_and_says_what_is_missing() -> None:
    paste = (
        "```\n$ uname -a\nLinux h 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 x86_64 x86_64 GNU/Linux\r\n"
        f"$ nvcc -V\n{NVCC}\n$ pip list | grep torch\ntorch                    2.1.0+cu121\n```"
    )
    report = diagnose_text(paste, TABLES)
    d = report.diagnosis or {}
    assert {"nvcc -V", "package list", "uname"} <= set(d["read"])
    assert [f.code for f in report.findings] == ["TK001"]  # 12.4 vs 12.1: works, with the caveat
    assert "NVIDIA driver and GPUs" in d["missing"]
    assert "fits what the report says" in report.findings[0].fix  # not "this machine runs"
    assert not any(f.code.startswith(("TRC", "PY")) for f in report.findings)


def test_conflicting_facts_are_reported_not_merged() -> None:
    reading = read_text("torch==2.1.0\n2.3.1+cu121 12.1", TABLES)
    assert reading.facts.torch.version == "2.3.1+cu121"  # the print is read first
    assert any("two values for torch" in n for n in reading.notes)


def test_huge_lines_are_read_without_harm() -> None:
    """Lines are cut to MAX_LINE before any pattern runs, and the patterns are anchored
    without nested repeats: a 200k-character line is read (to nothing) at once."""
    for line in ("torch " + "1" * 200_000, "Linux x " + "a " * 100_000, "2.1.0+cu" + "1" * 200_000):
        reading = read_text(line, TABLES)
        assert reading.facts.torch.version is None and reading.facts.system.kernel is None
