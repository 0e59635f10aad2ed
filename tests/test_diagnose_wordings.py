"""Wordings of facts that reporters write (issue 23, second round): each form read right, and
the nearby forms that must not be read (another setup's value, a requirement, two values)."""

from __future__ import annotations

from typing import Optional

from envcheck.diagnose import diagnose_text, read_text
from envcheck.diagnose.gpu_names import gpu_name
from envcheck.tables import load_tables

TABLES = load_tables()


def facts(text: str):  # type: ignore[no-untyped-def]
    return read_text(text, TABLES)


def manager(text: str) -> Optional[str]:
    stated = facts(text).extra.get("stated", {})
    return stated.get("package_manager")  # type: ignore[no-any-return]


def test_torchs_cuda_label_is_not_taken_for_torchs_version() -> None:
    f = facts("PyTorch has CUDA version 10.1 and torch_scatter has CUDA version 10.2").facts
    assert (f.torch.cuda, f.torch.version) == ("10.1", None)
    assert facts("PyTorch CUDA version: 11.8").facts.torch.cuda == "11.8"


def test_a_value_replaced_in_its_sentence_is_the_later_one() -> None:
    f = facts("Python 3.8 is on a legacy build cycle, so I just installed 3.11.").facts
    assert f.python.version == "3.11"


def test_another_setups_value_is_not_this_machines() -> None:
    r = facts("I have installed python 3.11. If I go back to python 3.10, pytorch installs.")
    assert r.facts.python.version == "3.11"
    f = facts("the only torch which works for pip version of flash_attn is 2.6.0.").facts
    assert not f.torch.companions
    assert facts("Built with pytorch 1.7, cuda 10.2").facts.torch.version == "1.7"


def test_a_pin_the_reporter_says_is_installed() -> None:
    f = facts("I have installed the requirements.txt as well as torch==2.1.1+cu118").facts
    assert (f.torch.version, f.torch.cuda) == ("2.1.1+cu118", "11.8")
    assert facts("the version torch==2.4.0a0+07cecf4168, how?").facts.torch.version
    assert facts("pip install torch==2.1.1").facts.torch.version is None


def test_two_managers_named_together_name_none() -> None:
    r = facts("a version of torch installed with `pip` and one with `conda`")
    assert "package_manager" not in r.extra.get("stated", {})


def test_the_environments_manager_among_several() -> None:
    assert manager("conda install pytorch\nSolving environment: failed\npip install x") == "conda"
    assert manager("mamba create -n a pytorch\nconda create -n a pytorch") == "mamba"
    assert manager("`uv sync`\nand then `pip install torch==2.6.0`") == "uv"
    assert manager("LibMambaUnsatisfiableError: Encountered problems while solving") == "conda"
    assert manager("uv add torch\npoetry add torch") is None


def test_pips_own_words_name_pip() -> None:
    assert manager("torch-1.0.0-cp37-cp37m-linux_x86_64.whl is not a supported wheel") is None
    assert manager("x.whl is not a supported wheel on this platform.") == "pip"
    text = (
        "torchvision 0.15.0 requires torch==2.0.0, but you have torch 1.13.1 which is incompatible."
    )
    assert manager(text) == "pip"


def test_conda_list_names_the_manager_that_installed_torch() -> None:
    pip = "[pip3] torch==1.12.1+cu113\n[conda] torch   1.12.1+cu113   pypi_0   pypi\n"
    assert manager(pip) == "pip"
    assert manager("[conda] pytorch  2.1.0  py3.11_cuda12.1_cudnn8_0  pytorch\n") == "conda"


def test_gpu_numbers_under_their_label() -> None:
    assert gpu_name("3060ti") == "NVIDIA GeForce RTX 3060 Ti"
    assert gpu_name("nVidia GeForce 4070TI") == "NVIDIA GeForce RTX 4070 Ti"
    assert gpu_name("1660 super") == "NVIDIA GeForce GTX 1660 SUPER"
    assert gpu_name("GeForce 930MX") == "NVIDIA GeForce 930MX"
    assert [g.name for g in facts("Video card: 3060ti").facts.nvidia.gpus] == [
        "NVIDIA GeForce RTX 3060 Ti"
    ]
    assert not facts("device: cuda:0").facts.nvidia.gpus


