"""AMD GPUs: the KFD topology probe, and ROCm in install plans and checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.facts import AmdFacts, AmdGpuFacts, Facts
from envcheck.install import Wish, render, resolve
from envcheck.install.reasons import Blocker
from envcheck.probes.amd import gfx_name, probe_amd
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability, parse_gpu_arch
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


def test_install_picks_a_rocm_build_known_to_carry_the_gpu() -> None:
    facts = amd_box()
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    # 2.12-2.14's gfx lists are not known to the tables; 2.11's rocm7.2 list has gfx942: a
    # build known to fit comes first, and the newer ones are said to be passed over.
    assert (plan.ok, plan.torch, plan.variant) == (True, "2.11.0", "rocm7.2")
    assert plan.reasons[0].startswith("AMD GPU (gfx942) -> rocm7.2, whose gfx list has it")
    assert list(plan.unverified) == []
    assert any(n.startswith("passed over torch 2.14.1, not known to fit") for n in plan.notes)
    assert (
        render(plan, "pip")
        == "pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/rocm7.2"
    )


def test_install_for_a_gpu_no_known_list_has_is_never_a_fit() -> None:
    """Issue 26.1: with no candidate known to carry the GPU's kernels, the newest that may is
    a way out said as unverified, never the plan."""
    facts = amd_box()
    facts.amd.gpus[0].gfx = "gfx1103"  # Radeon 780M: in no gfx list these tables know
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    assert plan.ok is False and plan.blocker is Blocker.UNKNOWN, plan
    assert plan.conflicts == (
        "no build is known to have kernels for the GPUs here: kernels for gfx1103 in torch "
        "2.14.1+rocm7.14: the tables do not hold this build's gfx list",
    )
    assert plan.ways_out[0].startswith(
        "torch 2.14.1+rocm7.14 may have them (not verified): pip install torch==2.14.1 "
        "--index-url https://download.pytorch.org/whl/rocm7.14"
    ), plan.ways_out


def test_install_skips_a_rocm_build_whose_list_lacks_the_gpu() -> None:
    facts = amd_box()
    facts.amd.gpus[0].gfx = "gfx1201"  # RX 9070: in 2.7's lists, not in 2.5's
    plan = resolve(facts, TABLES, Wish(torch="2.5"), "linux-x86_64")
    # rocm6.2 is known without gfx1201; rocm6.1's list is not in these tables: a way out
    # said unverified, never the plan
    assert plan.ok is False and plan.blocker is Blocker.UNKNOWN, plan
    assert "gfx1201 in torch 2.5.1+rocm6.1" in plan.conflicts[0], plan.conflicts
    assert "may hold its gfx list" in plan.ways_out[1], plan.ways_out
    shipped = resolve(facts, load_tables(), Wish(torch="2.5"), "linux-x86_64")
    assert shipped.ok is False and shipped.blocker is Blocker.KERNELS, shipped  # both known
    plan = resolve(facts, TABLES, Wish(torch="2.5", variant="rocm6.2"), "linux-x86_64")
    assert plan.ok is False
    assert "rocm6.2: no kernels for gfx1201" in plan.conflicts[0]
    plan = resolve(facts, TABLES, Wish(torch="2.7"), "linux-x86_64")
    assert (plan.ok, plan.variant, list(plan.unverified)) == (True, "rocm6.3", [])


def test_install_with_a_gpu_no_rocm_build_carries() -> None:
    facts = amd_box()
    facts.amd.gpus[0].gfx = "gfx803"  # Polaris: dropped from every list the tables know
    plan = resolve(facts, TABLES, Wish(torch="2.4"), "linux-x86_64")
    assert plan.ok is False
    assert list(plan.conflicts) == [
        "torch 2.4.1: rocm6.1: no kernels for gfx803 (carries gfx900 gfx906 gfx908 gfx90a "
        "gfx1030 gfx1100 gfx942); rocm6.0: no kernels for gfx803 (carries gfx900 gfx906 gfx908 "
        "gfx90a gfx1030 gfx1100 gfx942)"
    ]


def rocm_torch(facts: Facts, version: str) -> Facts:
    facts.torch.version = version
    facts.torch.hip = "6.2.41133"
    facts.torch.cuda = None
    return facts


def test_installed_rocm_build_without_the_gpu_is_arc001() -> None:
    facts = rocm_torch(amd_box(), "2.5.1+rocm6.2")
    facts.amd.gpus[0].gfx = "gfx1201"
    report = report_of(facts)
    (arc,) = [f for f in report.findings if f.code == "ARC001"]
    assert arc.severity.value == "error" and "gfx1201" in arc.title
    assert "compat table for torch 2.5 rocm6.2: gfx900" in arc.evidence[0]
    assert report.ready is False
    assert "rocm" in (arc.command or "") and "2.5.1+rocm6.2" not in (arc.command or "")


def test_installed_rocm_build_with_the_gpu_has_no_arc_finding() -> None:
    facts = rocm_torch(amd_box(), "2.5.1+rocm6.2")  # gfx942 is in 2.5.1+rocm6.2's list
    assert [f.code for f in report_of(facts).findings if f.code.startswith("ARC")] == []


def test_installed_rocm_build_of_unknown_list_is_arc004() -> None:
    facts = rocm_torch(amd_box(), "2.6.0+rocm6.2.4")
    (arc,) = [f for f in report_of(facts).findings if f.code.startswith("ARC")]
    assert (arc.code, arc.severity.value) == ("ARC004", "warning")
    assert "the tables do not list the gfx targets of 2.6 rocm6.2.4" in arc.evidence


def test_an_amd_gpu_whose_gfx_was_not_read_is_arc004_not_fine() -> None:
    """A known gfx list but a GPU whose target the probe could not read: unknown, said as
    ARC004, never read as "no GPU is missing"."""
    facts = rocm_torch(amd_box(), "2.5.1+rocm6.2")  # a build whose gfx list the tables hold
    facts.amd.gpus[0].gfx = None
    (arc,) = [f for f in report_of(facts).findings if f.code.startswith("ARC")]
    assert arc.code == "ARC004"
    assert list(arc.evidence) == ["the AMD GPUs' gfx targets were not read"]


def test_deep_probe_gfx_list_wins_over_the_tables() -> None:
    facts = rocm_torch(amd_box(), "2.6.0+rocm6.2.4")  # not in the tables
    facts.torch_runtime.status = "ok"
    facts.torch_runtime.arch_list = [parse_gpu_arch(a) for a in ["gfx900", "gfx906", "gfx1100"]]
    (arc,) = [f for f in report_of(facts).findings if f.code.startswith("ARC")]
    assert arc.code == "ARC001" and "gfx942" in arc.title
    assert arc.evidence[0] == "torch.cuda.get_arch_list(): gfx900 gfx906 gfx1100"
    facts.torch_runtime.arch_list = [
        parse_gpu_arch(a) for a in ["gfx90a", "gfx942:sramecc+:xnack-"]
    ]
    assert [f.code for f in report_of(facts).findings if f.code.startswith("ARC")] == []


def test_rocm_only_on_linux_x86_64() -> None:
    facts = amd_box()
    plan = resolve(facts, TABLES, Wish(torch="2.14"), "linux-aarch64")
    assert plan.ok is False and "ROCm builds exist for linux-x86_64 only" in plan.conflicts[0]


def test_cpu_torch_on_an_amd_box_is_an_error_with_the_rocm_fix() -> None:
    (finding,) = [f for f in report_of(amd_box()).findings if f.code == "TRC001"]
    assert "AMD GPU (gfx942)" in finding.title
    # 2.13.0 is installed as +cpu, but no gfx list of 2.13 is known: the nearest release whose
    # ROCm build is known to carry gfx942 is 2.11 (rocm7.2), and the fix says 2.13 was passed over
    assert (
        finding.command
        == "pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/rocm7.2"
    )
    assert "No build of torch 2.13.0 is known to fit (kernels for gfx942 in torch" in finding.fix


def test_the_report_header_names_the_amd_gpus() -> None:
    """An MI300X box was headed "no driver · no GPU" in text and markdown alike."""
    from tests.runner import envcheck

    env = {
        "ENVCHECK_FACT_AMD_GPUS": '[{"index": 0, "gfx": "gfx942"}, {"index": 1, "gfx": "gfx942"}]',
        "ENVCHECK_FACT_AMD_DRIVER_VERSION": "6.8.5",
        "COLUMNS": "200",
    }
    for fmt in ("text", "markdown"):
        out = envcheck("check", "--no-deep", "--format", fmt, env=env)
        head = "\n".join(out.stdout.splitlines()[:3])
        assert "amdgpu 6.8.5 · 2x gfx942" in head, head
        assert "no GPU" not in head and "no driver" not in head and "driver none" not in head


def test_the_tables_know_a_capability_from_a_gpu_model_or_an_sm_rule() -> None:
    from envcheck.tables import load_tables

    shipped = load_tables()
    cc = ComputeCapability.parse
    assert shipped.knows_capability(cc("8.7"))  # Jetson Orin: no family lists it; sm_87 does
    assert shipped.knows_capability(cc("9.0")) and not shipped.knows_capability(cc("19.5"))
    assert TABLES.knows_capability(cc("8.7"))
    # junk never reaches the question: it is not a capability at all
    assert ComputeCapability.maybe("not a capability") is None


def test_mi300x_gets_the_newest_release_whose_rocm_build_carries_gfx942() -> None:
    """Issue 26.3: with the ROCm lists of 2.12-2.14 known (2.14's rocm7.2 list inferred from
    the build script's history, said so), an MI300X gets 2.14, not 2.11 or 2.12."""
    facts = Facts.from_json((PROFILES / "docker-small-shm.json").read_text())
    facts.nvidia.gpus = []
    facts.amd = AmdFacts(gpus=[AmdGpuFacts(index=0, gfx="gfx942")])
    plan = resolve(facts, load_tables(), Wish(), "linux-x86_64")
    assert plan.ok and plan.torch and plan.torch.startswith("2.14."), plan
    assert str(plan.variant) == "rocm7.2" and not plan.unverified, plan
    assert "its gfx list inferred from PyTorch's build scripts" in plan.reasons[0], plan.reasons


def test_an_amd_gpu_is_a_gpu_for_a_memory_or_capability_floor() -> None:
    """REQ005/REQ006 say "no GPU here" only when no account sees one: not for a ROCm machine."""
    from envcheck.requirements import Requirements, evaluate

    facts = amd_box()
    req = Requirements(gpu_memory=16 * 2**30, compute_capability="8.0", source="test")
    titles = [f.title for f in evaluate(req, facts)]
    assert not [t for t in titles if t.startswith("no GPU here")], titles
    facts.amd.gpus = []
    titles = [f.title for f in evaluate(req, facts)]
    assert [t for t in titles if t.startswith("no GPU here")], titles
