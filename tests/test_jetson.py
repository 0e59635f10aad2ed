"""NVIDIA Jetson boards: found from the system or from their GPU, and never given a wheel
built for data-centre ARM (PyTorch's aarch64 CUDA wheels are SBSA builds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.driver_support import DriverLevel, machine_driver_verdict
from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, render, resolve
from envcheck.install.reasons import Blocker
from envcheck.probes.system import detect_jetson, l4t_release
from envcheck.report.plan_text import render_plan
from envcheck.tables import Tables, load_tables
from envcheck.tables.load import builtin_dir
from envcheck.tegra import board, jetson_only, needs_nvidia_wheels
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
    facts.nvidia.gpus = [
        GpuFacts(index=0, name=name, compute_capability=ComputeCapability.parse(cc))
    ]
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
    [("Orin", "8.7"), ("Orin (nvgpu)", "8.7"), ("Xavier", "7.2"), ("a name nobody knows", "8.7")],
)
def test_a_jetson_gpu_makes_a_jetson_where_the_system_does_not_say(name: str, cc: str) -> None:
    """A container without /etc/nv_tegra_release, a pasted report, a simulated machine: the
    GPU alone says Jetson, and no data-centre aarch64 wheel is planned for it."""
    facts = with_gpu(arm_box(jetson=None), name, cc)
    assert board(facts, TABLES) and needs_nvidia_wheels(facts, TABLES)
    plan = resolve(facts, TABLES, Wish(), "linux-aarch64")
    assert plan.ok is False and plan.blocker is Blocker.UNKNOWN
    assert "which JetPack it runs is not known" in plan.conflicts[0]
    assert any("cat /etc/nv_tegra_release" in w for w in plan.ways_out)


def orin(l4t: str | None = "36.4.3", python: str = "3.10.12") -> Facts:
    facts = with_gpu(arm_box(), "Orin (nvgpu)", "8.7")
    facts.system.l4t = l4t
    facts.python.version = python
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "540.4.0", "12.6"
    return facts


JP6_INDEX = "https://pypi.jetson-ai-lab.io/jp6/cu126/+simple/"


def test_jetpack_6_gets_nvidias_build_from_its_index() -> None:
    plan = resolve(orin(), TABLES, Wish(companions=("torchvision", "torchaudio")), "linux-aarch64")
    assert plan.ok and plan.torch == "2.8.0" and str(plan.variant) == "cu126"
    assert plan.index_url == JP6_INDEX
    assert [p.pin for p in plan.packages] == ["torch==2.8.0", "torchvision==0.23.0"]
    assert any("torchaudio" in n for n in plan.notes)
    assert plan.unverified and "does not read the live index" in plan.unverified[0]
    assert "JetPack's CUDA 12.6" in plan.reasons[0]
    assert (
        render(plan, "pip")
        == f"pip install torch==2.8.0 torchvision==0.23.0 --index-url {JP6_INDEX}"
    )
    # uv's --torch-backend would fetch PyTorch's SBSA wheels: the index is named instead
    uv = render(plan, "uv", TABLES.uv_torch_backends)
    assert "--torch-backend" not in uv and uv.endswith(f"--index-url {JP6_INDEX}")
    assert render(plan, "conda").startswith("# conda has no NVIDIA's JetPack")
    record = plan.to_dict()
    assert record["other_index"]["url"] == JP6_INDEX and record["index_url"] == JP6_INDEX


@pytest.mark.parametrize(
    "facts, wish, conflict",
    [
        (orin(python="3.11.7"), Wish(), "built for Python 3.10 only; this is Python 3.11"),
        (orin(), Wish(variant="cu128"), "serves cu126 builds, not cu128"),
        (orin(), Wish(torch="2.10"), "is known to hold torch 2.8.0; not torch 2.10"),
    ],
)
def test_what_nvidias_index_does_not_hold_is_refused(
    facts: Facts, wish: Wish, conflict: str
) -> None:
    plan = resolve(facts, TABLES, wish, "linux-aarch64")
    assert plan.ok is False and plan.blocker is Blocker.NO_WHEEL
    assert conflict in plan.conflicts[0], plan.conflicts
    assert "download.pytorch.org" not in " ".join(plan.ways_out)


@pytest.mark.parametrize(
    "l4t, jetpack, way_out",
    [
        (
            "35.4.1",
            "JetPack 5",
            "pip3 install --no-cache https://developer.download.nvidia.com/compute/redist/jp/v512/pytorch/torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl",
        ),
        (
            "32.7.1",
            "JetPack 4",
            "torch 1.10.0 for Python 3.6: https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048",
        ),
        (
            "36.3.0",
            "JetPack 6.0",
            "https://developer.download.nvidia.com/compute/redist/jp/v60/pytorch/",
        ),
    ],
)
def test_an_older_jetpack_is_told_nvidias_wheel_and_the_jetpack_with_an_index(
    l4t: str, jetpack: str, way_out: str
) -> None:
    plan = resolve(orin(l4t=l4t), TABLES, Wish(), "linux-aarch64")
    assert plan.ok is False and plan.blocker is Blocker.NO_WHEEL
    assert f"NVIDIA publishes no pip index for {jetpack} (L4T {l4t})" == plan.conflicts[0]
    assert any(way_out in w for w in plan.ways_out), plan.ways_out
    assert any("upgrade to JetPack 6.1-6.2.1 (L4T 36.4)" in w for w in plan.ways_out)


def test_the_cpu_build_is_planned_when_asked() -> None:
    plan = resolve(orin(), TABLES, Wish(variant="cpu"), "linux-aarch64")
    assert plan.ok and str(plan.variant) == "cpu" and plan.other_index is None


def test_thor_runs_pytorchs_own_cuda_13_wheels() -> None:
    """JetPack 7 runs the unified CUDA 13 Arm toolkit: PyTorch's aarch64 cu13x builds carry
    sm_110, so Thor is planned like any machine, from their architecture lists."""
    for l4t in ("38.2.0", None):
        facts = with_gpu(arm_box("NVIDIA Jetson AGX Thor Developer Kit"), "NVIDIA Thor", "11.0")
        facts.system.l4t = l4t
        facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "580.95.05", "13.0"
        assert board(facts, TABLES) and needs_nvidia_wheels(facts, TABLES) is None
        plan = resolve(facts, TABLES, Wish(), "linux-aarch64")
        assert plan.ok and plan.variant is not None and plan.variant.is_cuda, plan
        assert plan.index_url and plan.index_url.startswith("https://download.pytorch.org/whl/cu13")
        assert not plan.unverified, plan.unverified
        assert not [f for f in report_of(facts).findings if f.code == "TRC005"]


def test_the_jetpack_table_refuses_what_it_cannot_mean(tmp_path: Path) -> None:
    import json

    from envcheck.tables import TableError, load_tables
    from envcheck.tables.load import builtin_dir

    good = json.loads((builtin_dir() / "jetpack.json").read_text())
    breakages = {
        "overlap": lambda d: d["releases"][1]["l4t"].update(min="32.5"),
        "index without variant": lambda d: d["releases"][3].update(variant=None),
        "version without source": lambda d: d["releases"][3]["torch"][0].update(sources=[]),
        "http index": lambda d: d["releases"][3].update(index="http://example.invalid/"),
        "bad gpu": lambda d: d["releases"][0].update(gpus=["sm_87"]),
    }
    for name, breaking in breakages.items():
        data = json.loads(json.dumps(good))
        breaking(data)
        (tmp_path / "jetpack.json").write_text(json.dumps(data))
        with pytest.raises(TableError, match=r"jetpack\.json"):
            load_tables(tmp_path)
        print(name, "refused")


@pytest.mark.slow
def test_pip_installs_what_the_jetpack_6_command_names(tmp_path: Path) -> None:
    """Real pip against a local index laid out like NVIDIA's, which also holds a newer torch
    (the index mirrors the default one): the pinned command installs NVIDIA's 2.8.0."""
    from tests.localindex import Venv, build_index, make_wheel

    wheels = tmp_path / "wheels"
    index = build_index(
        tmp_path / "jp6",
        {
            "torch": [make_wheel(wheels, "torch", "2.8.0"), make_wheel(wheels, "torch", "2.15.0")],
            "torchvision": [make_wheel(wheels, "torchvision", "0.23.0", requires=["torch==2.8.0"])],
        },
    )
    plan = resolve(orin(), TABLES, Wish(companions=("torchvision",)), "linux-aarch64")
    venv = Venv.create(tmp_path / "venv")
    venv.run_command(render(plan, "pip"), {JP6_INDEX: index})
    have = venv.installed()
    assert have["torch"] == "2.8.0" and have["torchvision"] == "0.23.0", have


