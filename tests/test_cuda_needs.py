"""Packages built for another CUDA major or cuDNN than torch brings (PKG009, envcheck.cuda_needs):
read from real dist-info folders (the name, or the requirement on NVIDIA's CUDA runtime wheel),
judged against the runtime wheels installed, said before an install changes torch's CUDA, and
run with real pip against a local index of fake wheels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.cli.run_install import stack_findings
from envcheck.cuda_needs import cuda_needs
from envcheck.facts import PackageFacts
from envcheck.install import Wish, resolve
from envcheck.probes import probe
from envcheck.probes.torch_static import probe_torch_static
from envcheck.tables import TableError, load_tables
from tests.fixtures import TABLES, profile, report_of
from tests.localindex import Venv, build_index, make_wheel
from tests.runner import titles_of
from tests.sitetree import add_dist, add_torch

ORT_CU12 = PackageFacts(
    "onnxruntime-gpu",
    "1.23.2",
    requires=[
        'nvidia-cuda-runtime-cu12~=12.0; extra == "cuda"',
        'nvidia-cudnn-cu12~=9.0; extra == "cudnn"',
    ],
)
ORT_CU13 = PackageFacts(
    "onnxruntime-gpu",
    "1.31.1",
    requires=[
        'nvidia-cuda-runtime==13.5.37; extra == "cuda"',
        'nvidia-cudnn-cu13; extra == "cudnn"',
    ],
)
CUPY12 = PackageFacts("cupy-cuda12x", "14.2.0")
CU13_RUNTIME = PackageFacts("nvidia-cuda-runtime", "13.0.96")
CU12_RUNTIME = PackageFacts("nvidia-cuda-runtime-cu12", "12.6.77")


def machine(torch: str, cuda, *dependents: PackageFacts, wheels=(CU13_RUNTIME,)):
    facts = profile("h100-server")
    facts.python.version = "3.12.3"
    facts.torch.version, facts.torch.cuda = torch, cuda
    facts.torch.dependents = list(dependents)
    facts.torch.companions = [p for p in facts.torch.companions if not p.name.startswith("nvidia-")]
    facts.torch.companions += list(wheels)
    return facts


def pkg009(facts):
    return [f for f in report_of(facts).findings if f.code == "PKG009"]


def with_requires(folder: Path, *lines: str) -> None:
    meta = folder / "METADATA"
    meta.write_text(meta.read_text() + "".join(f"Requires-Dist: {line}\n" for line in lines))


def test_the_static_probe_keeps_what_names_or_requires_a_cuda(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.13.0+cu130", cuda="13.0")
    add_dist(site, "cupy-cuda12x", "14.2.0")  # only its name says CUDA 12
    add_dist(site, "tensorrt-cu12-libs", "10.13.3.9")
    ort = add_dist(site, "onnxruntime-gpu", "1.20.0")  # a GPU build that records no CUDA
    with_requires(
        add_dist(site, "jax-plugin-x", "0.7.0"),
        "jax-cuda12-pjrt==0.7.0",
        'nvidia-cuda-runtime-cu12>=12.1; extra == "with-cuda"',
        'nvidia-cudnn-cu12>=9.8,<10.0; extra == "with-cuda"',
    )
    add_dist(site, "nvidia-cudnn-cu12", "9.1.0.70")  # NVIDIA's own: a companion
    add_dist(site, "requests", "2.32.3")
    add_dist(site, "cudaq", "0.9")  # "cuda" with no digits is not a CUDA build's name
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"))
    got = {d.name: d.requires for d in facts.dependents}
    assert got == {
        "cupy-cuda12x": [],
        "tensorrt-cu12-libs": [],
        "onnxruntime-gpu": [],
        "jax-plugin-x": [
            'nvidia-cuda-runtime-cu12>=12.1; extra == "with-cuda"',
            'nvidia-cudnn-cu12>=9.8,<10.0; extra == "with-cuda"',
        ],
    }, ort
    assert "nvidia-cudnn-cu12" in {p.name for p in facts.companions}


@pytest.mark.parametrize(
    "package, major",
    [
        (CUPY12, 12),
        (PackageFacts("cupy-cuda102", "9.6.0"), 10),  # a major and a minor
        (PackageFacts("tensorrt-cu12-bindings", "10.13.3.9"), 12),
        (PackageFacts("jax-cuda12-plugin", "0.7.0"), 12),
        (ORT_CU12, 12),  # its cuda extra's requirement
        (ORT_CU13, 13),  # the plain runtime wheel: the major is its version's
        (PackageFacts("onnxruntime-gpu", "1.20.0"), None),  # known, records none
        (PackageFacts("other", "1.0", requires=["nvidia-cuda-runtime-cu11==11.8.89"]), 11),
    ],
)
def test_what_each_package_records(package, major):
    (need,) = cuda_needs(machine("2.13.0+cu130", "13.0", package), TABLES)
    assert need.major == major


def test_unknown_packages_are_not_judged():
    facts = machine("2.13.0+cu130", "13.0", PackageFacts("somepkg-gpu", "1.0"))
    assert cuda_needs(facts, TABLES) == []
    assert pkg009(facts) == []


def test_a_cuda_12_build_under_a_cuda_13_torch_without_cuda_12_libraries():
    (finding,) = pkg009(machine("2.13.0+cu130", "13.0", CUPY12))
    assert finding.severity.value == "warning"
    assert finding.title == (
        "cupy-cuda12x 14.2.0 is built for CUDA 12; torch 2.13.0+cu130 brings CUDA 13.0's "
        "libraries and no CUDA 12 runtime is installed"
    )
    assert "pip install cupy-cuda13x" in (finding.fix or "")
    assert "CUDA runtime wheels installed: CUDA 13" in finding.evidence


def test_onnxruntime_says_it_falls_back_to_the_cpu():
    (finding,) = pkg009(machine("2.13.0+cu130", "13.0", ORT_CU12))
    assert "Failed to create CUDAExecutionProvider" in (finding.fix or "")
    assert "Requires-Dist: nvidia-cuda-runtime-cu12~=12.0" in finding.evidence[0]
    assert pkg009(machine("2.13.0+cu130", "13.0", ORT_CU13)) == []


@pytest.mark.parametrize(
    "torch, cuda, wheels",
    [
        ("2.13.0+cu130", "13.0", (CU13_RUNTIME, CU12_RUNTIME)),  # CUDA 12's runtime is there
        ("2.13.0+cu126", "12.6", (CU12_RUNTIME,)),  # the same major as torch
        ("2.13.0+cpu", None, ()),  # a CPU torch brings no CUDA to clash with
    ],
)
def test_no_finding_where_its_libraries_are_there_or_torch_brings_no_cuda(torch, cuda, wheels):
    assert pkg009(machine(torch, cuda, CUPY12, ORT_CU12, wheels=wheels)) == []


def test_a_package_that_records_no_cuda_is_not_checkable_under_a_cuda_torch():
    ort = PackageFacts("onnxruntime-gpu", "1.20.0")
    report = report_of(machine("2.13.0+cu130", "13.0", ort))
    assert ("PKG009", "onnxruntime-gpu 1.20.0 records no CUDA it was built for") in [
        (n.code, n.why) for n in report.not_run
    ]
    assert not [f for f in report.findings if f.code == "PKG009"]
    cpu = report_of(machine("2.13.0+cpu", None, ort, wheels=()))
    assert not [n for n in cpu.not_run if n.code == "PKG009"]


def test_a_cudnn_the_installed_wheel_does_not_meet():
    old_cudnn = PackageFacts("nvidia-cudnn-cu12", "8.9.2.26")  # torch 2.3's
    facts = machine("2.3.1+cu121", "12.1", ORT_CU12, wheels=(CU12_RUNTIME, old_cudnn))
    (finding,) = pkg009(facts)
    assert finding.title == (
        "onnxruntime-gpu 1.23.2 requires nvidia-cudnn-cu12~=9.0; nvidia-cudnn-cu12 8.9.2.26 is "
        "installed"
    )
    assert "cuDNN 8" in (finding.fix or "")
    new_cudnn = PackageFacts("nvidia-cudnn-cu12", "9.1.0.70")
    assert pkg009(machine("2.4.1+cu121", "12.1", ORT_CU12, wheels=(CU12_RUNTIME, new_cudnn))) == []


def test_cuda_13s_plain_runtime_wheel_is_torchs_own():
    """CUDA 13's wheels drop the -cuNN suffix: a CUDA 12 wheel beside them is not torch's
    missing runtime (PKG003)."""
    facts = machine("2.13.0+cu130", "13.0", wheels=(CU13_RUNTIME, CU12_RUNTIME))
    assert not [f for f in report_of(facts).findings if f.code == "PKG003"]
    alone = machine("2.13.0+cu130", "13.0", wheels=(CU12_RUNTIME,))
    assert [f.code for f in report_of(alone).findings if f.code == "PKG003"] == ["PKG003"]


def test_runtime_wheels_another_package_needs_are_not_called_leftovers():
    wheels = (
        CU13_RUNTIME,
        PackageFacts("nvidia-cudnn-cu13", "9.13.0.50"),
        PackageFacts("nvidia-cudnn-cu12", "9.1.0.70"),
    )
    leftover = report_of(machine("2.13.0+cu130", "13.0", wheels=wheels))
    assert [f.code for f in leftover.findings if f.code == "PKG004"] == ["PKG004"]
    used = report_of(machine("2.13.0+cu130", "13.0", ORT_CU12, wheels=(*wheels, CU12_RUNTIME)))
    assert not [f for f in used.findings if f.code in ("PKG004", "PKG009")]


def test_the_plan_says_what_a_torch_of_another_cuda_major_leaves_behind():
    facts = machine("2.8.0+cu126", "12.6", CUPY12, wheels=(CU12_RUNTIME,))
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "580.65.06", "13.0"
    plan = resolve(facts, TABLES, Wish(torch="2.13.0", variant="cu130"), "linux-x86_64")
    assert plan.ok, plan
    assert (
        "cupy-cuda12x 14.2.0 is built for CUDA 12, torch 2.13.0 (cu130) for CUDA 13: it keeps "
        "loading the CUDA 12 runtime wheels installed now (pip leaves them); cupy-cuda13x is its "
        "CUDA 13 build"
    ) in plan.changes, plan.changes
    same = resolve(facts, TABLES, Wish(torch="2.13.0", variant="cu126"), "linux-x86_64")
    assert not [c for c in same.changes if "cupy" in c], same.changes


@pytest.mark.parametrize(
    "entry, error",
    [
        ({"name": "^x-cu(?P<cuda>[0-9]+)$", "names": ["x"]}, "not both"),
        ({"name": "^x-cu[0-9]+$"}, "group cuda"),
        ({"name": "^x-cu(?P<cuda>[0-9]+)$", "replacement": "x-cu13"}, "{major}"),
        ({"names": ["x"], "fails": None}, "fails"),
    ],
)
def test_a_bad_cuda_builds_entry_is_refused(tmp_path, entry, error):
    builtin = Path(__file__).parent.parent / "compat_tables" / "package_builds.json"
    data = json.loads(builtin.read_text())
    data["cuda_builds"].append({"fails": "it fails", "sources": ["TRT_PIP"], **entry})
    (tmp_path / "package_builds.json").write_text(json.dumps(data))
    with pytest.raises(TableError) as refused:
        load_tables(tmp_path)
    assert "cuda_builds[4]" in str(refused.value) and error in str(refused.value)


@pytest.mark.slow  # real pip, a venv, envcheck on that venv's interpreter
def test_pip_installs_a_cuda_12_build_beside_a_cuda_13_torch_and_envcheck_says_so(tmp_path):
    wheels = tmp_path / "wheels"
    index = build_index(
        tmp_path / "index",
        {
            "torch": [
                make_wheel(
                    wheels, "torch", "2.13.0+cu130", requires=["nvidia-cuda-runtime==13.0.96"]
                )
            ],
            "nvidia-cuda-runtime": [make_wheel(wheels, "nvidia-cuda-runtime", "13.0.96")],
            "cupy-cuda12x": [make_wheel(wheels, "cupy-cuda12x", "14.2.0")],
            "nvidia-cuda-runtime-cu12": [make_wheel(wheels, "nvidia-cuda-runtime-cu12", "12.6.77")],
        },
    )
    venv = Venv.create(tmp_path / "venv")
    assert (
        venv.pip("install", "torch==2.13.0+cu130", "cupy-cuda12x", "--index-url", index).returncode
        == 0
    )

    assert titles_of(venv.python, "PKG009", tmp_path) == [
        "cupy-cuda12x 14.2.0 is built for CUDA 12; torch 2.13.0+cu130 brings CUDA 13.0's "
        "libraries and no CUDA 12 runtime is installed"
    ]
    # `install --run` checks the stack of the environment it leaves the same way
    after = stack_findings(probe(deep=False, python=str(venv.python)), TABLES)
    assert [f.code for f in after] == ["PKG009"]
    assert venv.pip("install", "nvidia-cuda-runtime-cu12", "--index-url", index).returncode == 0
    assert titles_of(venv.python, "PKG009", tmp_path) == []  # its libraries are there now
    assert stack_findings(probe(deep=False, python=str(venv.python)), TABLES) == []
