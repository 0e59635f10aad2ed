"""What reporters type, read as facts (diagnose/labelled.py, mentions.py), and "no wheel"
explained by the resolver (diagnose/no_wheel.py): each form, and what must not be read."""

from __future__ import annotations

from envcheck.diagnose import diagnose_text, read_text
from envcheck.tables import load_tables

TABLES = load_tables()


def facts(text: str):  # type: ignore[no-untyped-def]
    return read_text(text, TABLES)


def test_issue_form_headings_tables_json_and_repl_echoes() -> None:
    r = facts(
        "### Python version\n\n3.10.12\n\n### PyTorch version\n2.1.0+cu121\n\n"
        "| torchvision | 0.16.0 |\n"
        '"platform_machine": "x86_64",\n'
        ">>> torch.cuda.nccl.version()\n(2, 18, 1)\n"
        "**NVIDIA driver**: 535.104.05\n"
        "Installed via pip. cuDNN 8.9.2.\n"
    )
    f = r.facts
    assert f.python.version == "3.10.12"
    assert (f.torch.version, f.torch.cuda) == ("2.1.0+cu121", "12.1")
    assert [(p.name, p.version) for p in f.torch.companions] == [("torchvision", "0.16.0")]
    assert f.system.machine == "x86_64"
    assert f.torch_runtime.nccl_version == "2.18.1"
    assert f.nvidia.driver_version == "535.104.05"
    assert r.extra["stated"] == {"package_manager": "pip", "cudnn": "8.9.2"}
    assert r.where["python.version"].startswith("labelled facts")


def test_what_is_asked_or_removed_is_not_installed() -> None:
    f = facts(
        "pip install torch==2.3.0 torchvision>=0.18\n"
        "Found existing installation: torch 1.10.2\n  Uninstalling torch-1.10.2:\n"
    ).facts
    assert f.torch.version is None and not f.torch.companions


def test_disagreeing_values_are_said_and_none_is_taken() -> None:
    r = facts("I had torch 1.13.1 before.\nNow torch: 2.0.1\n")
    assert r.facts.torch.version is None
    assert any("different values for the torch version" in n for n in r.notes)


def test_xformers_built_for_another_torch_gives_the_one_you_have() -> None:
    f = facts("    PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.11.0+cu130)\n").facts
    assert f.torch.version == "2.11.0+cu130"


def test_mentions_one_gpu_and_one_os_or_none() -> None:
    f = facts("I run it on 4 A100 GPUs with Ubuntu 22.04.\n").facts
    assert [g.name for g in f.nvidia.gpus] == ["A100"] * 4
    assert (f.system.os, f.system.distro_name) == ("Linux", "Ubuntu 22.04")
    two = facts("It works on my RTX 3090 but not on the GTX 1060.\n").facts
    assert two.nvidia.gpus == []
    paths = facts('  File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\__init__.py"\n').facts
    assert paths.system.os == "Windows"


def test_a_bare_torch_version_is_not_a_cpu_build() -> None:
    report = diagnose_text("torch 2.1.0 on my RTX 3090, Ubuntu 22.04\n", TABLES)
    assert not [f for f in report.findings if f.code == "TRC001"]
    assert "torch.build" in report.diagnosis["unstated"]


def _fix_of(text: str, name: str) -> str:
    found = [f for f in diagnose_text(text, TABLES).findings if f.name == name]
    assert found, name
    return found[0].fix


def test_no_wheel_the_versions_list_names_an_intel_mac() -> None:
    fix = _fix_of(
        "ERROR: Could not find a version that satisfies the requirement torch==2.4.1 "
        "(from versions: 1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, "
        "2.1.2, 2.2.0, 2.2.1, 2.2.2)\n",
        "pip-no-torch-version",
    )
    assert fix.startswith("The text decides it: torch 2.4.1 has no wheels for macos-x86_64")
    assert "torch 2.2.2 is the newest" in fix


def test_no_wheel_python_too_new_and_index_only_variants() -> None:
    fix = _fix_of(
        "Python version: 3.13.1\nOS: Windows 11 x64\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.0\n",
        "pip-no-torch-version",
    )
    assert "torch 2.1.0 has no wheels for Python 3.13" in fix
    fix = _fix_of(
        "Python 3.11.4 (main) [GCC]\nOS: Ubuntu 22.04 (x86_64)\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu121\n",
        "pip-no-torch-version",
    )
    assert "only on PyTorch's index" in fix and "whl/cu121" in fix


def test_no_wheel_undecided_says_which_fact_decides() -> None:
    fix = _fix_of(
        "OS: Ubuntu 22.04, python 3.10\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu121\n",
        "pip-no-torch-version",
    )
    assert fix.startswith("Which cause holds depends on the machine")
    assert "The text does not say the OS and architecture" in fix


def test_installers_say_the_driver_cuda_platform_and_interpreter() -> None:
    r = facts(
        "UnsatisfiableError: The following specifications were found to be incompatible "
        "with your system:\n\n  - feature:/linux-64::__cuda==11.4=0\n"
        "  - feature:|@/linux-64::__glibc==2.31=0\n"
        "  - pytorch-cuda=12.1 -> __cuda[version='>=12.1']\n"
        "Using CPython 3.12.3 interpreter at: /usr/bin/python3.12\n"
    )
    f = r.facts
    assert f.nvidia.cuda_driver_version == "11.4"  # the machine's, not the >=12.1 asked for
    assert (f.system.os, f.system.machine, f.system.glibc) == ("Linux", "x86_64", "2.31")
    assert f.python.version == "3.12.3"
    mamba = diagnose_text(
        "  - package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 "
        "conflicting with __cuda-10.2-0\n",
        TABLES,
    )
    assert [f.name for f in mamba.findings if f.code == "MSG001"] == ["conda-cuda-driver-too-old"]
    assert mamba.facts.nvidia.cuda_driver_version == "10.2"


def test_no_wheel_a_list_that_ends_early_is_an_old_report_not_an_intel_mac() -> None:
    fix = _fix_of(
        "Running pip install -r requirements.txt on a Mac M1, python 3.11.5, results in:\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.2+cu118 "
        "(from versions: 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0)\n",
        "pip-no-torch-version",
    )
    assert "torch 2.1.2 has no cu118 build for macos-arm64" in fix
    assert "x86_64" not in fix
