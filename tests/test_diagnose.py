"""envcheck diagnose: pasted reports of different eras and platforms, read into Facts and judged."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envcheck.diagnose import diagnose_text, explain
from tests.fixtures import TABLES
from tests.runner import envcheck

CORPUS = Path(__file__).parent / "diagnose_corpus"


def read(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8", errors="replace")


# file -> (facts expected, [(severity, code, name)] expected)
EXPECTED = {
    "collect_env_2x_rtx5090.txt": (
        {
            "torch.version": "2.8.0+cu126",
            "torch.cuda": "12.6",
            "python.version": "3.12.3",
            "system.os": "Linux",
            "system.distro_name": "Ubuntu 24.04.1 LTS",
            "system.glibc": "2.39",
            "system.kernel": "6.8.0-51-generic",
            "nvidia.driver_version": "570.86.15",
            "gpu0": ("NVIDIA GeForce RTX 5090", "12.0"),
            "toolkit.nvcc_version": "12.8.61",
            "torch_runtime.cuda_available": True,
            "system.cpu_model": "AMD Ryzen 9 9950X 16-Core Processor",
        },
        [
            ("error", "ARC001", "no-kernels-for-gpu"),
            ("error", "MSG001", "capability-not-compatible"),
            # no TK001: the plan is cu128 (driver 570 runs CUDA 12.8 fully), as nvcc 12.8
        ],
    ),
    "collect_env_1x_old.txt": (
        {
            "torch.version": "1.8.1+cu111",
            "torch.cuda": "11.1",
            "python.version": "3.8",
            "python.bits": 64,
            "system.distro_name": "Ubuntu 18.04.5 LTS",
            "nvidia.driver_version": "460.73.01",
            "gpu0": ("GeForce RTX 3090", "8.6"),
        },
        [
            ("warning", "ARC004", "arch-list-unknown"),
            ("info", "PY002", "python-too-new-or-old-for-current-torch"),
        ],
    ),
    "collect_env_macos.txt": (
        {
            "torch.version": "2.2.0",
            "torch.cuda": None,
            "system.os": "Darwin",
            "system.os_version": "14.2.1",
            "system.machine": "arm64",
            "python.version": "3.11.7",
            "torch_runtime.cuda_available": False,
        },
        [],
    ),
    "collect_env_windows_cpu_wheel.txt": (
        {
            "torch.version": "2.3.1+cpu",
            "system.os": "Windows",
            "system.machine": "AMD64",
            "nvidia.driver_version": "551.86",
            "gpu0": ("NVIDIA GeForce RTX 4070", "8.9"),
        },
        [("error", "MSG001", "not-compiled-with-cuda"), ("error", "TRC001", "cpu-build-with-gpu")],
    ),
    "collect_env_rocm.txt": (
        {
            "torch.version": "2.5.1+rocm6.2",
            "torch.hip": "6.2.41133-dd7f95766",
            "amd0": "gfx942",
            "gpus": 0,
        },
        [],
    ),
    "nvidia_smi_h100.txt": (
        {
            "nvidia.driver_version": "550.54.15",
            "nvidia.cuda_driver_version": "12.4",
            "gpus": 2,
            "gpu0": ("NVIDIA H100 80GB HBM3", "9.0"),
            "torch.version": None,
        },
        [("error", "GPU002", "ecc-uncorrectable")],
    ),
    "nvidia_smi_list_and_csv.txt": (
        {
            "nvidia.driver_version": "535.104.05",
            "gpus": 2,
            "gpu0": ("NVIDIA A100-SXM4-80GB", "8.0"),
        },
        [],
    ),
    "pasted_markdown_wsl.txt": (
        {
            "torch.version": "2.5.1+cu124",
            "system.wsl": 2,
            "python.version": "3.10.12",
            "nvidia.driver_version": "546.33",
            "gpu0": ("NVIDIA GeForce RTX 3080", "8.6"),
        },
        [
            ("error", "MSG001", "library-missing"),
            ("error", "RUN003", "cuda-unavailable"),
            ("warning", "DRV002", "minor-version-compatibility"),
            ("warning", "TK001", "nvcc-mismatch"),
            ("warning", "ARC004", "arch-list-unknown"),
            ("info", "PY002", "python-too-new-or-old-for-current-torch"),
        ],
    ),
    "errors_only.txt": (
        {"toolkit.nvcc_version": "12.2", "torch.cuda": "11.7", "torch.version": None},
        [
            ("error", "MSG001", "cuda-version-mismatch"),
            ("error", "MSG001", "dataloader-bus-error"),
            ("error", "MSG001", "no-kernel-image"),
            ("error", "MSG001", "torchvision-nms"),
        ],
    ),
}


def test_every_corpus_file_has_expectations() -> None:
    assert {p.name for p in CORPUS.glob("*.txt")} == set(EXPECTED)


def fact(facts, path: str):
    if path == "gpus":
        return len(facts.nvidia.gpus)
    if path == "gpu0":
        g = facts.nvidia.gpus[0]
        return (g.name, g.compute_capability)
    if path == "amd0":
        return facts.amd.gpus[0].gfx
    section, name = path.split(".")
    return getattr(getattr(facts, section), name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus(name: str) -> None:
    diagnosis = diagnose_text(read(name), TABLES)
    expected_facts, expected_findings = EXPECTED[name]
    for path, want in expected_facts.items():
        assert fact(diagnosis.facts, path) == want, path
    got = sorted((f.severity, f.code, f.name) for f in diagnosis.findings)
    assert got == sorted(expected_findings)


def test_missing_facts_are_said_not_guessed() -> None:
    diagnosis = diagnose_text(read("nvidia_smi_h100.txt"), TABLES)
    assert (
        "torch version and build" in diagnosis.diagnosis["missing"]
        and "Python version" in diagnosis.diagnosis["missing"]
    )
    assert {"TRC", "ARC", "PY", "PKG"} <= set(diagnosis.diagnosis["not_judged"])
    assert not any(f.code.startswith(("TRC", "PY", "INS")) for f in diagnosis.findings)


def test_mislabelled_collect_env_fields_are_noted() -> None:
    notes = " ".join(diagnose_text(read("collect_env_2x_rtx5090.txt"), TABLES).diagnosis["notes"])
    assert "'CUDA runtime version: 12.8.61' is the nvcc on PATH" in notes
    assert "lists cuDNN files found on the system, not the cuDNN torch loaded" in notes


def test_facts_carried_by_messages() -> None:
    result = explain("The NVIDIA driver on your system is too old (found version 12040).", TABLES)
    assert result.facts.nvidia.cuda_driver_version == "12.4"
    result = explain(
        "GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        TABLES,
    )
    assert result.facts.nvidia.gpus[0].compute_capability == "12.0"
    assert explain("everything is fine", TABLES) is None


def test_an_envcheck_json_report_round_trips() -> None:
    facts_json = envcheck("probe", "--no-deep", "--json").stdout
    diagnosis = diagnose_text(f"```json\n{facts_json}\n```", TABLES)
    assert diagnosis.diagnosis["read"] == ["envcheck JSON"]
    assert diagnosis.facts.python.version == json.loads(facts_json)["python"]["version"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch for collect_env")
@pytest.mark.slow
def test_this_machines_collect_env_agrees_with_the_probe() -> None:
    text = subprocess.run(
        [sys.executable, "-m", "torch.utils.collect_env"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    diagnosis = diagnose_text(text, TABLES)
    probed = json.loads(envcheck("probe", "--json").stdout)
    f = diagnosis.facts
    assert f.torch.version == probed["torch"]["version"]
    assert f.torch.cuda == probed["torch"]["cuda"]
    assert f.python.version == probed["python"]["version"]
    assert f.system.glibc == probed["system"]["glibc"]
    assert f.system.distro_name == probed["system"]["distro_name"]
    assert f.system.machine == probed["system"]["machine"]
    assert f.torch_runtime.cuda_available == probed["torch_runtime"]["cuda_available"]
    if probed["toolkit"]["nvcc_version"]:
        assert f.toolkit.nvcc_version == probed["toolkit"]["nvcc_version"]
    # and the same judgement on what both see
    check = json.loads(envcheck("check", "--json").stdout)
    seen = {c for c in (x.code for x in diagnosis.findings)}
    assert seen <= {x["code"] for x in check["findings"]} | {"MSG001"}


# --------------------------------------------------------------------------- never raises

_PIECES = [read(name) for name in sorted(EXPECTED)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_arbitrary_text_never_raises(text: str) -> None:
    diagnosis = diagnose_text(text, TABLES)
    assert not [f for f in diagnosis.findings if f.code == "INT001"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_PIECES), st.data())
def test_mangled_reports_never_raise(text: str, data) -> None:
    """Cut, duplicated, CR-damaged and truncated versions of the corpus."""
    lines = text.split("\n")
    start = data.draw(st.integers(0, len(lines)))
    end = data.draw(st.integers(start, len(lines)))
    cut = data.draw(st.integers(0, 40))
    mangled = [
        line[: len(line) - cut] if i % 3 == 0 else line for i, line in enumerate(lines[start:end])
    ]
    noise = data.draw(st.text(max_size=50))
    pasted = "\r\n".join(mangled) + noise + "\n".join(mangled[: data.draw(st.integers(0, 5))])
    diagnosis = diagnose_text(pasted, TABLES)
    assert not [f for f in diagnosis.findings if f.code == "INT001"]


# --------------------------------------------------------------------------- the command line


def test_cli_diagnose_file_and_stdin() -> None:
    out = envcheck("diagnose", str(CORPUS / "collect_env_windows_cpu_wheel.txt"))
    assert out.returncode == 1
    assert "Read from the text: collect_env, 1 error message(s)" in out.stdout
    assert (
        "pip install torch==2.3.1+cu121 torchvision==0.18.1+cu121 "
        "--index-url https://download.pytorch.org/whl/cu121" in out.stdout
    )
    stdin = subprocess.run(
        [sys.executable, "-m", "envcheck", "diagnose", "-", "--json"],
        input=read("nvidia_smi_h100.txt"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(stdin.stdout)
    assert report["read"] == ["nvidia-smi table"] and "Python version" in report["missing"]
    assert [f["code"] for f in report["findings"]] == ["GPU002"]


def test_cli_diagnose_unreadable_text_is_a_usage_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("lorem ipsum\n")
    out = envcheck("diagnose", str(junk))
    assert out.returncode == 2 and "nothing it can read" in out.stdout


def test_cli_explain() -> None:
    out = envcheck("explain", "RuntimeError: operator torchvision::nms does not exist")
    assert out.returncode == 0 and "torchvision does not match torch" in out.stdout
    assert envcheck("explain", "all good").returncode == 1


def test_a_pasted_message_follows_the_finding_that_explains_it(tmp_path: Path) -> None:
    """The message catalogue's `follows`: "no kernel image" in a pasted traceback is the
    symptom of ARC001 read from the same paste, and is shown under it (no test noticed when
    the grouping of pasted messages was dropped)."""
    text = (
        "PyTorch version: 2.5.1+cu124\n"
        "CUDA used to build PyTorch: 12.4\n"
        "OS: Ubuntu 22.04.4 LTS (x86_64)\n"
        "Python version: 3.11.9 (main) [GCC 11.4.0] (64-bit runtime)\n"
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090\n"
        "Nvidia driver version: 570.86.16\n\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    paste = tmp_path / "report.txt"
    paste.write_text(text)
    out = envcheck("diagnose", str(paste), "--json")
    found = {(f["code"], f["name"]): f.get("caused_by") for f in json.loads(out.stdout)["findings"]}
    assert found[("ARC001", "no-kernels-for-gpu")] is None
    assert found[("MSG001", "no-kernel-image")] == "ARC001"
