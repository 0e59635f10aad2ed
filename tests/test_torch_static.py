"""The static torch probe: real files, no import of torch."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from envcheck import builds
from envcheck.probes.packages import normalise, parse_metadata_dir
from envcheck.probes.torch_static import probe_torch_static, read_version_file
from tests.sitetree import add_dist, add_torch


def probe_site(*sites: Path, prefix: Optional[Path] = None):
    origin = None
    for site in sites:
        init = site / "torch" / "__init__.py"
        if init.exists():
            origin = str(init)
            break
    return probe_torch_static([str(s) for s in sites], origin, str(prefix) if prefix else None)


@pytest.mark.parametrize(
    ("version", "cuda", "hip", "variant", "described"),
    [
        ("2.13.0+cpu", None, None, "cpu", "CPU-only build"),
        ("2.8.0+cu128", "12.8", None, "cu128", "CUDA 12.8 build"),
        ("2.8.0", "12.8", None, "cu128", "CUDA 12.8 build"),  # default-index Linux wheel
        (
            "2.5.1+rocm6.2",
            None,
            "6.2.41133-dd7f95766",
            "rocm6.2",
            "ROCm build (HIP 6.2.41133-dd7f95766)",
        ),
        ("2.6.0a0+ecf3bae40a", "12.8", None, "cu128", "CUDA 12.8 build"),  # NGC container
        ("2.9.0.dev20250601+cu128", "12.8", None, "cu128", "CUDA 12.8 build"),  # nightly
        ("1.8.1+cu111", "11.1", None, "cu111", "CUDA 11.1 build"),
        ("2.1.0+cpu.cxx11.abi", None, None, "cpu", "CPU-only build"),
    ],
)
def test_builds_of_every_kind(tmp_path, version, cuda, hip, variant, described) -> None:
    site = tmp_path / "site-packages"
    add_torch(site, version, cuda=cuda, hip=hip, old_style=version.startswith("1."))
    facts = probe_site(site)
    assert facts.installed and facts.version == version and facts.dist_version == version
    assert (facts.cuda, facts.hip) == (cuda, hip)
    assert facts.installer == "pip" and facts.location == str(site / "torch")
    assert facts.debug is False and facts.git_version
    assert builds.variant(facts.version, facts.cuda, facts.hip) == variant
    assert builds.describe(facts.version, facts.cuda, facts.hip) == described


def test_companions_and_cuda_runtime_wheels(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    add_torch(site, "2.7.1+cu126", cuda="12.6")
    add_dist(site, "torchvision", "0.22.1+cu126")
    add_dist(site, "torchaudio", "2.7.1+cu126", installer="uv")
    add_dist(site, "triton", "3.3.1")
    add_dist(site, "nvidia-cudnn-cu12", "9.5.1.17")
    add_dist(site, "nvidia-nccl-cu12", "2.26.2")
    add_dist(site, "nvidia-cuda-runtime-cu12", "12.6.77")
    add_dist(site, "nvidia-ml-py", "12.570.86")  # NVML bindings, not a CUDA runtime
    add_dist(site, "numpy", "2.2.0")  # torch's extension is built against one NumPy ABI
    add_dist(site, "requests", "2.32.3")  # unrelated
    facts = probe_site(site)
    got = {(p.name, p.version, p.installer) for p in facts.companions}
    assert got == {
        ("torchvision", "0.22.1+cu126", "pip"),
        ("torchaudio", "2.7.1+cu126", "uv"),
        ("triton", "3.3.1", "pip"),
        ("nvidia-cudnn-cu12", "9.5.1.17", "pip"),
        ("nvidia-nccl-cu12", "2.26.2", "pip"),
        ("nvidia-cuda-runtime-cu12", "12.6.77", "pip"),
        ("numpy", "2.2.0", "pip"),
    }


def test_duplicate_installs_across_path_entries(tmp_path: Path) -> None:
    user_site = tmp_path / "user-site"
    site = tmp_path / "site-packages"
    add_torch(user_site, "2.3.1+cu121", cuda="12.1")
    add_torch(site, "2.7.1+cu128", cuda="12.8")
    facts = probe_site(user_site, site)
    assert facts.version == "2.3.1+cu121"  # the first on sys.path is what imports
    assert [(d.version, d.location) for d in facts.installs] == [
        ("2.3.1+cu121", str(user_site)),
        ("2.7.1+cu128", str(site)),
    ]


def test_half_removed_install_leaves_two_dist_infos(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    add_dist(site, "torch", "2.1.0")
    add_torch(site, "2.4.0+cu121", cuda="12.1")
    facts = probe_site(site)
    assert len(facts.installs) == 2
    assert facts.version == "2.4.0+cu121"


def test_files_of_one_version_metadata_of_another(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    add_torch(site, "2.5.0+cu124", cuda="12.4", dist=False)
    add_dist(site, "torch", "2.4.1+cu121")
    facts = probe_site(site)
    assert facts.version == "2.5.0+cu124" and facts.dist_version == "2.4.1+cu121"


def test_conda_install_is_read_from_conda_meta(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    site = prefix / "lib" / "python3.11" / "site-packages"
    add_torch(site, "2.5.1", cuda="12.1", installer="conda")
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    for name in (
        "pytorch-2.5.1-py3.11_cuda12.1_cudnn9.1.0_0.json",
        "pytorch-cuda-12.1-ha16c6d3_6.json",
        "pytorch-mutex-1.0-cuda.json",
        "python-3.11.10-hc5c86c4_3.json",
        "libgcc-ng-14.2.0-h69a702a_1.json",
        "history",
    ):
        (meta / name).write_text("{}")
    facts = probe_site(site, prefix=prefix)
    assert facts.installer == "conda"
    assert [(p.name, p.version, p.build) for p in facts.conda_packages] == [
        ("pytorch", "2.5.1", "py3.11_cuda12.1_cudnn9.1.0_0"),
        ("pytorch-cuda", "12.1", "ha16c6d3_6"),
        ("pytorch-mutex", "1.0", "cuda"),
    ]


def test_not_installed(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    add_dist(site, "numpy", "2.2.0")
    facts = probe_site(site)
    assert facts.installed is False and facts.version is None and facts.installs == []


def test_garbage_version_file_does_not_raise(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    pkg = add_torch(site, "2.8.0+cu128", cuda="12.8")
    (pkg / "version.py").write_text("__version__ = get_version()\ncuda = '12.8'\n\x00\x01 junk")
    facts = probe_site(site)
    assert facts.version == "2.8.0+cu128"  # falls back to the dist-info
    assert facts.cuda == "12.8"


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("torch-2.8.0+cu128.dist-info", ("torch", "2.8.0+cu128")),
        ("nvidia_cudnn_cu12-9.1.0.70.dist-info", ("nvidia-cudnn-cu12", "9.1.0.70")),
        ("torch-1.8.1-py3.8.egg-info", ("torch", "1.8.1")),
        ("torch.egg-link", None),
        ("torch", None),
        ("-1.0.dist-info", None),
    ],
)
def test_metadata_folder_names(entry: str, parsed) -> None:
    assert parse_metadata_dir(entry) == parsed


def test_normalise() -> None:
    assert normalise("Nvidia_CUDNN.cu12") == "nvidia-cudnn-cu12"


def test_version_file_of_the_real_torch() -> None:
    spec = importlib.util.find_spec("torch")
    if spec is None:
        pytest.skip("torch is not installed in this environment")
    info = read_version_file(str(Path(spec.origin).parent / "version.py"))
    assert info["__version__"] == importlib.metadata.version("torch")


def test_the_real_torch_without_importing_it() -> None:
    """Against the torch installed here, in a child so 'torch not imported' is checkable."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed in this environment")
    code = (
        "import sys, json\n"
        "from envcheck.probes.python_env import snapshot\n"
        "from envcheck.probes.torch_static import probe_torch_static\n"
        "s = snapshot()\n"
        "f = probe_torch_static(s['sys_path'], s['torch_origin'], s['prefix'])\n"
        "print(json.dumps([f.version, f.installer, 'torch' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    version, installer, imported = __import__("json").loads(out.stdout)
    assert version == importlib.metadata.version("torch")
    assert installer in ("pip", "uv", "conda")
    assert imported is False


@pytest.mark.parametrize(
    "text",
    [
        "'2.13.0+cpu'",
        '"12.8"',
        "None",
        "True",
        "False",
        "''",
        "'a' 'b'",
        "'''2.1'''",
        "'it\\'s'",
        "r'\\d'",
        "b'x'",
        "'tab\\there'",
        "12",
        "('a', 1)",
        '"mixed\'"',
    ],
)
def test_a_version_file_literal_reads_as_ast_reads_it(text: str) -> None:
    """The values of torch/version.py are read without importing ast where they are plain
    (a quoted string with no escape, None, True, False); anything else is ast's."""
    import ast

    from envcheck.probes.torch_static import _literal

    assert _literal(text) == ast.literal_eval(text)
    assert type(_literal(text)) is type(ast.literal_eval(text))


@pytest.mark.parametrize("text", ["f'{x}'", "'unterminated", "__import__('os')", "None None"])
def test_what_is_no_literal_is_refused_as_ast_refuses_it(text: str) -> None:
    from envcheck.probes.torch_static import _literal

    with pytest.raises((ValueError, SyntaxError)):
        _literal(text)
