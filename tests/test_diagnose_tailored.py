"""Fixes worked out for the reporter (diagnose/tailored.py): the facts a message carries,
asked of the real tables. Each test states a fact of the tables in words, so a table change
that breaks it shows here."""

from __future__ import annotations

from typing import Optional

import pytest
from packaging.version import Version

from envcheck.compat import toolkit_misses
from envcheck.diagnose import diagnose_text
from envcheck.facts import Facts, GpuFacts
from envcheck.tables import Tables, load_tables
from envcheck.values import ComputeCapability


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def fix_of(text: str, tables: Tables, name: str) -> str:
    report = diagnose_text(text, tables)
    found: Optional[str] = next(
        (f.fix for f in report.findings if f.code == "MSG001" and f.name == name), None
    )
    assert found is not None, [f"{f.code} {f.name}" for f in report.findings]
    return found


MISMATCH = (
    "RuntimeError:\nThe detected CUDA version ({nvcc}) mismatches the version that was used to "
    "compile\nPyTorch ({torch}). Please make sure to use the same CUDA versions.\n"
)


def test_mismatch_names_both_ways_out(tables: Tables) -> None:
    fix = fix_of(MISMATCH.format(nvcc="11.8", torch="12.1"), tables, "cuda-version-mismatch")
    assert "CUDA 12.1 toolkit (torch's)" in fix
    assert "cu118 builds" in fix and "whl/cu118" in fix


def test_mismatch_takes_the_nearest_build_of_the_toolkits_major(tables: Tables) -> None:
    # no cu123 was ever published: an extension built by nvcc 12.3 fits a cu121 torch
    # (torch checks the major only), never a cu126 one chosen over it
    fix = fix_of(MISMATCH.format(nvcc="12.3", torch="11.8"), tables, "cuda-version-mismatch")
    assert "cu121 builds" in fix
    assert "CUDA 11.8 toolkit" in fix


def test_refused_architecture_names_its_first_toolkit(tables: Tables) -> None:
    fix = fix_of(
        "nvcc fatal   : Unsupported gpu architecture 'compute_86'\n",
        tables,
        "nvcc-unsupported-arch",
    )
    # sm_86 came in CUDA 11.1, after Ampere's sm_80 in 11.0
    assert "sm_86 (Ampere) compiles with CUDA 11.1 or newer" in fix
    assert "not in the text" in fix  # nvcc's version was not given: not guessed


def test_refused_old_architecture_with_a_newer_toolkit(tables: Tables) -> None:
    text = (
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.0, V11.0.221\n"
        "nvcc fatal   : Unsupported gpu architecture 'compute_30'\n"
    )
    fix = fix_of(text, tables, "nvcc-unsupported-arch")
    assert "sm_30 (Kepler) compiles with CUDA 6.0 to 10.x" in fix
    assert "nvcc here is 11.0.221, past its last CUDA major" in fix
    # the catalogue's cause (a toolkit too old) does not hold: this one is too new
    assert fix.startswith("CUDA 11 dropped Kepler (sm_30)")


def test_toolkit_misses_knows_sm86_came_after_ampere(tables: Tables) -> None:
    facts = Facts()
    facts.nvidia.gpus = [
        GpuFacts(index=0, name="RTX 3090", compute_capability=ComputeCapability.parse("8.6"))
    ]
    from packaging.version import Version

    assert toolkit_misses(facts, tables, Version("11.0")) == [
        ("RTX 3090", ComputeCapability.parse("8.6"), "CUDA 11.1 or newer")
    ]
    assert toolkit_misses(facts, tables, Version("11.1")) == []


NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def test_builds_for_the_gpu_fit_the_reporters_python(tables: Tables) -> None:
    text = "Ubuntu 20.04\nGPU: NVIDIA GeForce RTX 3060\nPython 3.8.10\n" + NO_KERNEL
    fix = fix_of(text, tables, "no-kernel-image")
    assert "RTX 3060 (sm_86)" in fix and "for Python 3.8" in fix
    # torch 2.4 is the last release with Python 3.8 wheels; a newer one would be wrong here
    assert "to torch 2.4 " in fix and "torch 2.15" not in fix
    assert "from torch 1.8 (cu111)" in fix  # the tables' oldest release with sm_86 kernels


def test_builds_of_the_reporters_release(tables: Tables) -> None:
    text = (
        "torch 2.8.0+cu126\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible "
        "with the current PyTorch installation.\n"
    )
    fix = fix_of(text, tables, "capability-not-compatible")
    assert "torch 2.8's cu128 and cu129 builds carry kernels for NVIDIA GeForce RTX 5090" in fix


