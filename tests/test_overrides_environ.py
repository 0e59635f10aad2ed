"""Environment overrides of facts, and the recorded environment without secrets."""

from __future__ import annotations

import pytest

from envcheck.facts import Facts, GpuFacts
from envcheck.probes.environ import probe_environ, redact_value
from envcheck.probes.overrides import (
    OverrideError,
    apply_overrides,
    parse_gpus,
    parse_overrides,
    parse_size,
)
from envcheck.values import ComputeCapability

GiB = 1024**3


def overridden(environ: dict) -> Facts:
    facts = Facts()
    apply_overrides(facts, parse_overrides(environ))
    return facts


def test_driver_and_cuda_aliases() -> None:
    facts = overridden(
        {"ENVCHECK_DRIVER_VERSION": "535.104.05", "ENVCHECK_CUDA_DRIVER_VERSION": "12.2"}
    )
    assert facts.nvidia.driver_version == "535.104.05"
    assert facts.nvidia.driver_version_source == "override"
    assert facts.nvidia.cuda_driver_version == "12.2"
    assert facts.overrides == ["nvidia.cuda_driver_version", "nvidia.driver_version"]


def test_gpus_compact_form() -> None:
    gpus = parse_gpus("NVIDIA GeForce RTX 5090:12.0:32GiB; NVIDIA A100-SXM4-80GB:8.0")
    assert gpus == [
        GpuFacts(
            index=0,
            name="NVIDIA GeForce RTX 5090",
            compute_capability=ComputeCapability.parse("12.0"),
            memory_total=32 * GiB,
        ),
        GpuFacts(
            index=1, name="NVIDIA A100-SXM4-80GB", compute_capability=ComputeCapability.parse("8.0")
        ),
    ]


def test_gpus_json_and_none() -> None:
    assert parse_gpus("none") == [] and parse_gpus("0") == []
    (gpu,) = parse_gpus(
        '[{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}]'
    )
    assert gpu.name == "Tesla V100-SXM2-16GB" and gpu.compute_capability == "7.0"


def test_generic_fact_overrides_with_types() -> None:
    facts = overridden(
        {
            "ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB",
            "ENVCHECK_FACT_PYTHON_VERSION": "3.13.1",
            "ENVCHECK_FACT_SYSTEM_WSL": "2",
            "ENVCHECK_FACT_TORCH_CUDA": "12.8",
            "ENVCHECK_FACT_TORCH_RUNTIME_CUDA_AVAILABLE": "false",
            "ENVCHECK_FACT_SYSTEM_CONTAINER": "null",
            "UNRELATED": "x",
        }
    )
    assert facts.system.shm_total == 64 * 1024**2
    assert facts.python.version == "3.13.1"
    assert facts.system.wsl == 2
    assert facts.torch.cuda == "12.8"  # stays a string, not the float 12.8
    assert facts.torch_runtime.cuda_available is False
    assert facts.system.container is None
    assert len(facts.overrides) == 6


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"ENVCHECK_DRIVER_VERSION": "latest"}, "ENVCHECK_DRIVER_VERSION: expected a version"),
        ({"ENVCHECK_GPUS": "RTX 5090"}, "expected NAME:CAPABILITY[:MEMORY]"),
        ({"ENVCHECK_GPUS": "[{broken"}, "ENVCHECK_GPUS: not JSON"),
        ({"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "lots"}, "expected an integer"),
        ({"ENVCHECK_FACT_SYSTEM_NO_SUCH": "1"}, "system has no field 'no_such'"),
        ({"ENVCHECK_FACT_GALAXY_SIZE": "1"}, "the section must be one of"),
        ({"ENVCHECK_FACT_NVIDIA_GPUS": '[{"index": "zero"}]'}, "expected an integer"),
    ],
)
def test_bad_overrides_name_the_variable(environ: dict, message: str) -> None:
    with pytest.raises(OverrideError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_overrides(environ)


@pytest.mark.parametrize(
    ("text", "value"),
    [("64MiB", 64 * 1024**2), ("24GB", 24 * 10**9), ("1.5GiB", int(1.5 * GiB)), ("512", 512)],
)
def test_sizes(text: str, value: int) -> None:
    assert parse_size(text) == value


def test_environment_allowlist_and_secrets() -> None:
    environ = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_HCA": "mlx5",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "OMP_NUM_THREADS": "8",
        "HF_TOKEN": "hf_abcdefghijklmnop",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI",
        "TORCH_HUB_TOKEN": "tok",  # allow-listed prefix, secret-looking name: dropped
        "PIP_EXTRA_INDEX_URL": "https://user:s3cret@pypi.example.org/simple",
        "HOME": "/home/alice",
        "PATH": "/usr/bin",
    }
    recorded = probe_environ(environ)
    assert recorded == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_HCA": "mlx5",
        "OMP_NUM_THREADS": "8",
        "PIP_EXTRA_INDEX_URL": "https://***@pypi.example.org/simple",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    }
    assert "s3cret" not in repr(recorded) and "hf_" not in repr(recorded)


def test_gpu_uuids_in_device_lists_are_redacted() -> None:
    value = "GPU-5a1e0c7f-3b1d-4c2e-9f8a-000000000000,MIG-9e1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
    assert redact_value(value) == "GPU-redacted,MIG-redacted"
    assert redact_value(value, show_ids=True) == value


def test_overriding_only_the_torch_version_simulates_one_consistent_install() -> None:
    """A simulated torch must not be judged against the real torch's files (INS002)."""
    from tests.runner import envcheck

    run = envcheck("check", "--no-deep", env={"ENVCHECK_FACT_TORCH_VERSION": "2.5.1+cu124"})
    assert "INS002" not in run.stdout, run.stdout
    assert "torch 2.5.1+cu124" in run.stdout.splitlines()[0]
    facts = overridden({"ENVCHECK_FACT_TORCH_VERSION": "2.5.1+cu124"})
    assert (facts.torch.installed, facts.torch.dist_version) == (True, "2.5.1+cu124")
    both = overridden(
        {"ENVCHECK_FACT_TORCH_VERSION": "2.5.1+cu124", "ENVCHECK_FACT_TORCH_DIST_VERSION": "2.13.0"}
    )
    assert both.torch.dist_version == "2.13.0"  # said explicitly: a mixed install, simulated


def test_overridden_fields_are_listed_sorted_once() -> None:
    """ENVCHECK_GPUS sorts after ENVCHECK_FACT_*, but the fields are listed by name, and
    the two spellings of one field once."""
    facts = overridden(
        {
            "ENVCHECK_GPUS": "NVIDIA A100-SXM4-80GB:8.0",
            "ENVCHECK_FACT_NVIDIA_GPUS": "[]",
            "ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB",
            "ENVCHECK_FACT_AMD_GPUS": "[]",
        }
    )
    assert facts.overrides == ["amd.gpus", "nvidia.gpus", "system.shm_total"]
