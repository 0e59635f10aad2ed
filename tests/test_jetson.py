"""NVIDIA Jetson boards: found from the system or from their GPU, and never given a wheel
built for data-centre ARM (PyTorch's aarch64 CUDA wheels are SBSA builds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, resolve
from envcheck.install.jetson import board, jetson_only
from envcheck.probes.system import detect_jetson, l4t_release
from envcheck.values import ComputeCapability
from tests.fixtures import TABLES, report_of

PROFILES = Path(__file__).parent / "profiles"

JETSON_ORIN = {
    "ENVCHECK_FACT_SYSTEM_JETSON": "NVIDIA Jetson AGX Orin Developer Kit",
    "ENVCHECK_FACT_SYSTEM_MACHINE": "aarch64",
    "ENVCHECK_DRIVER_VERSION": "540.4.0",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.6",
    "ENVCHECK_GPUS": "Orin (nvgpu):8.7:64GiB",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_CUDA": "13.0",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
}


def _fixes(stdout: str) -> str:
    return " ".join(stdout.split())


def arm_box(jetson: str | None = "NVIDIA Jetson AGX Orin Developer Kit") -> Facts:
    facts = Facts.from_json((PROFILES / "docker-small-shm.json").read_text())
    facts.system.machine = "aarch64"
    facts.system.jetson = jetson
    return facts


def with_gpu(facts: Facts, name: str, cc: str) -> Facts:
    facts.nvidia.gpus = [GpuFacts(index=0, name=name, compute_capability=ComputeCapability.parse(cc))]
    return facts


def test_jetson_is_detected_from_the_device_tree_or_l4t_release(tmp_path: Path) -> None:
    assert detect_jetson(tmp_path) is None
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/nv_tegra_release").write_text(
        "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\n"
    )
    assert detect_jetson(tmp_path) == "L4T R36 (release), REVISION: 4.0"
    (tmp_path / "proc/device-tree").mkdir(parents=True)
    (tmp_path / "proc/device-tree/model").write_text("NVIDIA Jetson Orin Nano Developer Kit\x00")
    assert detect_jetson(tmp_path) == "NVIDIA Jetson Orin Nano Developer Kit"


@pytest.mark.parametrize(
    "text, release",
    [
        ("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64", "36.4.3"),
        ("# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64", "35.4.1"),
        ("# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref, EABI: aarch64", "32.7.1"),
        ("R38 (release), REVISION: 2.0", "38.2.0"),
        ("# R36 (release), REVISION: x", None),
        ("Ubuntu 22.04", None),
        ("", None),
    ],
)
def test_the_l4t_release_is_read_as_a_version(text: str, release: str | None) -> None:
    assert l4t_release(text) == release


def test_the_probe_reads_the_l4t_release(tmp_path: Path) -> None:
    from envcheck.probes.system import probe_system

    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/nv_tegra_release").write_text("# R36 (release), REVISION: 4.3, GCID: 1\n")
    facts = probe_system(root=tmp_path)
    if facts.os == "Linux":
        assert facts.l4t == "36.4.3" and facts.jetson == "L4T R36 (release), REVISION: 4.3"


def test_only_jetson_boards_have_these_capabilities() -> None:
    only = {str(cc) for cc in jetson_only(TABLES)}
    assert {"5.3", "6.2", "7.2", "8.7", "11.0"} <= only
    assert not only & {"8.0", "8.6", "9.0", "10.0", "12.0"}  # shared with data-centre GPUs


@pytest.mark.parametrize(
    "name, cc",
    [("Orin", "8.7"), ("Orin (nvgpu)", "8.7"), ("Xavier", "7.2"), ("NVIDIA Thor", "11.0"),
     ("a name nobody knows", "8.7")],
)
def test_a_jetson_gpu_makes_a_jetson_where_the_system_does_not_say(name: str, cc: str) -> None:
    """A container without /etc/nv_tegra_release, a pasted report, a simulated machine: the
    GPU alone says Jetson, and no data-centre aarch64 wheel is planned for it."""
    facts = with_gpu(arm_box(jetson=None), name, cc)
    assert board(facts, TABLES)
    plan = resolve(facts, TABLES, Wish(), "linux-aarch64")
    assert not any("download.pytorch.org" in (plan.index_url or "") for _ in [0])
    assert "Jetson" in " ".join([*plan.conflicts, *plan.notes, *plan.reasons])


def test_a_grace_hopper_box_is_no_jetson() -> None:
    facts = with_gpu(arm_box(jetson=None), "NVIDIA GH200 480GB", "9.0")
    assert board(facts, TABLES) is None
    plan = resolve(facts, TABLES, Wish(), "linux-aarch64")
    assert plan.ok and plan.variant is not None and plan.variant.is_cuda


def test_jetson_report_says_so_and_a_plain_arm_box_does_not() -> None:
    report = report_of(arm_box())
    (jetson,) = [f for f in report.findings if f.code == "TRC005"]
    assert "NVIDIA Jetson AGX Orin Developer Kit" in jetson.title
    plain = arm_box(jetson=None)
    assert not [f for f in report_of(plain).findings if f.code == "TRC005"]


def test_jetson_can_be_simulated_by_override() -> None:
    from envcheck.probes.overrides import apply_overrides, parse_overrides

    facts = Facts()
    env = {"ENVCHECK_FACT_SYSTEM_JETSON": "NVIDIA Jetson AGX Thor", "ENVCHECK_FACT_SYSTEM_L4T": "38.2.0"}
    apply_overrides(facts, parse_overrides(env))
    assert facts.system.jetson == "NVIDIA Jetson AGX Thor" and facts.system.l4t == "38.2.0"


def test_jetson_orin_report_with_the_shipped_tables() -> None:
    """Issue 28.5, as a user on an Orin with a PyPI cu130 torch reads it: the tables know
    sm_87 (no TBL001), ARC003 says plainly that no release has kernels for it, and DRV001
    points at JetPack, not at a desktop driver branch."""
    from tests.runner import envcheck

    run = envcheck("check", "--no-deep", env=JETSON_ORIN)
    text = _fixes(run.stdout)
    assert "TBL001" not in run.stdout, run.stdout
    assert "is no release in the tables" not in text
    assert "No torch release in the tables has kernels for this GPU" in text, run.stdout
    assert "forums.developer.nvidia.com/t/pytorch-for-jetson" in text
    drv001 = text[text.index("DRV001") : text.index("WARNING")]
    assert "On a Jetson the driver comes with JetPack (L4T): upgrade JetPack" in drv001, drv001
    assert "Upgrade the NVIDIA driver" not in drv001


def test_drv002_on_a_jetson_says_jetpack() -> None:
    facts = arm_box()
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "540.4.0", "12.6"
    facts.nvidia.gpus = [
        GpuFacts(index=0, name="Orin (nvgpu)", compute_capability=ComputeCapability.parse("8.7"))
    ]
    facts.torch.installed, facts.torch.version, facts.torch.cuda = True, "2.13.0+cu128", "12.8"
    (drv002,) = [f for f in report_of(facts).findings if f.code == "DRV002"]
    assert "upgrade JetPack (L4T), which brings the driver" in (drv002.fix or ""), drv002.fix