def test_a_gpu_no_release_carries(tables: Tables) -> None:
    text = (
        "Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5.\n"
        "PyTorch no longer supports this GPU because it is too old.\n"
    )
    fix = fix_of(text, tables, "gpu-too-old-for-torch")
    assert "No torch release the tables hold" in fix
    assert "from source" in fix and "CPU" in fix


def test_no_gpu_in_the_text_keeps_the_catalogues_fix(tables: Tables) -> None:
    fix = fix_of(NO_KERNEL, tables, "no-kernel-image")
    rule = next(m for m in tables.messages if m.id == "no-kernel-image")
    assert fix.endswith(rule.fix)


REFUSED = "ERROR: {wheel} is not a supported wheel on this platform.\n"


def test_refused_wheel_of_another_python(tables: Tables) -> None:
    text = "Windows 10, python 3.11\n" + REFUSED.format(
        wheel="torchao-0.6.1+git-cp312-cp312-win_amd64.whl"
    )
    fix = fix_of(text, tables, "wheel-not-supported")
    assert "for Python 3.12 (cp312) and the Python here is 3.11" in fix
    assert "cp311 wheel" in fix


def test_refused_wheel_of_another_platform(tables: Tables) -> None:
    text = "OS: Linux x86_64\n" + REFUSED.format(
        wheel="torch-2.1.2%2Bcu121-cp311-cp311-win_amd64.whl"
    )
    fix = fix_of(text, tables, "wheel-not-supported")
    assert "This wheel is for win_amd64 and this machine's OS is Linux" in fix


def test_refused_wheel_with_nothing_known_names_its_python(tables: Tables) -> None:
    fix = fix_of(
        REFUSED.format(wheel="torch-2.0.0+nv23.05-cp38-cp38-linux_aarch64.whl"),
        tables,
        "wheel-not-supported",
    )
    assert "for Python 3.8 (cp38) on linux_aarch64" in fix
    assert "not in the text" in fix  # the refusing interpreter's version is not guessed
    assert "fits this machine" not in fix  # nor its platform


def test_refused_wheel_without_tags_keeps_the_catalogues_fix(tables: Tables) -> None:
    fix = fix_of(REFUSED.format(wheel="not-a-wheel-name.whl"), tables, "wheel-not-supported")
    rule = next(m for m in tables.messages if m.id == "wheel-not-supported")
    assert fix.endswith(rule.fix)


def test_an_extension_built_here_is_told_the_gpus_architecture(tables: Tables) -> None:
    text = (
        "GPU: NVIDIA GeForce RTX 3080\nexport TORCH_CUDA_ARCH_LIST=7.5\npython setup.py install\n"
        + NO_KERNEL
    )
    fix = fix_of(text, tables, "no-kernel-image")
    assert "rebuild it for the GPU's architecture: TORCH_CUDA_ARCH_LIST=8.6" in fix


def test_no_build_in_the_text_no_extension_advice(tables: Tables) -> None:
    fix = fix_of("GPU: NVIDIA GeForce RTX 3080\n" + NO_KERNEL, tables, "no-kernel-image")
    assert "TORCH_CUDA_ARCH_LIST" not in fix


def test_companion_pins_name_each_matching_set(tables: Tables) -> None:
    text = (
        "ERROR: Cannot install torch==1.13.0 and torchvision==0.15.2 because these package "
        "versions have conflicting dependencies.\nThe conflict is caused by:\n"
        "    The user requested torch==1.13.0\n    torchvision 0.15.2 depends on torch==2.0.1\n"
    )
    fix = fix_of(text, tables, "pip-companion-pins-conflict")
    # the tables' pairs: torchvision 0.14.0 was released with torch 1.13.0
    assert "torch 1.13.0 pairs with torchvision==0.14.0" in fix
    assert "torchvision 0.15.2 is for torch 2.0.1" in fix
    assert "torch==2.0.1 with torchvision==0.15.2" in fix


def test_companion_pins_of_a_release_the_tables_lack_keep_the_catalogues_fix(
    tables: Tables,
) -> None:
    text = "The user requested torch==1.4.0\ntorchvision 0.15.2 depends on torch==2.0.1\n"
    fix = fix_of(text, tables, "pip-companion-pins-conflict")
    rule = next(m for m in tables.messages if m.id == "pip-companion-pins-conflict")
    assert fix.endswith(rule.fix)


CPU_BUILD = "RuntimeError: Torch not compiled with CUDA enabled\n"