def test_templates_and_sentences() -> None:
    r = facts(
        "* CUDA/cuDNN version: 10.0.130 / 7.3.1\n"
        "* How you tried to install PyTorch Geometric (pip, source): pip\n"
        "it runs with python3.7 on my machine\n"
    )
    assert r.extra["stated"] == {"cudnn": "7.3.1", "package_manager": "pip"}
    assert r.facts.python.version == "3.7"
    assert manager("CUDA was installed only by anaconda") == "conda"
    assert facts("a freshly made python env (3.8.18)").facts.python.version == "3.8.18"
    assert facts("Torch without CUDA version 2.1.2").facts.torch.version == "2.1.2+cpu"


def test_os_lines_and_names() -> None:
    s = facts("### Platform\n\nDarwin 24.4.0 arm64\n").facts.system
    assert (s.os, s.machine) == ("Darwin", "arm64")
    assert facts("OS: Linux 18.04").facts.system.distro_name == "Linux 18.04"
    assert facts("OS: Linux-5.4.0-125-generic-x86_64").facts.system.distro_name is None
    assert facts("mac系统intel架构的").facts.system.os == "Darwin"
    assert facts("pve虚拟机装centos8").facts.system.distro_name == "Centos 8"
    assert facts("I am running Windows version 10.").facts.system.os_version == "10"


def test_an_installers_list_of_platforms_is_not_this_machine() -> None:
    text = (
        "Using Python 3.12.9 environment at: /Users/me/.venv\n"
        "hint: Wheels are available for `torch` (v2.11.0+cpu) on the following platforms: "
        "`manylinux_2_28_aarch64`, `win_amd64`\n"
    )
    s = facts(text).facts.system
    assert s.os == "Darwin" and s.machine == ""
    # Apple silicon named, but an x86_64 macOS tag too: which one pip sees is not said
    s = facts(text + "on my new mac M5 pro, `macosx_26_0_x86_64`\n").facts.system
    assert s.os == "Darwin" and s.machine == ""


def test_a_jetson_named_is_a_jetson() -> None:
    s = facts("I installed torch on my jetson nano(Jetpack 4.4 [L4T 32.4.3])").facts.system
    assert (s.jetson, s.os, s.machine) == ("jetson nano", "Linux", "aarch64")
    report = diagnose_text("HOW CAN I INSTALL TORCH WITH PY37 ON AGX XAVIER", TABLES)
    assert "TRC005" in {f.code for f in report.findings}
    assert not facts("a jetson in the title, on Windows 11").facts.system.jetson


def test_the_architecture_said_of_the_machine() -> None:
    assert facts("Get an aarch64 machine, e.g. GB200").facts.system.machine == "aarch64"
    assert facts("torch{platform_machine == 'aarch64'}").facts.system.machine == ""


def test_the_last_banner_is_the_present_setup() -> None:
    f = facts(
        "Ultralytics YOLOv8.0.53 Python-3.9.1 torch-1.8.1+cu111 CUDA:0 (NVIDIA GeForce RTX 3070, 8192MiB)\n"
        "Ultralytics YOLOv8.0.54 Python-3.10.6 torch-2.0.0+cpu CPU\n"
    ).facts
    assert (f.python.version, f.torch.version) == ("3.10.6", "2.0.0+cpu")


def test_wheels_pip_fetched_give_its_python() -> None:
    text = "Collecting torch>=1.5.0\n  Using cached torch-1.11.0-cp38-cp38-manylinux1_x86_64.whl\n"
    assert facts(text).facts.python.version == "3.8"
    assert facts("pip download --python-version 3.8 x\n" + text).facts.python.version == ""