def test_jetson_report_says_so_and_a_plain_arm_box_does_not() -> None:
    report = report_of(arm_box())
    (jetson,) = [f for f in report.findings if f.code == "TRC005"]
    assert "NVIDIA Jetson AGX Orin Developer Kit" in jetson.title
    plain = arm_box(jetson=None)
    assert not [f for f in report_of(plain).findings if f.code == "TRC005"]


def test_jetson_can_be_simulated_by_override() -> None:
    from envcheck.probes.overrides import apply_overrides, parse_overrides

    facts = Facts()
    env = {
        "ENVCHECK_FACT_SYSTEM_JETSON": "NVIDIA Jetson AGX Thor",
        "ENVCHECK_FACT_SYSTEM_L4T": "38.2.0",
    }
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


def thor(driver: str = "580.00", cuda: str | None = "13.0", l4t: str | None = "38.2.0") -> Facts:
    """A Jetson AGX Thor as JetPack 7 reports it: driver 580.00 with CUDA 13.0
    (vllm-project/vllm#34470: torch 2.10.0+cu130 runs there)."""
    facts = with_gpu(arm_box("NVIDIA Jetson AGX Thor Developer Kit"), "NVIDIA Thor", "11.0")
    facts.system.l4t = l4t
    facts.python.version = "3.12.3"
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = driver, cuda
    return facts


