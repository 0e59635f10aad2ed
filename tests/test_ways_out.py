"""Ways out that are real: the smallest driver upgrade that makes a build run (not the newest
build's floor), and the release that has kernels when the one asked for has none.
On the shipped tables (the frozen fixture has no arch lists before 2.8); every assertion is
worked out from the tables themselves."""

from __future__ import annotations

from packaging.version import Version

from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, driver_upgrade, resolve
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability, Platform
from tests.fixtures import profile

TABLES = load_tables()

RTX4090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 4090", compute_capability=ComputeCapability.parse("8.9")
)
RTX5090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 5090", compute_capability=ComputeCapability.parse("12.0")
)


def _box(gpu: GpuFacts, driver: str, cuda: str) -> Facts:
    facts = profile("docker-small-shm")
    facts.python.version = "3.11.7"
    facts.system.os = "Linux"
    facts.nvidia.gpus = [gpu]
    facts.nvidia.driver_version = driver
    facts.nvidia.cuda_driver_version = cuda
    facts.nvidia.device_nodes = ["/dev/nvidia0"]
    return facts


def test_the_driver_upgrade_is_the_lowest_floor_among_builds_with_kernels() -> None:
    facts = _box(RTX4090, "470.82.01", "11.4")
    release = TABLES.release(Version("2.13.0"))
    assert release is not None
    upgrade = driver_upgrade(facts, TABLES, release, Platform.parse("linux-x86_64"))
    assert upgrade is not None
    variant, floor = upgrade
    floors = {
        name: TABLES.minor_compat_floor(name.cuda, "Linux")
        for name in release.cuda_variants or ()
        if release.arch_list(name) is not None and name.cuda is not None
    }
    assert Version(floor) == min(f for f in floors.values() if f is not None)
    assert str(variant).startswith("cu12"), variant  # not the CUDA 13 build's R580 floor


def test_a_release_without_kernels_points_to_the_first_newer_one_that_has_them() -> None:
    plan = resolve(_box(RTX5090, "570.86.10", "12.8"), TABLES, Wish(torch="2.5"), "linux-x86_64")
    assert not plan.ok
    assert any("no kernels for NVIDIA GeForce RTX 5090" in c for c in plan.conflicts)
    way = next(w for w in plan.ways_out if "kernels for" in w)
    first = way.split()[1]
    assert Version(first) > Version("2.5")
    older = [r for r in TABLES.releases if Version("2.5") < Version(r.minor) < Version(first)]
    for release in older:  # nothing between 2.5 and the one named has sm_120 kernels
        for name in release.cuda_variants or ():
            assert "sm_120" not in (release.arch_list(name) or ()), (release.minor, name)
    assert f"(--torch {first})" in way
    follow = resolve(_box(RTX5090, "570.86.10", "12.8"), TABLES, Wish(torch=first), "linux-x86_64")
    assert follow.ok, follow.conflicts
