"""The terminal report of Facts: what a person sees for realistic machines."""

from __future__ import annotations

from pathlib import Path

from envcheck.facts import (
    CudaDeviceFacts,
    Facts,
    PackageFacts,
    SystemFacts,
    TorchFacts,
    TorchRuntimeFacts,
)
from envcheck.probes.nvidia import probe_nvidia
from envcheck.report.facts_text import render_facts
from envcheck.report.style import size, use_color
from envcheck.values import parse_gpu_arch
from tests.fake_nvml import MACHINES, make_nvml


def machine(tmp_path: Path, name: str) -> Facts:
    (tmp_path / "dev").mkdir(exist_ok=True)
    return Facts(
        envcheck_version="0.1.0",
        collected_at="2026-12-02T10:00:00+00:00",
        system=SystemFacts(os="Linux", machine="x86_64", distro_name="Ubuntu 22.04.4 LTS"),
        nvidia=probe_nvidia(tmp_path, make_nvml(MACHINES[name])),
    )


def test_gpu_server(tmp_path: Path) -> None:
    facts = machine(tmp_path, "8xH100-SXM")
    facts.torch = TorchFacts(
        installed=True,
        version="2.7.1+cu128",
        cuda="12.8",
        installer="pip",
        location="/opt/venv/lib/python3.12/site-packages/torch",
        companions=[PackageFacts("nvidia-nccl-cu12", "2.26.2")],
    )
    facts.torch_runtime = TorchRuntimeFacts(
        status="ok",
        duration_s=2.5,
        cuda_available=True,
        device_count=8,
        devices=[CudaDeviceFacts(0, "NVIDIA H100 80GB HBM3", "9.0", 85520809984, 132)],
        arch_list=[parse_gpu_arch(a) for a in ["sm_80", "sm_90", "sm_100", "sm_120"]],
        nccl_version="2.26.2",
        cudnn_version=90701,
        bf16_supported=True,
        distributed_backends=["gloo", "nccl"],
    )
    text = render_facts(facts)
    assert "envcheck 0.1.0 probe  2026-12-02 10:00:00 UTC" in text
    assert "550.54.15 (from nvml), supports CUDA 12.4" in text
    assert (
        "GPU 7       NVIDIA H100 80GB HBM3, sm_90, 79.6 GiB (1.0 MiB used), 38 C, ECC on, persistence on"
        in text
    )
    assert "2.7.1+cu128 (CUDA 12.8 build, installed by pip)" in text
    assert "nvidia-nccl-cu12 2.26.2" in text
    assert "ok in 2.50 s, CUDA available, 8 device(s)" in text
    assert "Arch list   sm_80 sm_90 sm_100 sm_120" in text
    assert "cuDNN 90701, NCCL 2.26.2, bf16" in text
    assert "\x1b[" not in text


def test_sick_and_lost_gpus_stand_out(tmp_path: Path) -> None:
    lost = render_facts(machine(tmp_path, "lost-GPU"))
    assert "GPU 1       unknown GPU: LOST (gpu_is_lost: GPU is lost)" in lost
    sick = render_facts(machine(tmp_path, "sick-H100"))
    assert "3 uncorrectable ECC errors" in sick and "row remapping failed" in sick


def test_nvml_failure_is_explained(tmp_path: Path) -> None:
    text = render_facts(machine(tmp_path, "version-mismatch"))
    assert "Driver/library version mismatch" in text
    assert "GPUs        none seen" in text


def test_crashed_import_is_shown_with_its_reason(tmp_path: Path) -> None:
    facts = machine(tmp_path, "library-missing")
    facts.torch = TorchFacts(installed=True, version="2.8.0+cu128", cuda="12.8")
    facts.torch_runtime = TorchRuntimeFacts(
        status="crashed", duration_s=0.8, error="killed by SIGSEGV during `import torch`"
    )
    text = render_facts(facts, color=True)
    assert "crashed after 0.80 s: killed by SIGSEGV during `import torch`" in text
    assert "\x1b[31m" in text  # red


def test_duplicate_installs_are_listed() -> None:
    facts = Facts(
        torch=TorchFacts(
            installed=True,
            version="2.3.1",
            installs=[
                PackageFacts("torch", "2.3.1", "/home/u/.local/lib/python3.11/site-packages"),
                PackageFacts("torch", "2.7.1", "/opt/venv/lib/python3.11/site-packages"),
            ],
        )
    )
    assert "2 copies: 2.3.1 in /home/u/.local" in render_facts(facts)


def test_sizes() -> None:
    assert [size(v) for v in (None, 512, 64 * 1024**2, 81559 * 1024**2)] == [
        "?",
        "512 B",
        "64.0 MiB",
        "79.6 GiB",
    ]


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_policy() -> None:
    assert use_color(_Stream(True), {}) is True
    assert use_color(_Stream(False), {}) is False
    assert use_color(_Stream(True), {"NO_COLOR": "1"}) is False
    assert use_color(_Stream(False), {"FORCE_COLOR": "1"}) is True
    assert use_color(_Stream(True), {"NO_COLOR": ""}) is True  # empty NO_COLOR is unset


def test_hint_when_another_venv_is_active() -> None:
    """envcheck run from pipx/uvx describes its own env: say which one the user meant."""
    from envcheck.facts import PythonFacts

    facts = Facts(
        python=PythonFacts(
            version="3.12.3",
            executable="/home/u/.local/pipx/venvs/torch-envcheck/bin/python",
            prefix="/home/u/.local/pipx/venvs/torch-envcheck",
            env_kind="venv",
        ),
        environment={"VIRTUAL_ENV": "/work/project/.venv"},
    )
    assert "envcheck probe --python /work/project/.venv/bin/python" in render_facts(facts)
    facts.environment["VIRTUAL_ENV"] = facts.python.prefix
    assert "--python" not in render_facts(facts)


def test_a_long_variable_is_cut_in_the_text_and_kept_whole_in_json() -> None:
    """A CUDA image's NVIDIA_REQUIRE_CUDA (2,165 characters on a real H200 container) filled
    30 lines of the probe; the text shows its start and its length, the JSON all of it."""
    import json

    from envcheck.facts import Facts

    env = json.loads((Path(__file__).parent / "data" / "cuda_image_environment.json").read_text())
    facts = Facts()
    facts.environment = dict(env)
    text = render_facts(facts, width=100)
    block = text[text.rindex("Environment") :]
    assert "CUDA_VERSION=13.0.2" in block
    head = env["NVIDIA_REQUIRE_CUDA"][:40]
    assert head in block and "(2165 characters; --json has all)" in block
    assert len(block.splitlines()) < 8, block
    assert Facts.from_json(facts.to_json()).environment == env