def test_conda_builds_and_paths_and_nvidia_smi_fields() -> None:
    f = facts("pytorch   2.4.0   cuda118_py312h3690e1b_301   conda-forge\n").facts
    assert (f.torch.cuda, f.python.version) == ("11.8", "3.12")
    f = facts("/usr/local/cuda-9.0/include/crt/host_config.h:119:2: error: #error").facts
    assert f.toolkit.nvcc_version == "9.0"
    f = facts("reports `NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May`").facts
    assert f.nvidia.driver_version == "550.90.07"
    f = facts("Driver Version: 515.105.01\nCUDA Version: 11.7\n").facts
    assert (f.nvidia.driver_version, f.nvidia.cuda_driver_version) == ("515.105.01", "11.7")


def test_an_intel_mac_in_words_is_macos_x86_64() -> None:
    for said in (
        "uv add fails for torch on intel macs",
        "on a 2020 Intel MacBook Pro",
        "mac系统intel架构的",
        "MacBook Pro (Intel), macOS 13",
    ):
        f = facts(said).facts
        assert (f.system.os, f.system.machine) == ("Darwin", "x86_64"), said
    # an Intel Mac beside Apple silicon is two machines: the architecture is not taken
    both = facts("works on my M1 Mac, fails on an Intel Mac").facts
    assert not both.system.machine
    # Intel graphics on a PC is not a Mac
    assert not facts("Intel Iris Xe on Windows 11").facts.system.machine


def test_pip_in_chinese_asking_a_torch_the_index_lacks() -> None:
    """'pip's repository has no torch==2.4.1' on an Intel Mac: the resolver names the newest
    release with Intel-Mac wheels, read from the tables."""
    text = "mac系统intel架构的\uff0cpip仓库没有torch==2.4.1怎么办\uff1f"  # full-width comma, question mark
    report = diagnose_text(text, TABLES)
    found = [f for f in report.findings if f.name == "pip-no-torch-version"]
    assert found, [f.name for f in report.findings]
    intel = [r for r in TABLES.releases if "macos-x86_64" in r.platforms]
    newest = max(intel, key=lambda r: r.newest)
    assert "torch 2.4.1 has no wheels for macos-x86_64" in (found[0].fix or "")
    assert f"torch {newest.newest} is the newest" in (found[0].fix or "")
    assert manager("pip仓库没有torch==2.4.1") == "pip"


def test_a_reporter_saying_pip_gave_the_cpu_build() -> None:
    for said in (
        "trying to `pip install torch` resulted in the CPU version of torch stable",
        "the torch that requirements installs is the CPU build by default",
    ):
        names = [f.name for f in diagnose_text(said, TABLES).findings]
        assert "not-compiled-with-cuda" in names, said
    quiet = "the CPU version is slower than the CUDA version of torch"
    assert "not-compiled-with-cuda" not in [f.name for f in diagnose_text(quiet, TABLES).findings]


def test_the_command_under_a_no_wheel_error_installs_what_its_fix_says() -> None:
    """The installer was asked for torch 2.1.2+cu118 on an M1 Mac: the fix says to take 2.1.2
    without the label, and the command under it installs that release (not the newest); where
    the asked release has no build there at all, the command is the way out the fix names."""
    m1 = (
        "Running `pip install -r requirements.txt` on a Mac M1, python 3.11.5, results in:\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.2+cu118 "
        "(from versions: 2.0.0, 2.1.2, 2.2.0)\n"
    )
    intel = (
        "Intel MacBook Pro, Python 3.11.5\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.4.1 "
        "(from versions: 2.0.0, 2.2.2)\n"
    )
    newest_intel = max(
        (r for r in TABLES.releases if "macos-x86_64" in r.platforms), key=lambda r: r.newest
    ).newest
    for text, version in ((m1, "2.1.2"), (intel, str(newest_intel))):
        found = [f for f in diagnose_text(text, TABLES).findings if f.command]
        assert [f.name for f in found] == ["pip-no-torch-version"], found
        assert f"torch {version}" in (found[0].fix or "")
        assert found[0].command is not None and f"torch=={version}" in found[0].command
