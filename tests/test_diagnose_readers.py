"""Issue "diagnose real reports": the fragment readers, missing details, exit codes, and
the reporter's own fix (the install command for the pasted machine, the markdown reply)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.diagnose import diagnose_text, read_text
from envcheck.facts import Facts
from envcheck.report.formats import render
from envcheck.tables import load_tables
from tests.runner import envcheck

TABLES = load_tables()
CORPUS = Path(__file__).parent / "diagnose_corpus"


def codes(report) -> set:
    return {f.code for f in report.findings} | {f.name for f in report.findings}


# --------------------------------------------------------------------------- readers


def test_detectron2_collect_env_table() -> None:
    text = """----------------------  ----------------------------------------------------
sys.platform            linux
Python                  3.8.10 (default, Jun  4 2021, 15:09:15) [GCC 7.5.0]
detectron2              0.5 @/home/u/detectron2/detectron2
CUDA compiler           CUDA 11.1
detectron2 arch flags   8.6
PyTorch                 1.9.0+cu111 @/home/u/.local/lib/python3.8/site-packages/torch
PyTorch debug build     False
GPU 0                   NVIDIA GeForce RTX 3090 (arch=8.6)
torchvision             0.10.0+cu111 @/home/u/.local/lib/python3.8/site-packages/torchvision"""
    r = read_text(text, TABLES)
    f = r.facts
    assert (f.torch.version, f.torch.cuda, f.python.version) == ("1.9.0+cu111", "11.1", "3.8.10")
    assert (f.nvidia.gpus[0].name, f.nvidia.gpus[0].compute_capability) == (
        "NVIDIA GeForce RTX 3090",
        "8.6",
    )
    assert f.toolkit.nvcc_version == "11.1" and f.system.os == "Linux"
    assert [(p.name, p.version) for p in f.torch.companions] == [("torchvision", "0.10.0+cu111")]
    assert "detectron2/mmcv collect_env" in r.pieces


def test_transformers_and_lightning_env_dumps() -> None:
    hf = """- `transformers` version: 4.36.2
- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35
- Python version: 3.10.12
- PyTorch version (GPU?): 2.1.2+cu121 (False)"""
    f = read_text(hf, TABLES).facts
    assert (f.torch.version, f.torch.cuda, f.python.version) == ("2.1.2+cu121", "12.1", "3.10.12")
    assert (f.system.os, f.system.machine, f.system.glibc) == ("Linux", "x86_64", "2.35")
    assert f.torch_runtime.cuda_available is False
    lightning = """* CUDA:
