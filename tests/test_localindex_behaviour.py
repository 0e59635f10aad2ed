"""What real pip and real uv install when a torch of another build is already there.

Behaviour tests of the package managers themselves, run offline against local
PyTorch-style indexes of fake wheels (tests/localindex.py): one index per variant
whose wheels carry the variant's local label (``torch 2.13.0+cu126``), and a
"default" index serving unlabelled versions as PyPI does (a CUDA 12.8 build). Each
test starts from a copy of a venv prepared, by the manager under test, with the
starting build; it asserts the versions installed afterwards, and that the files
on disk (``torch/version.py``) followed the metadata.
"""

from __future__ import annotations

import zipfile
from typing import Callable, Dict, Tuple

import pytest

from tests.localindex import (
    PYTORCH_INDEX,
    TorchBackendNotLocal,
    Venv,
    build_index,
    localize,
    make_wheel,
    split_installer,
    torch_indexes,
)

TOOLS = ("pip", "uv")
T, TV = "2.13.0", "0.28.0"


@pytest.fixture(scope="module")
def idx(tmp_path_factory) -> Dict[str, str]:
    """variant -> file:// URL: ``cpu``, ``cu126`` and ``default``."""
    return torch_indexes(tmp_path_factory.mktemp("index"), variants=("cpu", "cu126"))


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Venv:
    return Venv.create(tmp_path_factory.mktemp("venvs") / "base")


_STATES = {  # name -> (index, requirements)
    "cpu": ("cpu", (f"torch=={T}+cpu",)),
    "cpu+tv": ("cpu", (f"torch=={T}+cpu", f"torchvision=={TV}+cpu")),
    "cu126": ("cu126", (f"torch=={T}+cu126",)),
    "default": ("default", (f"torch=={T}",)),
}


@pytest.fixture(scope="module")
def prepared(base, idx, tmp_path_factory) -> Callable[[str, str], Venv]:
    """(tool, state) -> a venv where ``tool`` installed that state; made once per module."""
    made: Dict[Tuple[str, str], Venv] = {}
    folder = tmp_path_factory.mktemp("prepared")

    def get(tool: str, state: str) -> Venv:
        if (tool, state) not in made:
            index, reqs = _STATES[state]
            venv = base.clone(folder / f"{tool}-{state}")
            run(venv, tool, "install", *reqs, "--index-url", idx[index])
            assert venv.installer_of("torch") == tool
            made[tool, state] = venv
        return made[tool, state]

    return get


@pytest.fixture
def start(prepared, tmp_path) -> Callable[[str, str], Venv]:
    """A fresh copy of a prepared venv, for one test to change."""
    counter = iter(range(100))
    return lambda tool, state: prepared(tool, state).clone(tmp_path / f"venv{next(counter)}")


def run(venv: Venv, tool: str, *args: str, check: bool = True):
    return venv.pip(*args, check=check) if tool == "pip" else venv.uv(*args, check=check)


def torch_family(venv: Venv) -> Dict[str, str]:
    return {k: v for k, v in venv.installed().items() if k.startswith("torch")}


# --------------------------------------------------------------------------- a


