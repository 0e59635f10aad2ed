"""The NVIDIA probe against realistic machines, NVML faked at the pynvml boundary."""

from __future__ import annotations

import time
from pathlib import Path

import pynvml
import pytest

from envcheck.probes.nvidia import cuda_version_from_int, probe_nvidia
from tests.fake_nvml import MACHINES, MiB, make_nvml


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """A filesystem root with no NVIDIA files at all."""
    (tmp_path / "dev").mkdir()
    return tmp_path


def driver_root(tmp_path: Path, version: str, open_module: bool = False) -> Path:
    flavour = "Open Kernel Module for x86_64" if open_module else "Kernel Module"
    write(tmp_path, "sys/module/nvidia/version", version + "\n")
    write(
        tmp_path,
        "proc/driver/nvidia/version",
        f"NVRM version: NVIDIA UNIX x86_64 {flavour}  {version}  Release Build  (dvs-builder)\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
    )
    for node in ("nvidia0", "nvidiactl", "nvidia-uvm"):
        write(tmp_path, f"dev/{node}", "")
    return tmp_path


def test_eight_h100_server(tmp_path: Path) -> None:
    root = driver_root(tmp_path, "550.54.15")
    facts = probe_nvidia(root, make_nvml(MACHINES["8xH100-SXM"]))
    assert facts.nvml.ok and facts.nvml.error is None
    assert facts.driver_version == "550.54.15" and facts.driver_version_source == "sysfs"
    assert facts.cuda_driver_version == "12.4"
    assert facts.kernel_module == "proprietary"
    assert facts.device_nodes == ["/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"]
    assert [g.index for g in facts.gpus] == list(range(8))
    gpu = facts.gpus[3]
    assert gpu.name == "NVIDIA H100 80GB HBM3"
    assert gpu.compute_capability == "9.0"
    assert gpu.memory_total == 81559 * MiB and gpu.memory_used == 1 * MiB
    assert gpu.pci_bus_id == "00000000:48:00.0"
    assert gpu.ecc_mode is True and gpu.ecc_uncorrected_volatile == 0
    assert gpu.mig_mode is False and gpu.mig_devices is None
    assert gpu.row_remap_pending is False and gpu.row_remap_failure is False
    assert gpu.retired_pages_pending is None  # not supported on H100: left unknown
    assert gpu.temperature_c == 34 and gpu.temperature_slowdown_c == 87
    assert gpu.persistence_mode is True
    assert gpu.status == "ok" and gpu.errors == {}


def test_uuids_are_redacted_unless_asked(bare: Path) -> None:
    nvml = make_nvml(MACHINES["8xH100-SXM"])
    hidden = probe_nvidia(bare, nvml)
    assert {g.uuid for g in hidden.gpus} == {f"GPU-redacted-{i}" for i in range(8)}
    shown = probe_nvidia(bare, make_nvml(MACHINES["8xH100-SXM"]), show_ids=True)
    assert shown.gpus[0].uuid == "GPU-5a1e0c7f-3b1d-4c2e-9f8a-000000000000"


def test_laptop_with_old_driver_and_no_server_features(bare: Path) -> None:
    facts = probe_nvidia(bare, make_nvml(MACHINES["laptop-RTX3060"]))
    assert facts.driver_version == "470.82.01" and facts.driver_version_source == "nvml"
    assert facts.cuda_driver_version == "11.4"
    (gpu,) = facts.gpus
    assert gpu.name == "NVIDIA GeForce RTX 3060 Laptop GPU" and gpu.compute_capability == "8.6"
    # Features a GeForce does not have are unknown (None), not errors.
    assert gpu.ecc_mode is None and gpu.mig_mode is None and gpu.row_remap_failure is None
    assert gpu.persistence_mode is False
    assert gpu.status == "ok" and gpu.errors == {}


def test_a100_in_mig_mode_counts_instances(bare: Path) -> None:
    facts = probe_nvidia(bare, make_nvml(MACHINES["A100-MIG"]))
    (gpu,) = facts.gpus
    assert gpu.mig_mode is True and gpu.mig_devices == 2
    assert facts.cuda_driver_version == "12.2"