\t- GPU:
\t\t- NVIDIA A100-SXM4-80GB
\t- available:         True
\t- version:           11.8
* Packages:
\t- torch:             2.0.1+cu118
* System:
\t- OS:                Linux
\t- processor:         x86_64
\t- python:            3.10.9"""
    f = read_text(lightning, TABLES).facts
    assert f.torch.version == "2.0.1+cu118" and f.python.version == "3.10.9"
    assert f.nvidia.gpus[0].name == "NVIDIA A100-SXM4-80GB"
    assert (f.system.os, f.system.machine) == ("Linux", "x86_64")


def test_collect_env_library_lines_alone_and_old_wordings() -> None:
    f = read_text(
        "[pip3] numpy==1.26.4\n[pip3] torch==2.3.1+cu121\n[pip3] torchvision==0.18.1+cu121", TABLES
    ).facts
    assert (f.torch.version, f.torch.cuda) == ("2.3.1+cu121", "12.1")
    assert [p.name for p in f.torch.companions] == ["torchvision"]
    conda = read_text(
        "[conda] pytorch                   2.1.0           py3.11_cuda12.1_cudnn8.9.2_0    pytorch",
        TABLES,
    ).facts
    assert (conda.torch.version, conda.torch.cuda) == ("2.1.0", "12.1")
    assert read_text("PyTorch version 1.5.0", TABLES).facts.torch.version == "1.5.0"
    wide = read_text(
        "PyTorch version\uff1a2.2.0+cu118\nOS\uff1aUbuntu 22.04.3 LTS (x86_64)", TABLES
    ).facts
    assert (wide.torch.version, wide.system.machine) == ("2.2.0+cu118", "x86_64")


def test_paths_library_path_and_pip_version_list() -> None:
    text = (
        '  File "/opt/venv/lib/python3.11/site-packages/torchvision/io/image.py", line 13\n'
        "$ echo $LD_LIBRARY_PATH\n/usr/local/cuda-12.1/lib64:/opt/other\n"
        "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 "
        "(from versions: 2.2.0, 2.2.1, 2.3.0)\n"
    )
    r = read_text(text, TABLES)
    assert r.facts.python.version == "3.11"
    assert r.extra["packages"] == ["torchvision"]
    assert r.extra["ld_library_path"] == ["/usr/local/cuda-12.1/lib64", "/opt/other"]
    assert r.extra["index_versions"] == ["2.2.0", "2.2.1", "2.3.0"]
    assert any("LD_LIBRARY_PATH names CUDA libraries" in n for n in r.notes)
    assert any("the newest 2.3.0" in n for n in r.notes)


def test_what_the_reporter_typed() -> None:
    text = "System:\nwindows 10 home\nryzen 5800x\nRTX 3080 12gb\n- torch: 2.3.0\npython 3.12.7"
    f = read_text(text, TABLES).facts
    assert f.system.os == "Windows"
    assert (f.nvidia.gpus[0].name, f.nvidia.gpus[0].compute_capability) == (
        "NVIDIA GeForce RTX 3080",
        "8.6",
    )
    assert (f.torch.version, f.python.version) == ("2.3.0", "3.12.7")


def test_two_values_for_one_fact_are_reported() -> None:
    r = read_text("torch==2.1.0\nPyTorch version: 2.3.1\n", TABLES)
    assert r.facts.torch.version == "2.3.1"  # collect_env is read first
    assert any("two values for torch" in n or "two torch versions" in n for n in r.notes)


# --------------------------------------------------------------------------- missing details


def test_a_cut_collect_env_with_a_driver_message_is_no_cpu_advice() -> None:
    text = (
        "PyTorch version: 2.8.0+cu128\nOS: Ubuntu 24.04 LTS\nPython version: 3.12.3\n"
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old "
        "(found version 12020)."
    )
    report = diagnose_text(text, TABLES)
    assert not codes(report) & {"TRC002", "PY003", "TRC001"}
    assert {"TRC002", "PY003"} <= {n.code for n in report.not_run}
    assert report.facts.nvidia.cuda_driver_version == "12.2"
    assert "GPUs: not in the text" in render(report, "text")
    assert report.install is None  # no command for a guessed machine


@pytest.mark.parametrize(
    "text",
    [
        "PyTorch version: 1.5.0\nOS: Ubuntu 18.04.4 LTS\nPython version: 3.7\n",
        "PyTorch version: 2.5.1\nOS: Ubuntu 24.04\nPython version: 3.12.3\n",
    ],
)
def test_an_os_without_architecture_is_no_platform_verdict(text: str) -> None:
    report = diagnose_text(text, TABLES)
    assert "PY003" not in codes(report)
    assert "PY003" in {n.code for n in report.not_run}
    assert "the machine's architecture (x86_64, aarch64)" in report.diagnosis["missing"]


# --------------------------------------------------------------------------- exit codes


def test_nothing_read_is_exit_2_and_ready_false_in_both_forms(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("hello\n")
    text = envcheck("diagnose", str(empty))
    js = envcheck("diagnose", "--json", str(empty))
    assert text.returncode == js.returncode == 2
    doc = json.loads(js.stdout)
    assert doc["ready"] is False and doc["verdict"] == "not judged"


def test_a_newer_report_says_so_and_how_to_upgrade(tmp_path: Path) -> None:
    facts = Facts().to_dict()
    facts["schema_version"] = 99
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"facts": facts}))
    out = envcheck("diagnose", str(path))
    assert out.returncode == 2
    said = out.stdout + out.stderr
    assert "schema_version 99 is newer" in said and "upgrade envcheck" in said
    js = envcheck("diagnose", "--json", str(path))
    assert js.returncode == 2 and "upgrade envcheck" in json.loads(js.stdout)["error"]


# --------------------------------------------------------------------------- the reporter's fix


def test_the_command_is_for_the_reporters_machine() -> None:
    report = diagnose_text((CORPUS / "collect_env_2x_rtx5090.txt").read_text(), TABLES)
    command = report.install.command
    assert command.startswith("pip install torch==") and "/whl/cu12" in command
    assert "torchvision==" in command
    # never the interpreter of the machine envcheck runs on
    assert ".venv" not in command and "python3.11" not in command


def test_markdown_reply() -> None:
    reply = envcheck(
        "diagnose", "--format", "markdown", str(CORPUS / "collect_env_2x_rtx5090.txt")
    ).stdout
    assert reply.startswith("### What envcheck found in this report")
    assert "`ARC001` no-kernels-for-gpu" in reply
    assert "**Command for your machine:**" in reply and "```sh\npip install torch==" in reply
    cut = CORPUS / "real" / "oobabooga__textgen__791.txt"
    reply = envcheck("diagnose", "--format", "markdown", str(cut)).stdout
    assert "**Install command:** not resolved: the report does not say" in reply
    assert "python -m torch.utils.collect_env" in reply and "nvidia-smi" in reply


def test_json_and_format_together_is_a_usage_error() -> None:
    out = envcheck("diagnose", "--json", "--format", "markdown", str(CORPUS / "errors_only.txt"))
    assert out.returncode == 2 and "give one" in out.stderr


def test_each_key_fact_says_where_it_was_read() -> None:
    text = (
        "PyTorch version: 2.8.0+cu128\nPython version: 3.12.3 (main) (64-bit runtime)\n"
        "NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4\n"
        "Cuda compilation tools, release 12.4, V12.4.131\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\n"
    )
    where = diagnose_text(text, TABLES).diagnosis["read_from"]
    assert where["torch.version"] == where["python.version"] == "collect_env"
    assert where["nvidia.driver_version"] == "nvidia-smi table"
    assert where["toolkit.nvcc_version"] == "nvcc -V"
    assert where["nvidia.gpus"] == "mentions"  # the GPU the error names, read as a mention


def test_proc_driver_nvidia_version() -> None:
    text = (
        "$ cat /proc/driver/nvidia/version\n"
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)"
    )
    r = read_text(text, TABLES)
    assert r.facts.nvidia.driver_version == "550.90.07"
    assert (r.facts.system.os, r.facts.system.machine) == ("Linux", "x86_64")
    assert "/proc/driver/nvidia/version" in r.pieces


def test_torch_config_show_and_detectron2_cuda() -> None:
    text = """sys.platform            linux