def test_cpu_build_without_a_driver_leaves_the_variant_to_the_reader(tables: Tables) -> None:
    fix = fix_of(CPU_BUILD, tables, "not-compiled-with-cuda")
    assert "pip uninstall torch torchvision torchaudio" in fix
    assert "/whl/cuXYZ" in fix and "does not give the driver" in fix


def _cpu_build_for(driver: str, tables: Tables) -> str:
    text = f"Python version: 3.11.9\nOS: Ubuntu 22.04\nNvidia driver version: {driver}\n"
    return fix_of(text + CPU_BUILD, tables, "not-compiled-with-cuda")


def test_cpu_build_with_a_new_driver_takes_the_newest_release_unpinned(
    tables: Tables,
) -> None:
    newest = max(tables.releases, key=lambda r: r.newest)
    fix = _cpu_build_for("999.99", tables)
    assert "pip install torch torchvision torchaudio --index-url" in fix
    assert f"torch {newest.minor}'s newest CUDA build" in fix


def test_cpu_build_with_an_old_driver_pins_a_release_whose_build_it_runs(
    tables: Tables,
) -> None:
    """Driver 535 runs no CUDA 13 build: the command pins an older release, and the variant
    it names is one the tables say driver 535 runs."""
    import re

    from envcheck.install.releases import cuda_names
    from envcheck.values import Platform, Variant

    fix = _cpu_build_for("535.104.05", tables)
    pin = re.search(r"torch==(\d+\.\d+)\.\* torchvision torchaudio --index-url \S+/(cu\d+)", fix)
    assert pin is not None, fix
    minor, variant = pin.groups()
    assert "need a newer driver" in fix
    release = next(r for r in tables.releases if r.minor == minor)
    assert Variant.parse(variant) in cuda_names(release, Platform.parse("linux-x86_64"))
    assert Variant.parse(variant).version is not None
    assert Variant.parse(variant).version.major == 12


def _trc001(text: str, tables: Tables) -> str:
    report = diagnose_text(text, tables)
    found = next((f.fix for f in report.findings if f.code == "TRC001"), None)
    assert found is not None, [f"{f.code} {f.name}" for f in report.findings]
    return found


def test_cpu_build_with_the_platform_open_names_the_x86_64_builds(tables: Tables) -> None:
    """torch 2.0.0+cpu beside an NVIDIA GPU, the platform not said: the CUDA builds of 2.0.0
    that x86_64 Linux and Windows both have, as a condition, with the commands."""
    from envcheck.install.releases import cuda_names
    from envcheck.values import Platform

    release = tables.release(Version("2.0.0"))
    assert release is not None
    builds = cuda_names(release, Platform.parse("windows-x86_64"))
    fix = _trc001("torch 2.0.0+cpu\nGPU: NVIDIA GeForce RTX 3070\nOS: Windows 10\n", tables)
    assert "depends on the architecture, not known here" in fix
    assert f"torch 2.0.0's CUDA builds for x86_64 Windows: {', '.join(map(str, builds))}" in fix
    assert "pip install torch==2.0.0 torchvision torchaudio --index-url" in fix
    # the driver said: the newest build it runs, for both systems
    fix = _trc001(
        "torch 2.1.0+cpu\nGPU: NVIDIA GeForce RTX 3060 Ti\nDriver Version: 551.86   "
        "CUDA Version: 12.4\n",
        tables,
    )
    assert "On x86_64 Linux or Windows, torch 2.1.0's cu121 build runs on this driver" in fix


REPLACED = (
    "  Attempting uninstall: torch\n    Found existing installation: torch {old}\n"
    "    Uninstalling torch-{old}:\n      Successfully uninstalled torch-{old}\n"
    "Successfully installed torch-2.1.2\n"
)


def test_a_replaced_cuda_build_is_put_back_from_its_index(tables: Tables) -> None:
    fix = fix_of(REPLACED.format(old="2.2.1+cu118"), tables, "install-replaced-torch")
    assert "The torch taken away was 2.2.1+cu118: pip install torch==2.2.1+cu118" in fix
    assert fix.rstrip(".").endswith("/whl/cu118")
    assert "--upgrade-strategy only-if-needed" in fix


def test_a_replaced_pypi_build_is_put_back_from_pypi(tables: Tables) -> None:
    fix = fix_of(REPLACED.format(old="1.10.2"), tables, "install-replaced-torch")
    assert "pip install torch==1.10.2 puts PyPI's build of it back" in fix
    report = diagnose_text("Successfully installed torch-2.1.2\n", tables)
    assert "install-replaced-torch" not in [f.name for f in report.findings]