def test_lost_gpu_is_recorded_and_the_others_still_read(bare: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls"
    facts = probe_nvidia(bare, make_nvml(dict(MACHINES["lost-GPU"], log=str(log))))
    assert facts.nvml.ok
    ok, lost = facts.gpus
    assert ok.status == "ok" and ok.name == "NVIDIA H100 80GB HBM3"
    assert lost.status == "lost" and lost.index == 1
    assert lost.errors == {"name": "gpu_is_lost: GPU is lost"}
    # Once lost, no further queries are sent to that GPU.
    assert log.read_text().splitlines().count("memory") == 1


def test_unhealthy_memory_is_reported(bare: Path) -> None:
    (gpu,) = probe_nvidia(bare, make_nvml(MACHINES["sick-H100"])).gpus
    assert gpu.ecc_uncorrected_volatile == 3
    assert gpu.row_remap_pending is True and gpu.row_remap_failure is True


def test_unknown_error_on_a_gpu(bare: Path) -> None:
    (gpu,) = probe_nvidia(bare, make_nvml(MACHINES["unknown-error"])).gpus
    assert gpu.status == "error" and gpu.name is None
    assert gpu.errors == {"handle": "unknown: Unknown Error"}


@pytest.mark.parametrize(
    ("machine", "error", "message"),
    [
        ("library-missing", "library_not_found", "NVML Shared Library Not Found"),
        (
            "version-mismatch",
            "lib_rm_version_mismatch",
            "RM has detected an NVML/RM version mismatch.",
        ),
        ("driver-not-loaded", "driver_not_loaded", "Driver Not Loaded"),
        ("no-permission", "no_permission", "Insufficient Permissions"),
    ],
)
def test_nvml_init_failures_are_recorded(bare: Path, machine: str, error: str, message: str):
    facts = probe_nvidia(bare, make_nvml(MACHINES[machine]))
    assert facts.nvml.ok is False
    assert (facts.nvml.error, facts.nvml.message) == (error, message)
    assert facts.gpus == [] and facts.cuda_driver_version is None


def test_version_mismatch_still_reports_the_kernel_driver(tmp_path: Path) -> None:
    """After an upgrade without reboot NVML fails, but the module file still tells."""
    root = driver_root(tmp_path, "550.90.07", open_module=True)
    facts = probe_nvidia(root, make_nvml(MACHINES["version-mismatch"]))
    assert facts.nvml.error == "lib_rm_version_mismatch"
    assert facts.driver_version == "550.90.07" and facts.driver_version_source == "sysfs"
    assert facts.kernel_module == "open"


def test_procfs_is_the_fallback_driver_source(tmp_path: Path) -> None:
    write(
        tmp_path,
        "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build\n",
    )
    facts = probe_nvidia(tmp_path, make_nvml(MACHINES["library-missing"]))
    assert facts.driver_version == "570.86.15" and facts.driver_version_source == "procfs"
    assert facts.kernel_module == "open"
    assert facts.device_nodes == []


def test_a_hung_driver_times_out_instead_of_hanging(bare: Path) -> None:
    start = time.monotonic()
    facts = probe_nvidia(bare, make_nvml(MACHINES["hung-driver"]), timeout=0.5)
    elapsed = time.monotonic() - start
    assert facts.nvml.ok is False and facts.nvml.error == "timeout"
    assert "0.5 s" in (facts.nvml.message or "")
    assert elapsed < 10  # bounded by the timeout, not by the 30 s hang


def test_real_pynvml_on_this_machine_never_raises() -> None:
    """Whatever this machine has (here: no driver), the real binding is handled."""
    facts = probe_nvidia()
    if facts.nvml.ok:
        assert facts.driver_version
    else:
        assert facts.nvml.error and facts.nvml.message


def test_bytes_from_old_bindings_are_decoded(bare: Path) -> None:
    machine = dict(MACHINES["laptop-RTX3060"], driver=b"470.82.01")
    nvml = make_nvml(machine)
    original = nvml.nvmlDeviceGetName
    nvml.nvmlDeviceGetName = lambda h: original(h).encode()
    facts = probe_nvidia(bare, nvml)
    assert facts.driver_version == "470.82.01"
    assert facts.gpus[0].name == "NVIDIA GeForce RTX 3060 Laptop GPU"


@pytest.mark.parametrize(
    ("value", "text"), [(12040, "12.4"), (11080, "11.8"), (13000, "13.0"), (12090, "12.9")]
)
def test_cuda_version_encoding(value: int, text: str) -> None:
    assert cuda_version_from_int(value) == text


def test_error_names_cover_the_codes_users_hit() -> None:
    from envcheck.nvml_errors import error_names

    names = error_names(pynvml)
    assert names[pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH] == "lib_rm_version_mismatch"
    assert names[pynvml.NVML_ERROR_GPU_IS_LOST] == "gpu_is_lost"
    assert names[pynvml.NVML_ERROR_LIBRARY_NOT_FOUND] == "library_not_found"


def test_an_nvml_that_answers_in_bytes_is_read_as_text(bare: Path) -> None:
    """pynvml before 11.5 returned bytes for names and versions: the Facts hold text."""
    machine = dict(MACHINES["8xH100-SXM"], bytes=True)
    facts = probe_nvidia(bare, make_nvml(machine), show_ids=True)
    assert facts.nvml.ok
    assert facts.driver_version == "550.54.15"
    assert facts.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert facts.gpus[0].uuid == "GPU-5a1e0c7f-3b1d-4c2e-9f8a-000000000000"
    assert all(isinstance(g.name, str) for g in facts.gpus)


def test_nvmls_plain_answer_says_when_nvml_did_not_answer() -> None:
    """The healthcheck decides from the child's plain answer where NVML did not start: an
    answer without an NVML status that says ok is no answer, never "no GPU, healthy"."""
    from envcheck.probes.nvml_child import failed, failure

    assert failure({"nvml": {"ok": True, "error": None}, "gpus": []}) is None
    said = failure(failed("library_not_found", "NVML Shared Library Not Found"))
    assert said == {
        "ok": False,
        "error": "library_not_found",
        "message": "NVML Shared Library Not Found",
    }
    for broken in ({"gpus": []}, {"nvml": "ok"}, {"nvml": {"ok": "true"}}):
        status = failure(broken)
        assert status is not None and status.get("error") in ("no_answer", None), broken
    assert failure({"gpus": []}) == {
        "error": "no_answer",
        "message": "NVML's answer could not be read: no NVML status",
    }