@pytest.mark.parametrize("cuda", ["13.0", None])  # None: JetPack 7's CUDA 13.0 stands in
def test_thors_driver_is_judged_by_the_cuda_it_supports_not_by_its_number(
    cuda: str | None,
) -> None:
    """580.00 is below the desktop floor of CUDA 13.0 (580.65.06), yet it is the driver of
    JetPack 7, which runs CUDA 13.0: the number of a Jetson's driver follows L4T."""
    facts = thor(cuda=cuda)
    verdict = machine_driver_verdict(facts, TABLES, Version("13.0"))
    assert verdict.level is DriverLevel.FULL and "Jetson" in verdict.basis, verdict
    assert verdict.full_from is None and verdict.minimum is None  # no desktop floor applies
    plan = resolve(facts, TABLES, Wish(), "linux-aarch64")
    assert plan.ok and str(plan.variant) == "cu130", plan
    assert not any("580.65" in line for line in (*plan.reasons, *plan.notes)), plan
    facts.torch.installed, facts.torch.version, facts.torch.cuda = True, "2.10.0+cu130", "13.0"
    assert "DRV001" not in {f.code for f in report_of(facts).findings}


def test_a_jetsons_driver_is_unknown_without_its_cuda_or_jetpack_and_old_for_a_newer_major() -> (
    None
):
    unknown = machine_driver_verdict(thor(cuda=None, l4t=None), TABLES, Version("13.0"))
    assert unknown.level is DriverLevel.UNKNOWN, unknown
    assert "neither its driver's CUDA version nor its JetPack release" in unknown.basis
    too_old = machine_driver_verdict(orin(), TABLES, Version("13.0"))  # JetPack 6: CUDA 12.6
    assert too_old.level is DriverLevel.TOO_OLD, too_old


def _tables_without(tmp_path: Path, field: str) -> Tables:
    """The shipped tables with one kind of architecture list dropped from every release."""
    for path in builtin_dir().glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    data = json.loads((tmp_path / "torch_releases.json").read_text())
    for release in data["releases"]:
        release[field] = {}
    (tmp_path / "torch_releases.json").write_text(json.dumps(data))
    return load_tables(tmp_path)


def test_a_plan_with_no_known_kernels_in_any_candidate_is_never_a_fit(tmp_path: Path) -> None:
    """Issue 26.1: when no candidate's architecture list is known, the first candidate is a
    way out said as unverified, with its command; never the plan."""
    tables = _tables_without(tmp_path, "arch_lists_aarch64")
    plan = resolve(thor(), tables, Wish(), "linux-aarch64")
    assert plan.ok is False and plan.blocker is Blocker.UNKNOWN, plan
    assert plan.conflicts[0].startswith("no build is known to have kernels for the GPUs here")
    assert "NVIDIA Thor (sm_110)" in plan.conflicts[0]
    assert "may have them (not verified): pip install torch==" in plan.ways_out[0]
    assert "envcheck smoke" in plan.ways_out[0]
    text = render_plan(plan, None)
    assert text.startswith("No torch is known to fit this machine"), text
    # with the lists, the same machine has a plan known to fit
    assert resolve(thor(), TABLES, Wish(), "linux-aarch64").ok