@pytest.mark.parametrize("tool", TOOLS)
def test_a_unlabelled_pin_keeps_the_installed_build(tool, start, idx):
    """``torch==2.13.0`` is satisfied by 2.13.0+cpu: the cu126 index is never used."""
    venv = start(tool, "cpu")
    out = run(venv, tool, "install", f"torch=={T}", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cpu"}
    assert venv.module_version()["cuda"] is None
    if tool == "pip":
        assert "Requirement already satisfied" in out.stdout
    else:
        assert "- torch" not in out.stderr + out.stdout


# --------------------------------------------------------------------------- b


@pytest.mark.parametrize("tool", TOOLS)
def test_b_labelled_pin_replaces_the_build(tool, start, idx):
    venv = start(tool, "cpu")
    run(venv, tool, "install", f"torch=={T}+cu126", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cu126"}
    assert venv.module_version() == {"__version__": f"{T}+cu126", "cuda": "12.6", "hip": None}
    assert venv.installer_of("torch") == tool


# --------------------------------------------------------------------------- c


@pytest.mark.parametrize("tool", TOOLS)
def test_c_labelled_companions_are_replaced_too(tool, start, idx):
    venv = start(tool, "cpu+tv")
    run(
        venv,
        tool,
        "install",
        f"torch=={T}+cu126",
        f"torchvision=={TV}+cu126",
        "--index-url",
        idx["cu126"],
    )
    assert torch_family(venv) == {"torch": f"{T}+cu126", "torchvision": f"{TV}+cu126"}
    assert venv.module_version("torchvision.version")["cuda"] == "12.6"


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    "reqs",
    [(f"torch=={T}+cu126",), (f"torch=={T}+cu126", f"torchvision=={TV}")],
    ids=["torch-only", "torchvision-unlabelled"],
)
def test_c_companion_without_label_keeps_its_cpu_build(tool, reqs, start, idx):
    """torchvision depends on ``torch==2.13.0`` (no label), which 2.13.0+cu126 meets:
    nothing makes either manager touch torchvision, and the mix passes ``pip check``."""
    venv = start(tool, "cpu+tv")
    run(venv, tool, "install", *reqs, "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cu126", "torchvision": f"{TV}+cpu"}
    assert venv.module_version("torchvision.version")["cuda"] is None
    assert run(venv, tool, "check", check=False).returncode == 0


# --------------------------------------------------------------------------- d


def test_d_uv_reinstall_package_switches_to_the_index_build(start, idx):
    """``--reinstall-package torch`` drops the installed build from the resolution, so
    the unlabelled pin is met from the cu126 index: 2.13.0+cpu -> 2.13.0+cu126."""
    venv = start("uv", "cpu")
    venv.uv("install", f"torch=={T}", "--reinstall-package", "torch", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cu126"}
    assert venv.module_version()["cuda"] == "12.6"


def test_d_pip_force_reinstall_switches_to_the_index_build(start, idx):
    venv = start("pip", "cpu")
    venv.pip("install", f"torch=={T}", "--force-reinstall", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cu126"}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("state", "index", "after"),
    [("cpu", "cu126", "cu126"), ("cu126", "cpu", "cu126")],
    ids=["cpu-to-cu126", "cu126-to-cpu"],
)
def test_d_upgrade_follows_local_label_order(tool, state, index, after, start, idx):
    """``-U torch==2.13.0`` prefers the higher version, and local labels compare as
    strings: ``+cu126`` > ``+cpu``. So -U moves cpu to cu126, but never cu126 to cpu."""
    venv = start(tool, state)
    run(venv, tool, "install", "-U", f"torch=={T}", "--index-url", idx[index])
    assert torch_family(venv) == {"torch": f"{T}+{after}"}


# --------------------------------------------------------------------------- e


@pytest.mark.parametrize("tool", TOOLS)
def test_e_unlabelled_default_build_is_replaced_by_a_labelled_pin(tool, start, idx):
    venv = start(tool, "default")
    assert venv.module_version()["cuda"] == "12.8"
    run(venv, tool, "install", f"torch=={T}+cu126", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": f"{T}+cu126"}
    assert venv.module_version()["cuda"] == "12.6"


@pytest.mark.parametrize("tool", TOOLS)
def test_e_unlabelled_pin_keeps_the_default_build(tool, start, idx):
    venv = start(tool, "default")
    run(venv, tool, "install", f"torch=={T}", "--index-url", idx["cu126"])
    assert torch_family(venv) == {"torch": T}
    assert venv.module_version()["cuda"] == "12.8"


# --------------------------------------------------------------------------- uv's --torch-backend


def test_uv_torch_backend_ignores_the_local_index(start, idx):
    """With ``--torch-backend`` uv asks PyTorch's own index for torch and disregards
    ``--index-url``: offline, the install fails although the local index has torch.
    (The same command without the backend installs from it: test_b.)"""
    venv = start("uv", "cpu")
    venv.uv("uninstall", "torch")
    out = venv.uv(
        "install",
        "-v",
        f"torch=={T}",
        "--torch-backend=cu126",
        "--index-url",
        idx["cu126"],
        check=False,
    )
    assert out.returncode != 0
    assert f"{PYTORCH_INDEX}cu126/torch/" in out.stderr
    assert "torch" not in torch_family(venv)
    with pytest.raises(TorchBackendNotLocal):
        localize(f"uv pip install torch=={T} --torch-backend=cu126", idx)


# --------------------------------------------------------------------------- the harness


@pytest.mark.parametrize("tool", TOOLS)
def test_rendered_command_runs_locally(tool, start, idx):
    cmd = f"pip install torch=={T}+cu126 torchvision=={TV}+cu126 --index-url {PYTORCH_INDEX}cu126"
    if tool == "uv":
        cmd = "uv " + cmd
    assert localize(cmd, idx)[-2:] == ["--index-url", idx["cu126"]]
    venv = start(tool, "cpu+tv")
    venv.run_command(cmd, idx)
    assert torch_family(venv) == {"torch": f"{T}+cu126", "torchvision": f"{TV}+cu126"}


def test_localize_spellings(idx):
    cu, default = idx["cu126"], idx["default"]
    legacy = f"pip install torch==1.13.1+cu116 --extra-index-url={PYTORCH_INDEX}cu126/"
    assert localize(legacy, idx, default=default) == [
        "pip",
        "install",
        "torch==1.13.1+cu116",
        f"--extra-index-url={cu}",
        "--index-url",
        default,
    ]
    assert localize(["uv", "pip", "install", "torch", "-i", f"{PYTORCH_INDEX}cu126"], idx)[-1] == cu
    with pytest.raises(KeyError):
        localize(f"pip install torch --index-url {PYTORCH_INDEX}cu999", idx)
    with pytest.raises(ValueError):
        localize("pip install torch --index-url https://example.invalid/simple", idx)
    assert split_installer(["python3", "-m", "pip", "install", "x"]) == ("pip", ["install", "x"])


def test_machine_pip_config_does_not_leak(start):
    """No pip.conf, constraint or find-links of this machine reaches the venv's pip,
    and with no index named nothing can be found (the default index is empty)."""
    venv = start("pip", "cpu")
    listed = venv.pip("config", "list").stdout
    assert "constraint=''" in listed
    assert not [line for line in listed.splitlines() if not line.startswith(":env:")]
    assert "find-links" not in listed and "extra-index-url" not in listed
    venv.pip("uninstall", "-y", "torch")
    assert venv.pip("install", "torch", check=False).returncode != 0
    assert venv.uv("install", "torch", check=False).returncode != 0
    assert "torch" not in torch_family(venv)


def test_fake_wheel_is_well_formed(tmp_path):
    wheel = make_wheel(tmp_path, "torch", f"{T}+cu126", requires=["filelock"])
    assert wheel.name == f"torch-{T}+cu126-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(f"torch-{T}+cu126.dist-info/METADATA").decode()
        record = zf.read(f"torch-{T}+cu126.dist-info/RECORD").decode().splitlines()
        version_py = zf.read("torch/version.py").decode()
    assert f"Version: {T}+cu126" in meta and "Requires-Dist: filelock" in meta
    assert {line.split(",")[0] for line in record} == names
    assert "cuda: Optional[str] = '12.6'" in version_py
    url = build_index(tmp_path / "one", {"torch": [wheel]})
    page = (tmp_path / "one" / "simple" / "torch" / "index.html").read_text()
    assert url.endswith("/one/simple") and "torch-2.13.0%2Bcu126-py3-none-any.whl#sha256=" in page


def test_what_replaces_an_installed_torch(base, tmp_path):
    """The claims of the catalogue's install-replaced-torch family, by real pip: a package
    that needs torch>=1.5 leaves the installed torch under pip install -U (the default
    strategy, only-if-needed) and replaces it under --upgrade-strategy eager, as a
    requirements pin the installed build does not meet does."""
    wheels = tmp_path / "wheels"
    index = build_index(
        tmp_path / "index",
        {
            "torch": [make_wheel(wheels, "torch", v) for v in ("1.10.2", "1.11.0")],
            "torchpack": [make_wheel(wheels, "torchpack", "0.3.1", requires=["torch>=1.5.0"])],
        },
    )
    start = base.clone(tmp_path / "start")
    start.pip("install", "torch==1.10.2", "--index-url", index)
    runs = {
        "default": ("install", "-U", "torchpack"),
        "eager": ("install", "-U", "--upgrade-strategy", "eager", "torchpack"),
        "pin": ("install", "torch==1.11.0", "torchpack"),
    }
    after = {}
    for name, args in runs.items():
        venv = start.clone(tmp_path / name)
        venv.pip(*args, "--index-url", index)
        after[name] = venv.installed()["torch"]
    assert after == {"default": "1.10.2", "eager": "1.11.0", "pin": "1.11.0"}
