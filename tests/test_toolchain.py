"""The toolchain preflight: fake compilers, nvcc, ldconfig and CUDA homes as real scripts
and files in temporary folders (the probe runs them as it runs the real ones), plus the
real gcc and nvcc 13.0 of this machine where present."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from envcheck.checks.packages import check as packages_check
from envcheck.checks.toolchain import check as toolchain_check
from envcheck.facts import Facts, GpuFacts, PackageFacts
from envcheck.probes.toolchain import host_limits
from envcheck.probes.toolkit import probe_toolkit
from envcheck.tables import load_tables
from envcheck.values import ComputeCapability
from tests.runner import envcheck

TABLES = load_tables()
HOST_CONFIG = """
#if defined(__GNUC__)
#if __GNUC__ > 13
#error -- unsupported GNU version! gcc versions later than 13 are not supported!
#endif /* __GNUC__ > 13 */
#if (__clang_major__ >= 18) || (__clang_major__ < 3)
#error -- unsupported clang version!
#endif
#endif
#if _MSC_VER < 1910 || _MSC_VER >= 1940
#error -- unsupported Microsoft Visual Studio version!
#endif
"""


def script(folder: Path, name: str, output: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    lines = "".join(f"printf '%s\\n' {shlex.quote(line)}\n" for line in output.splitlines())
    path.write_text(f"#!/bin/sh\n{lines}")  # shell builtins only: PATH may hold nothing else
    path.chmod(path.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return path


def nvcc_output(version: str) -> str:
    major_minor = ".".join(version.split(".")[:2])
    return f"nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release {major_minor}, V{version}"


def cuda_home(root: Path, version: str) -> Path:
    script(root / "bin", "nvcc", nvcc_output(version))
    (root / "include" / "crt").mkdir(parents=True)
    (root / "include" / "crt" / "host_config.h").write_text(HOST_CONFIG)
    return root


def env_with(path: List[Path], **extra: str) -> Dict[str, str]:
    base = {"PATH": os.pathsep.join(str(p) for p in path), "HOME": str(path[0])}
    base.update(extra)
    return base


def judged(facts: Facts) -> List[str]:
    return [f.code for f in toolchain_check(facts, TABLES)]


def with_torch(facts: Facts, cuda: Optional[str] = "12.4") -> Facts:
    facts.torch.installed, facts.torch.version, facts.torch.cuda = (
        True,
        f"2.5.1+cu{(cuda or '').replace('.', '')}",
        cuda,
    )
    facts.python.version, facts.python.python_h = "3.11.7", True
    return facts


# --------------------------------------------------------------------------- probe


def test_host_limits_are_read_from_the_toolkits_own_header(tmp_path: Path) -> None:
    home = cuda_home(tmp_path / "cuda", "12.4.131")
    path, limits = host_limits(str(home))
    assert path == str(home / "include" / "crt" / "host_config.h")
    assert limits == {"gcc": "13", "clang": "17", "msvc": "1910-1939"}
    assert host_limits(str(tmp_path / "nowhere")) == (None, {})


@pytest.mark.skipif(
    not Path("/usr/local/cuda/include/crt/host_config.h").exists(), reason="no CUDA toolkit"
)
def test_the_real_cuda_13_header_here() -> None:
    _, limits = host_limits("/usr/local/cuda")
    assert limits["gcc"] == "15" and limits["clang"] == "20"


def test_compilers_nvcc_and_ninja_are_run_and_read(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    script(bin_, "gcc", "gcc (GCC) 16.1.0\nCopyright (C) 2026 Free Software Foundation, Inc.")
    script(bin_, "g++", "g++ (GCC) 16.1.0\nCopyright (C) 2026 Free Software Foundation, Inc.")
    script(bin_, "clang", "clang version 19.1.7\nTarget: x86_64-pc-linux-gnu")
    script(bin_, "ninja", "1.12.1")
    home = cuda_home(tmp_path / "cuda", "12.4.131")
    tk = probe_toolkit(env_with([bin_, home / "bin"]))
    kinds = {c.name: (c.kind, c.version) for c in tk.compilers}
    assert kinds == {
        "gcc": ("gcc", "16.1.0"),
        "g++": ("gcc", "16.1.0"),
        "clang": ("clang", "19.1.7"),
    }
    assert tk.cxx == str(bin_ / "g++") and (tk.ninja_version, tk.nvcc_version) == (
        "1.12.1",
        "12.4.131",
    )
    assert tk.nvcc_host_max["gcc"] == "13" and tk.toolchain_probed


@pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("nvcc") is None, reason="no gcc/nvcc here"
)
def test_the_real_gcc_and_nvcc_here_are_read_and_accepted() -> None:
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit()
    gcc = next(c for c in facts.toolkit.compilers if c.name == "gcc")
    assert gcc.kind == "gcc" and gcc.version and gcc.version[0].isdigit()
    assert facts.toolkit.nvcc_version and facts.toolkit.nvcc_host_max.get("gcc")
    assert "TK004" not in judged(facts)  # gcc 12 under CUDA 13.0's limit of 15


def test_the_interpreters_headers_are_looked_for() -> None:
    from envcheck.probes import probe

    facts = probe(deep=False)
    assert facts.python.include_dir and facts.python.python_h == os.path.isfile(
        os.path.join(facts.python.include_dir, "Python.h")
    )


# --------------------------------------------------------------------------- findings


def test_tk002_no_compiler(tmp_path: Path) -> None:
    home = cuda_home(tmp_path / "cuda", "12.4.131")
    facts = with_torch(Facts())
    facts.system.os, facts.system.distro_id = "Linux", "ubuntu"
    facts.toolkit = probe_toolkit(env_with([home / "bin"]))
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK002"]
    assert "sudo apt install build-essential" in finding.fix and 'backend="eager"' in finding.fix
    facts.system.distro_id = "fedora"
    assert (
        "dnf install gcc gcc-c++"
        in next(f for f in toolchain_check(facts, TABLES) if f.code == "TK002").fix
    )


def test_tk003_missing_python_headers() -> None:
    facts = with_torch(Facts())
    facts.toolkit.toolchain_probed = True
    facts.toolkit.compilers = []
    facts.python.python_h, facts.python.include_dir = False, "/usr/include/python3.11"
    facts.system.os, facts.system.distro_id = "Linux", "debian"
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK003"]
    assert "python3.11-dev" in finding.fix
    facts.python.python_h = None  # not looked at: not judged
    assert "TK003" not in judged(facts)


def test_tk004_a_gcc_newer_than_nvcc_allows(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    script(bin_, "g++", "g++ (GCC) 14.2.0\nCopyright (C) Free Software Foundation")
    home = cuda_home(tmp_path / "cuda", "12.4.131")
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit(env_with([bin_, home / "bin"]))
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK004"]
    assert finding.title == "gcc 14.2.0 is newer than nvcc 12.4.131 supports (gcc 13 at most)"
    assert "NVCC_CCBIN=g++-13" in finding.fix
    script(bin_, "g++", "g++ (GCC) 13.3.0\nFree Software Foundation")
    facts.toolkit = probe_toolkit(env_with([bin_, home / "bin"]))
    assert "TK004" not in judged(facts)


def test_tk005_cuda_home_and_path_disagree(tmp_path: Path) -> None:
    on_path = cuda_home(tmp_path / "cuda-13.0", "13.0.88")
    other = cuda_home(tmp_path / "cuda-12.4", "12.4.131")
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit(env_with([on_path / "bin"], CUDA_HOME=str(other)))
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK005"]
    assert "nvcc 12.4.131" in finding.evidence[0] and "nvcc 13.0.88" in finding.evidence[1]
    facts.toolkit = probe_toolkit(env_with([on_path / "bin"], CUDA_HOME=str(on_path)))
    assert "TK005" not in judged(facts)


@pytest.mark.parametrize(
    "value, capability, missing",
    [
        ("8.0;8.6", "8.9", False),  # same major, an older minor runs
        ("8.0;8.6", "9.0", True),
        ("7.5+PTX", "8.9", False),  # PTX at most the GPU's is compiled at load
        ("8.6 9.0", "7.5", True),
        ("Ampere", "9.0", False),  # names are not judged
    ],
)
def test_tk006_arch_list(value: str, capability: str, missing: bool) -> None:
    facts = with_torch(Facts())
    facts.toolkit.toolchain_probed, facts.toolkit.compilers = True, []
    facts.environment["TORCH_CUDA_ARCH_LIST"] = value
    facts.nvidia.gpus = [
        GpuFacts(index=0, name="GPU", compute_capability=ComputeCapability.parse(capability))
    ]
    assert ("TK006" in judged(facts)) is missing


def test_tk007_libcuda_without_its_unversioned_link(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libcuda.so.1").write_text("")
    bin_ = tmp_path / "bin"
    script(bin_, "ldconfig", f"\tlibcuda.so.1 (libc6,x86-64) => {lib / 'libcuda.so.1'}")
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit(env_with([bin_]))
    assert facts.toolkit.libcuda == ""
    assert "TK007" in judged(facts)
    (lib / "libcuda.so").symlink_to("libcuda.so.1")
    facts.toolkit = probe_toolkit(env_with([bin_]))
    assert facts.toolkit.libcuda == str(lib / "libcuda.so") and "TK007" not in judged(facts)


def test_pkg005_uses_torchs_own_triton_pin() -> None:
    facts = with_torch(Facts())
    facts.torch.triton_requirement = "triton==3.5.0"
    codes = lambda f: [x for x in packages_check(f, TABLES) if x.code == "PKG005"]  # noqa: E731
    (missing,) = codes(facts)
    assert missing.title.endswith("triton is not installed")
    facts.torch.companions = [PackageFacts("triton", "3.4.0")]
    (wrong,) = codes(facts)
    assert "triton 3.4.0 is installed" in wrong.title
    facts.torch.companions = [PackageFacts("triton", "3.5.0")]
    assert codes(facts) == []


def test_triton_requirement_is_read_from_metadata(tmp_path: Path) -> None:
    from envcheck.probes.torch_static import triton_requirement

    dist = tmp_path / "torch-2.9.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Name: torch\nVersion: 2.9.1\nRequires-Dist: filelock\n"
        'Requires-Dist: triton==3.5.1; platform_system == "Linux" and platform_machine == "x86_64"\n\n'
        "Requires-Dist: triton==9.9 (in the description: not a header)\n"
    )
    assert triton_requirement(str(dist)) == "triton==3.5.1"


def test_tk009_a_pascal_gpu_and_torch_compile() -> None:
    facts = with_torch(Facts())
    facts.toolkit.toolchain_probed, facts.toolkit.compilers = True, []
    facts.nvidia.gpus = [
        GpuFacts(
            index=0,
            name="NVIDIA GeForce GTX 1080",
            compute_capability=ComputeCapability.parse("6.1"),
        )
    ]
    facts.nvidia.driver_version = "550.54.14"
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK009"]
    assert 'backend="aot_eager"' in finding.fix
    facts.nvidia.gpus[0].compute_capability = ComputeCapability.parse("7.0")
    assert "TK009" not in judged(facts)


def test_tk010_a_cache_that_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit(
        env_with([tmp_path], TORCHINDUCTOR_CACHE_DIR=str(blocker / "cache"))
    )
    inductor = next(c for c in facts.toolkit.caches if c.name == "inductor")
    assert (inductor.source, inductor.writable) == ("TORCHINDUCTOR_CACHE_DIR", False)
    (finding,) = [f for f in toolchain_check(facts, TABLES) if f.code == "TK010"]
    assert "TORCHINDUCTOR_CACHE_DIR" in finding.fix


def test_a_pasted_report_is_not_judged_for_the_toolchain() -> None:
    facts = with_torch(Facts())  # toolchain_probed False: nothing was looked at
    facts.python.python_h = False
    assert judged(facts) == []


def test_check_end_to_end_with_a_too_new_gcc(tmp_path: Path) -> None:
    """The console script, with a fake gcc 16 first on PATH and the real nvcc 13.0 here."""
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc here")
    bin_ = tmp_path / "bin"
    script(bin_, "c++", "c++ (GCC) 16.1.0\nCopyright (C) Free Software Foundation")
    path = f"{bin_}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"
    run = envcheck(
        "check",
        "--no-deep",
        env={
            "PATH": path,
            "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
            "ENVCHECK_FACT_TORCH_CUDA": "13.0",
        },
    )
    assert "WARNING TK004 gcc 16.1.0 is newer than nvcc 13.0" in " ".join(run.stdout.split()), (
        run.stdout
    )


@pytest.mark.parametrize(
    "requires, fires",
    [
        ('["setuptools", "torch"]', True),  # any torch: pip picks the newest
        ('["setuptools", "torch>=2.0"]', True),
        ('["torch==2.4.*"]', True),  # excludes the installed 2.5.1
        ('["torch==2.5.1"]', False),  # exactly the installed one
        ('["setuptools"]', False),
    ],
)
def test_tk011_build_isolation_builds_against_another_torch(
    tmp_path: Path, requires: str, fires: bool
) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text(f"[build-system]\nrequires = {requires}\n")
    facts = with_torch(Facts())
    facts.toolkit = probe_toolkit(env_with([tmp_path]))
    from envcheck.probes.toolchain import probe_toolchain

    probe_toolchain(facts.toolkit, env_with([tmp_path]), cwd=str(project / "src"))
    found = [f for f in toolchain_check(facts, TABLES) if f.code == "TK011"]
    assert bool(found) is fires
    if fires:
        assert "--no-build-isolation" in found[0].fix
        assert str(project / "pyproject.toml") in found[0].evidence[0]


def test_a_failed_compile_smoke_follows_the_toolchain_finding_that_explains_it() -> None:
    from envcheck.core import check as core_check
    from envcheck.smoke.runner import SmokeResult

    facts = with_torch(Facts(), cuda=None)
    facts.toolkit.toolchain_probed, facts.toolkit.compilers = True, []  # no compiler here
    failed = SmokeResult(
        "compile", "cpu", "failed", 3.0, error="InvalidCxxCompiler: No working C++ compiler found"
    )
    report = core_check(
        facts=facts,
        smoke=[failed],
        requirements=False,
        observed=("torch", "toolkit", "python", "system"),
    )
    (smk,) = [f for f in report.findings if f.code == "SMK003"]
    assert smk.caused_by == "TK002"
    assert [
        f.code for f in report.follow_ons(next(f for f in report.findings if f.code == "TK002"))
    ] == ["SMK003"]
    facts.toolkit.compilers = probe_toolkit().compilers or [
        __import__("envcheck.facts").facts.CompilerFacts("gcc", "/usr/bin/gcc", "gcc", "12.2.0")
    ]
    report = core_check(
        facts=facts,
        smoke=[failed],
        requirements=False,
        observed=("torch", "toolkit", "python", "system"),
    )
    (smk,) = [f for f in report.findings if f.code == "SMK003"]
    assert smk.caused_by is None  # nothing here explains it: the error itself is the finding
