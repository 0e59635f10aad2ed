"""AMD GPUs: the KFD topology probe, and ROCm in install plans and checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.facts import AmdFacts, AmdGpuFacts, Facts
from envcheck.install import Wish, render, resolve
from envcheck.probes.amd import gfx_name, probe_amd
from tests.fixtures import TABLES, report_of

PROFILES = Path(__file__).parent / "profiles"


def kfd_node(root: Path, n: int, target: int, vendor: int = 4098, device: int = 29857) -> None:
    node = root / "sys/class/kfd/kfd/topology/nodes" / str(n)
    node.mkdir(parents=True)
    (node / "properties").write_text(
        f"cpu_cores_count 0\nsimd_count 1216\ngfx_target_version {target}\n"
        f"vendor_id {vendor}\ndevice_id {device}\nlocation_id 49408\n"
    )


@pytest.mark.parametrize(
    ("target", "name"),
    [(90402, "gfx942"), (90010, "gfx90a"), (110000, "gfx1100"), (100300, "gfx1030"), (0, None)],
)
def test_gfx_names(target: int, name) -> None:
    assert gfx_name(target) == name


def test_kfd_topology_with_a_cpu_node_and_two_gpus(tmp_path: Path) -> None:
    kfd_node(tmp_path, 0, 0, vendor=0, device=0)  # the CPU
    kfd_node(tmp_path, 1, 90402)
    kfd_node(tmp_path, 2, 90402)
    (tmp_path / "sys/module/amdgpu").mkdir(parents=True)
    (tmp_path / "sys/module/amdgpu/version").write_text("6.10.5\n")
    facts = probe_amd(tmp_path)
    assert facts.driver_version == "6.10.5"
    assert [(g.index, g.gfx, g.device_id) for g in facts.gpus] == [
        (0, "gfx942", "0x74a1"),
        (1, "gfx942", "0x74a1"),
    ]


def test_no_amd_driver(tmp_path: Path) -> None:
    assert probe_amd(tmp_path) == AmdFacts()


def amd_box() -> Facts:
    facts = Facts.from_json((PROFILES / "docker-small-shm.json").read_text())
    facts.amd = AmdFacts(gpus=[AmdGpuFacts(index=0, gfx="gfx942")])
    return facts


def test_install_picks_the_newest_rocm_build() -> None:
    facts = amd_box()
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    # 2.15's ROCm builds are not known to the tables: the newest release with ROCm is 2.14.
    assert (plan.ok, plan.torch, plan.variant) == (True, "2.14.1", "rocm7.14")  # 7.14 > 7.2
    assert plan.reasons[0] == "AMD GPU (gfx942) -> rocm7.14, the newest ROCm build of torch 2.14.1"
    assert (
        render(plan, "pip")
        == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/rocm7.14"
    )


def test_rocm_only_on_linux_x86_64() -> None:
    facts = amd_box()
    plan = resolve(facts, TABLES, Wish(torch="2.14"), "linux-aarch64")
    assert plan.ok is False and "ROCm builds exist for linux-x86_64 only" in plan.conflicts[0]


def test_cpu_torch_on_an_amd_box_is_an_error_with_the_rocm_fix() -> None:
    (finding,) = [f for f in report_of(amd_box()).findings if f.code == "TRC001"]
    assert "AMD GPU (gfx942)" in finding.title
    # 2.13.0 is installed as +cpu: the ROCm build of the same version must be pinned with its
    # label, or pip keeps the CPU build
    assert (
        finding.command
        == "pip install torch==2.13.0+rocm7.2 --index-url https://download.pytorch.org/whl/rocm7.2"
    )