detectron2              0.1 @/home/u/detectron2/detectron2
Detectron2 CUDA Compiler  10.1
PyTorch                 1.4.0+cu92 @/home/u/lib/python3.7/site-packages/torch
PyTorch built with:
  - GCC 7.3
  - CUDA Runtime 9.2
  - NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;-gencode;arch=compute_61,code=sm_61;-gencode;arch=compute_70,code=compute_70
  - CuDNN 7.6.3
"""
    r = read_text(text, TABLES)
    assert r.facts.torch.cuda == "9.2"
    assert [str(a) for a in r.facts.torch_runtime.arch_list] == ["sm_37", "sm_61", "compute_70"]
    assert any("detectron2 was built with CUDA 10.1 but torch with CUDA 9.2" in n for n in r.notes)
    assert "torch.__config__.show()" in r.pieces


def test_nccl_debug_log() -> None:
    text = (
        "omega:18302:18445 [0] NCCL INFO cudaDriverVersion 12060\n"
        "NCCL version 2.21.5+cuda12.4\n"
        "host:1:2 [3] NCCL INFO Channel 13/0 : 3[201d0] -> 4[901c0] via P2P/IPC/read\n"
    )
    report = diagnose_text(text, TABLES)
    assert report.facts.torch_runtime.nccl_version == "2.21.5"
    assert report.facts.nvidia.cuda_driver_version == "12.6"
    p2p = [f for f in report.findings if f.name == "nccl-p2p-in-use"]
    assert p2p and p2p[0].severity.value == "info" and "NCCL_P2P_DISABLE=1" in p2p[0].fix


def test_numbers_too_long_to_convert_are_not_versions() -> None:
    """Python refuses int() of 4300+ digits (ValueError, not InvalidVersion): found by the
    mangled-reports fuzz on Python 3.13."""
    text = (
        "PyTorch version: 1.8.1+cu111\n"
        "Python platform: Linux-5.15.0-122-generic-x86_64-with-glibc2.35\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "Python version: " + "0" * 4400 + "3.10.12 (main) (64-bit runtime)\n"
        "CUDA used to build PyTorch: " + "1" * 4400 + ".1\n"
    )
    report = diagnose_text(text, TABLES)
    assert report.facts.python.version == ""
    assert not [f for f in report.findings if f.code == "INT001"]


def test_detectron2_rows_read_as_every_line_matched(monkeypatch: pytest.MonkeyPatch) -> None:
    """_d2_rows passes over lines whose first word no row it reads starts with: the rows it
    reads and the GPU rows are those of matching every line (every name starts with ""),
    on tricky lines (leading tabs and other white space, mixed case, names that only start
    alike, a Kelvin sign)."""
    from envcheck.diagnose import detectron2

    lines = [
        "\tPyTorch             2.1.0 @/x",
        "\u2003PYTHON  3.10.12",
        "Python:   3.9",
        "GPU 0  Tesla V100-SXM2-16GB (arch=7.0)",
        "GPU 0,1  Tesla V100-SXM2-16GB (arch=7.0)",
        "  GPU1\tA100",
        "gpu 2  lower-case gpu",
        "  NVCC                Cuda compilation tools, release 11.8, V11.8.89",
        "detectron2 arch flags   sm_70",
        "Driver version  535.54",
        "\u212aernel  not a row read",
        "torchvision   0.16.0 @/y",
        "torch         2.1.0",
        "sys.platform    linux",
        "PyTorchLightning  2.0",
        "CUDA compiler  CUDA 11.8",
        "other row  value",
    ]
    rows, gpus = detectron2._d2_rows(lines)
    monkeypatch.setattr(detectron2, "_D2_NAMES", ("",))
    every_rows, every_gpus = detectron2._d2_rows(lines)
    assert gpus == every_gpus and len(gpus) == 2
    for name in ("detectron2 arch flags", "pytorch", "python", "nvcc", "driver version"):
        assert rows[name] == every_rows[name]
    for name in ("torchvision", "sys.platform", "cuda compiler", "mmcv", "detectron2"):
        assert rows.get(name) == every_rows.get(name)
