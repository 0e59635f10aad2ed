"""envcheck install: plans for realistic machines, conflicts, and PyTorch's own commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from envcheck.compat import platform_key
from envcheck.facts import Facts, GpuFacts, PythonFacts
from envcheck.install import MANAGERS, Wish, render, resolve
from envcheck.install.reasons import Blocker
from envcheck.values import ComputeCapability, Variant
from tests.fixtures import TABLES
from tests.runner import envcheck

PROFILES = Path(__file__).parent / "profiles"

# Copied from PyTorch's install pages: pytorch/pytorch.github.io,
# _get_started/previous-versions.md at commit e3f009bbc0d7509ed5c85b633313ec72aa2d1a40
# ("Installing previous versions of PyTorch"). (torch, variant, platform, manager, command)
OFFICIAL_SOURCE = "pytorch/pytorch.github.io:_get_started/previous-versions.md@e3f009bbc0d7509ed5c85b633313ec72aa2d1a40"
OFFICIAL = [
    (
        "2.3.1",
        "cu121",
        "linux-x86_64",
        "pip",
        "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url https://download.pytorch.org/whl/cu121",
    ),
    (
        "2.3.1",
        "cu118",
        "linux-x86_64",
        "pip",
        "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url https://download.pytorch.org/whl/cu118",
    ),
    (
        "2.3.1",
        "cpu",
        "linux-x86_64",
        "pip",
        "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url https://download.pytorch.org/whl/cpu",
    ),
    (
        "2.3.1",
        "rocm6.0",
        "linux-x86_64",
        "pip",
        "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url https://download.pytorch.org/whl/rocm6.0",
    ),
    (
        "2.3.1",
        "cpu",
        "macos-arm64",
        "pip",
        "pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1",
    ),
    (
        "2.2.2",
        "cu121",
        "linux-x86_64",
        "pip",
        "pip install torch==2.2.2 torchvision==0.17.2 torchaudio==2.2.2 --index-url https://download.pytorch.org/whl/cu121",
    ),
    (
        "2.2.0",
        "rocm5.6",
        "linux-x86_64",
        "pip",
        "pip install torch==2.2.0 torchvision==0.17.0 torchaudio==2.2.0 --index-url https://download.pytorch.org/whl/rocm5.6",
    ),
    (  # the first release whose default Linux CUDA build the page installs from its index
        "2.1.0",
        "cu121",
        "linux-x86_64",
        "pip",
        "pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cu121",
    ),
    (
        "2.1.0",
        "cu118",
        "windows-x86_64",
        "pip",
        "pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cu118",
    ),
    (
        "2.0.1",
        "cu117",
        "linux-x86_64",
        "pip",
        "pip install torch==2.0.1 torchvision==0.15.2 torchaudio==2.0.2",
    ),
    (
        "2.0.1",
        "cu118",
        "linux-x86_64",
        "pip",
        "pip install torch==2.0.1 torchvision==0.15.2 torchaudio==2.0.2 --index-url https://download.pytorch.org/whl/cu118",
    ),
    (
        "2.0.0",
        "cpu",
        "linux-x86_64",
        "pip",
        "pip install torch==2.0.0 torchvision==0.15.1 torchaudio==2.0.1 --index-url https://download.pytorch.org/whl/cpu",
    ),
    (
        "1.13.1",
        "cu117",
        "linux-x86_64",
        "pip",
        "pip install torch==1.13.1 torchvision==0.14.1 torchaudio==0.13.1",
    ),
    (
        "1.13.1",
        "cu116",
        "linux-x86_64",
        "pip",
        "pip install torch==1.13.1+cu116 torchvision==0.14.1+cu116 torchaudio==0.13.1 --extra-index-url https://download.pytorch.org/whl/cu116",
    ),
    (
        "1.12.1",
        "cu113",
        "linux-x86_64",
        "pip",
        "pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 torchaudio==0.12.1 --extra-index-url https://download.pytorch.org/whl/cu113",
    ),
    (
        "1.11.0",
        "cpu",
        "linux-x86_64",
        "pip",
        "pip install torch==1.11.0+cpu torchvision==0.12.0+cpu torchaudio==0.11.0 --extra-index-url https://download.pytorch.org/whl/cpu",
    ),
    (
        "2.3.1",
        "cu121",
        "linux-x86_64",
        "conda",
        "conda install pytorch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 pytorch-cuda=12.1 -c pytorch -c nvidia",
    ),
    (
        "2.1.2",
        "cpu",
        "linux-x86_64",
        "conda",
        "conda install pytorch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2 cpuonly -c pytorch",
    ),
    (
        "2.0.1",
        "cpu",
        "macos-arm64",
        "conda",
        "conda install pytorch==2.0.1 torchvision==0.15.2 torchaudio==2.0.2 -c pytorch",
    ),
    (
        "1.12.1",
        "cu102",
        "linux-x86_64",
        "conda",
        "conda install pytorch==1.12.1 torchvision==0.13.1 torchaudio==0.12.1 cudatoolkit=10.2 -c pytorch",
    ),
    (
        "1.12.1",
        "cu116",
        "linux-x86_64",
        "conda",
        "conda install pytorch==1.12.1 torchvision==0.13.1 torchaudio==0.12.1 cudatoolkit=11.6 -c pytorch -c conda-forge",
    ),
]


def elsewhere(torch: str, variant: str, platform: str, python: str = "3.10", manager: str = "pip"):
    """Plan for another machine, as `--python-version --platform --variant` does: nothing probed."""
    wish = Wish(
        torch=torch,
        variant=variant,
        companions=["torchvision", "torchaudio"],
        python=python,
        platform=platform,
        manager=manager,
    )
    return resolve(Facts(python=PythonFacts(version=python)), TABLES, wish, platform)


def test_at_least_twelve_official_commands() -> None:
    assert len(OFFICIAL) >= 12 and OFFICIAL_SOURCE


@pytest.mark.parametrize(("torch", "variant", "platform", "manager", "command"), OFFICIAL)
def test_official_commands(torch, variant, platform, manager, command) -> None:
    plan = elsewhere(torch, variant, platform, manager=manager if manager == "conda" else "pip")
    assert plan.ok, plan.conflicts
    assert render(plan, manager) == command


def profile(name: str) -> Facts:
    return Facts.from_json((PROFILES / f"{name}.json").read_text())


@pytest.mark.parametrize(
    ("name", "torch", "variant", "command"),
    [
        (
            "rtx5090-cu126",
            "2.11.0",
            "cu128",
            "pip install torch==2.11.0 torchvision==0.26.0 --index-url https://download.pytorch.org/whl/cu128",
        ),
        (
            "old-laptop-new-build",
            None,
            None,
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118",
        ),
        (
            "gtx1080-cu128",
            "2.14.1",
            "cu126",
            "pip install torch==2.14.1 torchvision==0.29.1 --index-url https://download.pytorch.org/whl/cu126",
        ),
        (
            "windows-cpu-default",
            "2.14.1",
            "cu126",
            "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126",
        ),
        ("intel-mac", "2.2.2", "cpu", "pip install torch==2.2.2"),
        (
            "docker-small-shm",
            "2.15.0",
            "cpu",
            "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu",
        ),
        (
            "h100-server",
            "2.14.1",
            "cu126",
            "pip install torch==2.14.1 torchvision==0.29.1 --index-url https://download.pytorch.org/whl/cu126",
        ),
    ],
)
def test_profiles_get_the_right_plan(name, torch, variant, command) -> None:
    facts = profile(name)
    plan = resolve(facts, TABLES, Wish(), platform_key(facts.system))
    if torch is None:  # no candidate is known to have the GPU's kernels: a way out only
        assert plan.ok is False and plan.blocker is Blocker.UNKNOWN, plan
        assert f"(not verified): {command};" in plan.ways_out[0], plan.ways_out
        return
    assert (plan.ok, plan.torch, plan.variant) == (True, torch, variant)
    assert render(plan, "pip") == command
    assert plan.reasons


def test_the_reason_reads_like_the_issue_example() -> None:
    """An RTX 4090 on driver 535 (an RTX 5090 needs an R570 driver: tests/test_first_driver)."""
    facts = profile("rtx5090-cu126")
    facts.nvidia.driver_version = "535.104.05"
    facts.nvidia.gpus = [
        GpuFacts(
            index=0,
            name="NVIDIA GeForce RTX 4090",
            compute_capability=ComputeCapability.parse("8.9"),
        )
    ]
    plan = resolve(facts, TABLES, Wish(), "linux-x86_64")
    assert plan.reasons[0] == (
        "driver 535.104.05 runs CUDA 12.x through minor-version compatibility; "
        "NVIDIA GeForce RTX 4090 (sm_89) covered by cu126 -> torch 2.14.1+cu126"
    )


@pytest.mark.parametrize(
    ("name", "wish", "conflict", "way_out"),
    [
        (
            "docker-small-shm",
            Wish(torch="2.15", python="3.9"),
            "has no wheels for Python 3.9",
            "torch 2.8.0, the newest for Python 3.9",
        ),
        (
            "intel-mac",
            Wish(torch="2.5"),
            "torch 2.5 has no wheels for macos-x86_64",
            "torch 2.2.2 is the newest with macos-x86_64 wheels",
        ),
        (
            "old-laptop-new-build",
            Wish(torch="2.8", variant="cu128"),
            "cu128: driver 470.82.01 < 525.60.13",
            "--variant auto",
        ),
        (
            "gtx1080-cu128",
            Wish(torch="2.15"),
            "cu132: driver 575.57.08 < 580.65.06",
            "--variant cpu",
        ),
        (
            "gtx1080-r580",
            Wish(torch="2.15"),
            "no kernels for NVIDIA GeForce GTX 1080 (sm_61)",
            "--variant cpu",
        ),
        (
            "gtx1080-r590",  # the driver itself dropped Pascal: that comes before any build
            Wish(torch="2.15"),
            "driver 590.44.01 no longer supports NVIDIA GeForce GTX 1080 (Pascal)",
            "install an R580 driver",
        ),
        (
            "h100-server",
            Wish(torch="3.0"),
            "no release in the tables matches torch 3.0",
            "releases known: 1.8 to 2.15",
        ),
        (
            "h100-server",
            Wish(torch="2.14", variant="cu121"),
            "no cu121 build for linux-x86_64",
            "--variant auto",
        ),
    ],
)
def test_unsatisfiable_wishes_say_what_conflicts(name, wish, conflict, way_out) -> None:
    drivers = {"-r580": "580.95.05", "-r590": "590.44.01"}
    suffix = next((s for s in drivers if name.endswith(s)), "")
    facts = profile(name[: len(name) - len(suffix)] + "-cu128" if suffix else name)
    if suffix:
        facts.nvidia.driver_version = drivers[suffix]
    plan = resolve(facts, TABLES, wish, wish.platform or platform_key(facts.system))
    assert plan.ok is False
    assert any(conflict in c for c in plan.conflicts), plan.conflicts
    assert any(way_out in w for w in plan.ways_out), plan.ways_out


def test_companion_without_a_release_takes_the_documented_compatible_one() -> None:
    """torchaudio has no 2.13 release; 2.11.1 declares torch>=2.11 (AUDIO_REL_2111)."""
    plan = elsewhere("2.13.0", "cpu", "linux-x86_64", python="3.12")
    assert [(p.name, p.version) for p in plan.packages][2:] == [("torchaudio", "2.11.1")]
    assert (
        "torchaudio 2.11.1: torchaudio has no release for torch 2.13.0; "
        "torchaudio <2.12,>=2.11 is documented to work with it" in plan.notes
    )


def test_upgrade_lists_what_changes() -> None:
    facts = profile("h100-server")
    facts.torch.version = facts.torch.dist_version = "2.8.0+cu128"
    facts.torch.cuda = "12.8"
    facts.torch.companions = [c for c in facts.torch.companions if c.name == "torchvision"]
    facts.torch.companions[0].version = "0.23.0+cu128"
    facts.nvidia.gpus = [
        GpuFacts(
            index=0, name="Tesla V100-SXM2-32GB", compute_capability=ComputeCapability.parse("7.0")
        )
    ]
    plan = resolve(facts, TABLES, Wish(torch="2.11"), "linux-x86_64")
    assert plan.ok and plan.variant == "cu126"  # cu128 of 2.11 dropped sm_70
    assert list(plan.changes) == [
        "torch 2.8.0+cu128 -> 2.11.0+cu126",
        "Python floor raised: 3.9 -> 3.10",
    ]


def test_an_explicit_variant_is_checked_for_kernels() -> None:
    """--variant cu128 of 2.11 on a V100: that build has no sm_70 kernels, so it is no
    plan at all (as a driver too old for it is not), and the ways out say what is."""
    facts = profile("h100-server")
    facts.nvidia.gpus = [
        GpuFacts(
            index=0, name="Tesla V100-SXM2-32GB", compute_capability=ComputeCapability.parse("7.0")
        )
    ]
    plan = resolve(facts, TABLES, Wish(torch="2.11", variant="cu128"), "linux-x86_64")
    assert not plan.ok
    assert list(plan.conflicts) == [
        "torch 2.11.0: cu128: no kernels for Tesla V100-SXM2-32GB (sm_70)"
    ]
    assert "let envcheck choose the variant (--variant auto)" in plan.ways_out
    assert not any("upgrade the NVIDIA driver" in w for w in plan.ways_out)


def test_every_manager_renders_the_same_plan() -> None:
    plan = elsewhere("2.7.1", "cu128", "linux-x86_64")
    out = {m: render(plan, m, TABLES.uv_torch_backends) for m in MANAGERS}
    assert (
        out["uv"]
        == "uv pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 --torch-backend=cu128"
    )
    assert out["requirements"].splitlines() == [
        "--index-url https://download.pytorch.org/whl/cu128",
        "torch==2.7.1",
        "torchvision==0.22.1",
        "torchaudio==2.7.1",
    ]
    assert (
        '[[tool.uv.index]]\nname = "pytorch-cu128"\nurl = "https://download.pytorch.org/whl/cu128"\nexplicit = true'
        in out["uv-project"]
    )
    assert 'torch = [{ index = "pytorch-cu128" }]' in out["uv-project"]
    assert 'priority = "explicit"' in out["poetry"]
    assert 'torch = { version = "2.7.1", source = "pytorch-cu128" }' in out["poetry"]
    assert out["conda"].startswith(
        'conda install -c conda-forge "pytorch==2.7.1=cuda128*"'
    )  # after 2.5: conda-forge


def test_project_snippets_are_valid_toml() -> None:
    tomllib = pytest.importorskip("tomllib")
    plan = elsewhere("2.7.1", "cu128", "linux-x86_64")
    uv = tomllib.loads(render(plan, "uv-project"))
    assert uv["tool"]["uv"]["sources"]["torchaudio"] == [{"index": "pytorch-cu128"}]
    poetry = tomllib.loads(render(plan, "poetry"))
    assert poetry["tool"]["poetry"]["source"][0]["priority"] == "explicit"


# --------------------------------------------------------------------------- the command line


def test_install_here_prints_a_working_command() -> None:
    out = envcheck("install")
    assert out.returncode == 0, out.stderr
    assert "pip install torch==" in out.stdout
    plan = json.loads(envcheck("install", "--json").stdout)
    assert plan["ok"] is True and plan["command"].startswith("pip install torch==")
    assert set(plan) >= {"torch", "variant", "packages", "index_url", "command", "reasons"}


def test_install_for_another_machine_without_probing() -> None:
    out = envcheck(
        "install",
        "--torch",
        "2.3.1",
        "--python-version",
        "3.11",
        "--platform",
        "linux-x86_64",
        "--variant",
        "cu121",
        "--with",
        "torchvision,torchaudio",
    )
    assert out.returncode == 0
    assert out.stdout.strip().endswith(OFFICIAL[0][4])


def test_install_conflict_exits_1_with_ways_out() -> None:
    out = envcheck(
        "install",
        "--torch",
        "2.5",
        "--python-version",
        "3.13",
        "--platform",
        "macos-x86_64",
        "--variant",
        "cpu",
    )
    assert out.returncode == 1
    assert "torch 2.2.2 is the newest with macos-x86_64 wheels" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--torch", "two"), "--torch 'two'"),
        (("--variant", "cuda"), "--variant 'cuda'"),
        (("--python-version", "snake"), "--python-version 'snake'"),
        (("--manager", "conda", "--run"), "--run works with"),
    ],
)
def test_install_usage_errors(args, message) -> None:
    out = envcheck("install", *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_install_run_uses_pip_as_an_argument_list() -> None:
    """--run for what is already installed: pip answers without touching the network."""
    import importlib.metadata

    try:
        installed = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("torch is not installed here")
    base = installed.split("+")[0]
    out = envcheck("install", "--torch", base, "--variant", "cpu", "--run")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"$ {sys.executable} -m pip install torch=={base}" in out.stdout
    assert "Requirement already satisfied" in out.stdout
    assert importlib.metadata.version("torch") == installed  # nothing changed


def test_check_ends_with_the_install_advice() -> None:
    env = {
        "ENVCHECK_DRIVER_VERSION": "535.104.05",
        "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
        "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
        "ENVCHECK_FACT_TORCH_INSTALLED": "false",
        "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",  # the answer depends on the Python
    }
    out = envcheck("check", "--no-deep", env=env)
    command = "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    # Given once, under TRC003: the report has one install plan.
    assert out.stdout.count(command) == 1
    # With torch 2.13.0+cpu and torchvision installed, the same one plan replaces both.
    env.update(  # the same installed torch on every Python CI runs, with or without torch
        ENVCHECK_FACT_TORCH_INSTALLED="true",
        ENVCHECK_FACT_TORCH_VERSION="2.13.0+cpu",
        ENVCHECK_FACT_TORCH_COMPANIONS='[{"name": "torchvision", "version": "0.28.0"}]',
    )
    out = envcheck("check", "--no-deep", env=env)
    command = "pip install torch==2.13.0+cu126 torchvision==0.28.0+cu126 --index-url https://download.pytorch.org/whl/cu126"
    assert out.stdout.count("$ pip install") == 1 and command in out.stdout


def test_uv_falls_back_to_the_index_for_backends_uv_does_not_know() -> None:
    """cu132 is not among uv's --torch-backend values (installers table): use the index."""
    backends = TABLES.uv_torch_backends
    assert Variant.parse("cu132") not in backends and Variant.parse("cu130") in backends
    plan = elsewhere("2.15.0", "cu132", "linux-x86_64", python="3.12")
    assert render(plan, "uv", TABLES.uv_torch_backends) == (
        "uv pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 --index-url https://download.pytorch.org/whl/cu132"
    )
    plan = elsewhere("2.13.0", "cu130", "linux-x86_64", python="3.12")
    assert render(plan, "uv", TABLES.uv_torch_backends).endswith("--torch-backend=cu130")
