"""The deep probe: a real child process importing real (or hostile) torches."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from envcheck.probes.torch_deep import parse_records, probe_torch_deep
from envcheck.values import Arch
from tests.faketorch import make_fake_torch

HAS_TORCH = importlib.util.find_spec("torch") is not None


def env_with(path: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(path)
    env.update(extra)
    return env


def children_of_this_process() -> set:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed in this environment")
def test_real_cpu_torch() -> None:
    facts = probe_torch_deep(sys.executable, timeout=120)
    assert facts.status == "ok", facts.error
    assert facts.stage == "done" and facts.returncode == 0 and facts.signal is None
    assert facts.version == importlib.metadata.version("torch")
    assert facts.file and facts.file.endswith(os.path.join("torch", "__init__.py"))
    assert "gloo" in facts.distributed_backends
    assert facts.num_threads and facts.num_threads >= 1
    assert facts.duration_s and 0 < facts.duration_s < 120
    if facts.cuda is None:  # the CPU build installed here
        assert facts.cuda_available is False and facts.device_count == 0
        assert facts.arch_list == [] and facts.devices == []


def test_import_error_from_a_missing_library(tmp_path: Path) -> None:
    facts = probe_torch_deep(
        sys.executable, 30, env_with(make_fake_torch(tmp_path, "missing_cudnn"))
    )
    assert facts.status == "import_failed"
    assert facts.stage == "import"
    assert facts.error == (
        "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    )


def test_segfault_during_import_is_recorded(tmp_path: Path) -> None:
    facts = probe_torch_deep(sys.executable, 30, env_with(make_fake_torch(tmp_path, "segfault")))
    assert facts.status == "crashed"
    assert facts.signal == "SIGSEGV"
    assert facts.error.startswith("killed by SIGSEGV during `import torch`")
    assert "Segmentation fault" in facts.error  # faulthandler's report, from stderr


def test_hang_is_killed_on_time(tmp_path: Path) -> None:
    before = children_of_this_process()
    start = time.monotonic()
    facts = probe_torch_deep(sys.executable, 2.0, env_with(make_fake_torch(tmp_path, "hang")))
    elapsed = time.monotonic() - start
    assert facts.status == "timed_out"
    assert facts.error == "timed out after 2 s during `import torch`; the child was killed"
    assert facts.timeout_s == 2.0
    assert elapsed < 15
    assert children_of_this_process() <= before


@pytest.mark.slow
def test_hang_leaves_no_grandchild_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    env = env_with(
        make_fake_torch(tmp_path, "hang_with_grandchild"), GRANDCHILD_PID_FILE=str(pid_file)
    )
    facts = probe_torch_deep(sys.executable, 3.0, env)
    assert facts.status == "timed_out"
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"grandchild {grandchild} is still running after the timeout")


def test_exit_during_import(tmp_path: Path) -> None:
    facts = probe_torch_deep(sys.executable, 30, env_with(make_fake_torch(tmp_path, "exit")))
    assert facts.status == "crashed" and facts.returncode == 3
    assert facts.error.startswith("exited with code 3 during `import torch`")


@pytest.mark.slow
def test_hang_in_cuda_init_keeps_what_was_learnt(tmp_path: Path) -> None:
    facts = probe_torch_deep(
        sys.executable, 3.0, env_with(make_fake_torch(tmp_path, "hang_in_cuda"))
    )
    assert facts.status == "timed_out" and facts.stage == "cuda"
    assert "during torch.cuda.is_available()" in facts.error
    assert facts.version == "2.8.0+cu128" and facts.cuda == "12.8"


def test_cuda_unavailable_with_the_reason_torch_gave(tmp_path: Path) -> None:
    facts = probe_torch_deep(sys.executable, 30, env_with(make_fake_torch(tmp_path, "old_driver")))
    assert facts.status == "ok"
    assert facts.cuda_available is False
    assert facts.cuda_warnings == [
        "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver."
    ]
    assert facts.device_count == 0


def test_gpu_machine_as_torch_reports_it(tmp_path: Path) -> None:
    facts = probe_torch_deep(sys.executable, 30, env_with(make_fake_torch(tmp_path, "two_gpus")))
    assert facts.status == "ok", facts.error
    assert facts.cuda_available is True and facts.device_count == 2
    assert [(d.name, d.capability) for d in facts.devices] == [
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
    ]
    assert facts.arch_list[-1] == Arch.parse("sm_120")
    assert facts.nccl_version == "2.27.3" and facts.cudnn_version == 91002
    assert facts.bf16_supported is True
    assert facts.distributed_backends == ["gloo", "nccl"]
    assert facts.num_threads == 8 and facts.cpu_capability == "AVX512"


def test_noise_on_stdout_is_ignored(tmp_path: Path) -> None:
    facts = probe_torch_deep(sys.executable, 30, env_with(make_fake_torch(tmp_path, "noisy")))
    assert facts.status == "ok" and facts.version == "2.8.0+cpu"


def test_interpreter_without_torch(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    facts = probe_torch_deep(str(python), 30, env)
    assert facts.status == "not_installed"
    assert facts.error == "ModuleNotFoundError: No module named 'torch'"


def test_missing_interpreter_is_an_error_not_a_crash(tmp_path: Path) -> None:
    facts = probe_torch_deep(str(tmp_path / "no-such-python"), 30)
    assert facts.status == "error"
    assert "could not start" in facts.error


def test_records_survive_garbage_between_them() -> None:
    out = (
        'junk\n@@envcheck@@ {"stage": "import"}\nmore junk\n'
        '@@envcheck@@ {broken\n@@envcheck@@ [1, 2]\n@@envcheck@@ {"stage": "cuda", "version": "2.8.0"}\n'
    )
    assert parse_records(out) == {"stage": "cuda", "version": "2.8.0"}
