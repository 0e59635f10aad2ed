"""Will torch.compile and extension builds work here? The toolchain after the wheel.

torch.compile's Inductor compiles C++ (CPU) and Triton kernels (GPU): it needs a C
compiler, Python's headers, writable caches, a Triton that matches torch, a GPU Triton
supports and a libcuda.so to link. Extension builds (flash-attn, apex, a project's ops)
need nvcc from the CUDA_HOME torch uses, a host compiler nvcc accepts, and an arch list
that covers the GPUs here. Each rule judges only what the probe looked at
(``toolkit.toolchain_probed``): a pasted report without it is not judged.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from ..facts import CompilerFacts, Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..values import ComputeCapability, OsFamily
from ._util import has_nvidia_gpu

# torch/_inductor/exc.py (torch 2.13, read here): "Triton only supports devices of CUDA Capability >= 7.0"
TRITON_MIN_CAPABILITY = ComputeCapability(7, 0)


def check(facts: Facts, tables: Tables) -> List[Finding]:
    tk = facts.toolkit
    if not tk.toolchain_probed:
        return []
    findings: List[Finding] = []
    findings += _compiler(facts)
    findings += _python_headers(facts)
    findings += _host_compiler(facts)
    findings += _cuda_home(facts)
    findings += _arch_list(facts)
    findings += _libcuda(facts)
    findings += _triton(facts)
    findings += _caches(facts)
    findings += _build_isolation(facts)
    return findings


def _distro_packages(facts: Facts, what: str) -> str:
    """The install line for a C toolchain (``what`` = "compiler") or Python's headers."""
    s, py = facts.system, facts.python
    xy = ".".join(py.version.split(".")[:2]) if py.version else "3"
    distro = f"{s.distro_id or ''} {s.distro_name or ''}".lower()
    if s.family is OsFamily.MACOS:
        return "`xcode-select --install` (the Command Line Tools)"
    if s.family is OsFamily.WINDOWS:
        return (
            'Visual Studio Build Tools with "Desktop development with C++", then use the '
            '"x64 Native Tools" prompt'
            if what == "compiler"
            else 'the python.org installer\'s headers (reinstall with "Include development files")'
        )
    if any(d in distro for d in ("fedora", "rhel", "red hat", "centos", "rocky", "alma", "amzn")):
        pkg = "gcc gcc-c++" if what == "compiler" else f"python{xy}-devel"
        return f"`sudo dnf install {pkg}`"
    if "alpine" in distro:
        return "`apk add build-base`" if what == "compiler" else "`apk add python3-dev`"
    if "arch" in distro:
        return "`sudo pacman -S base-devel`" if what == "compiler" else "`sudo pacman -S python`"
    pkg = "build-essential" if what == "compiler" else f"python{xy}-dev"
    return f"`sudo apt install {pkg}`"


def _compiler(facts: Facts) -> List[Finding]:
    tk = facts.toolkit
    if not facts.torch.installed or tk.compilers:
        return []
    return [
        RULES["TK002"](
            "No C/C++ compiler found: torch.compile and extension builds will fail",
            [
                "no cc, c++, gcc, g++, clang or clang++ on PATH",
                *(
                    f"{v}={facts.environment[v]}: not found"
                    for v in ("CC", "CXX")
                    if facts.environment.get(v)
                ),
            ],
            f"Install one: {_distro_packages(facts, 'compiler')}. torch.compile's Inductor "
            'compiles C++ ("InvalidCxxCompiler", "Failed to find C compiler"); until then '
            '`torch.compile(model, backend="eager")` runs without compiling.',
        )
    ]


def _python_headers(facts: Facts) -> List[Finding]:
    py = facts.python
    if not facts.torch.installed or py.python_h is not False:
        return []
    return [
        RULES["TK003"](
            f"Python.h is missing: Python {py.version}'s headers are not installed",
            [f"no Python.h in {py.include_dir}", f"interpreter {py.executable}"],
            f"Install them: {_distro_packages(facts, 'headers')}. torch.compile (Triton's "
            "launcher, Inductor's C++ wrapper) and every extension build include Python.h "
            '("fatal error: Python.h: No such file or directory").',
        )
    ]


def _major(version: Optional[str]) -> Optional[int]:
    match = re.match(r"(\d+)", version or "")
    return int(match.group(1)) if match else None


def _cxx(facts: Facts) -> Optional[CompilerFacts]:
    tk = facts.toolkit
    return next((c for c in tk.compilers if c.path == tk.cxx or c.name == tk.cxx), None)


def _host_compiler(facts: Facts) -> List[Finding]:
    tk = facts.toolkit
    cxx = _cxx(facts)
    if not tk.nvcc_path or cxx is None or cxx.kind not in ("gcc", "clang"):
        return []
    limit, have = _major(tk.nvcc_host_max.get(cxx.kind)), _major(cxx.version)
    if limit is None or have is None or have <= limit:
        return []
    name = "gcc" if cxx.kind == "gcc" else "clang"
    return [
        RULES["TK004"](
            f"{name} {cxx.version} is newer than nvcc {tk.nvcc_version} supports ({name} {limit} at most)",
            [
                f"host compiler {cxx.path} ({name} {cxx.version})",
                f"nvcc {tk.nvcc_version}: {tk.host_config} allows {name} <= {limit}",
            ],
            f'nvcc stops with "unsupported {"GNU" if name == "gcc" else "clang"} version". Install '
            f"{name} {limit} or older beside it and point the build at it (`export "
            f"NVCC_CCBIN={'g++' if name == 'gcc' else 'clang++'}-{limit}`, or CC/CXX), or use a "
            "newer CUDA toolkit. `-allow-unsupported-compiler` silences the check at your risk.",
        )
    ]


def _cuda_home(facts: Facts) -> List[Finding]:
    tk = facts.toolkit
    if not tk.cuda_home_nvcc:
        return []
    same = tk.cuda_home_nvcc_version == tk.nvcc_version
    return [
        RULES["TK005"](
            f"{tk.cuda_home_source} points to another CUDA toolkit than the nvcc on PATH",
            [
                f"{tk.cuda_home_source}={tk.cuda_home}: nvcc {tk.cuda_home_nvcc_version or '?'}",
                f"PATH: {tk.nvcc_path}: nvcc {tk.nvcc_version or '?'}",
            ],
            "torch.utils.cpp_extension builds with CUDA_HOME's nvcc, while `nvcc --version` in "
            "this shell answers for the other"
            + (" (the same version here, from two installs)" if same else "")
            + ". Make them one: `export CUDA_HOME=/usr/local/cuda-X.Y` and put `$CUDA_HOME/bin` "
            "first on PATH.",
            severity="info" if same else None,
        )
    ]


def _arch_entries(value: str) -> Optional[List[Tuple[ComputeCapability, bool]]]:
    """TORCH_CUDA_ARCH_LIST ("7.5;8.0 8.6+PTX") as (capability, ptx) pairs; None when it
    holds names ("Ampere") or anything else this reading does not know."""
    out = []
    for item in re.split(r"[;\s]+", value.strip()):
        if not item:
            continue
        match = re.fullmatch(r"(\d+)\.(\d+)[a-z]?(\+PTX)?", item)
        if not match:
            return None
        out.append(
            (ComputeCapability(int(match.group(1)), int(match.group(2))), bool(match.group(3)))
        )
    return out


def _arch_list(facts: Facts) -> List[Finding]:
    value = facts.environment.get("TORCH_CUDA_ARCH_LIST")
    if not value or not facts.nvidia.gpus:
        return []
    entries = _arch_entries(value)
    if entries is None:
        return []
    missing = []
    for gpu in facts.nvidia.gpus:
        cc = gpu.compute_capability
        if cc is None:
            continue
        covered = any(
            (e.major == cc.major and e.minor <= cc.minor) or (ptx and e <= cc) for e, ptx in entries
        )
        if not covered:
            missing.append(f"{gpu.name} ({cc})")
    if not missing:
        return []
    return [
        RULES["TK006"](
            f"TORCH_CUDA_ARCH_LIST leaves out {', '.join(sorted(set(missing)))}",
            [f"TORCH_CUDA_ARCH_LIST={value}", *sorted(set(missing))],
            'Extensions built now have no kernels for that GPU ("no kernel image is available"). '
            "Add its capability to the list, or unset TORCH_CUDA_ARCH_LIST so the build targets "
            "the GPUs present.",
        )
    ]


def _cuda_torch(facts: Facts) -> bool:
    return bool(facts.torch.installed and facts.torch.cuda)


def _libcuda(facts: Facts) -> List[Finding]:
    tk = facts.toolkit
    if tk.libcuda != "" or not _cuda_torch(facts):
        return []
    return [
        RULES["TK007"](
            "The driver's libcuda.so.1 is here, but no libcuda.so for the linker",
            ["ldconfig knows libcuda.so.1; no libcuda.so beside it or on LIBRARY_PATH"],
            'torch.compile\'s Triton links its launcher with -lcuda ("cannot find -lcuda", '
            '"libcuda.so cannot found"). Add the link the driver\'s development package would '
            "(`sudo ln -s libcuda.so.1 <its folder>/libcuda.so`), or point LIBRARY_PATH at "
            "a folder with one (the toolkit's lib64/stubs); on WSL, /usr/lib/wsl/lib has it.",
        )
    ]


def _triton(facts: Facts) -> List[Finding]:
    """TK009 (a GPU Triton does not support). The Triton version itself is PKG005's."""
    findings: List[Finding] = []
    if _cuda_torch(facts) and has_nvidia_gpu(facts):
        old = [
            f"{g.name} ({g.compute_capability})"
            for g in facts.nvidia.gpus
            if (cc := g.compute_capability) is not None and cc < TRITON_MIN_CAPABILITY
        ]
        if old:
            findings.append(
                RULES["TK009"](
                    f"torch.compile cannot use Triton on {', '.join(old)}: Triton needs compute capability 7.0",
                    [
                        *old,
                        "torch/_inductor/exc.py: Triton only supports devices of CUDA Capability >= 7.0",
                    ],
                    'Eager mode works. For torch.compile on this GPU use `backend="aot_eager"` (or '
                    '"eager"), or run on a Volta or newer GPU.',
                )
            )
    return findings


def _caches(facts: Facts) -> List[Finding]:
    bad = [c for c in facts.toolkit.caches if c.writable is False]
    if not bad or not facts.torch.installed:
        return []
    variables = {"inductor": "TORCHINDUCTOR_CACHE_DIR", "triton": "TRITON_CACHE_DIR"}
    return [
        RULES["TK010"](
            f"torch.compile's {c.name} cache folder is not writable: {c.path}",
            [f"{c.name} cache {c.path} ({c.source})"],
            f"torch.compile fails writing its kernels there (read-only home or /tmp in a "
            f"container). Set {variables.get(c.name, 'it')} to a writable folder.",
        )
        for c in bad
    ]


def _build_isolation(facts: Facts) -> List[Finding]:
    """TK011: pip builds a project in an isolated environment with its [build-system]
    requires, so an extension is compiled against the torch pip picks there (the newest
    that matches), not the installed one; its binary then fails to load ("undefined
    symbol") with the torch the job imports."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    tk, t = facts.toolkit, facts.torch
    if not tk.build_requires_torch or not t.installed or not t.version:
        return []
    try:
        spec = SpecifierSet(tk.build_requires_torch[len("torch") :])
        installed = Version(Version(t.version).base_version)
    except ValueError:  # a requirement or version we cannot read
        return []
    pinned = len(spec) == 1 and next(iter(spec)).operator == "==" and installed in spec
    if pinned:
        return []
    why = (
        "does not allow the installed one"
        if installed not in spec
        else "lets pip pick any torch it allows (the newest), not necessarily the installed one"
    )
    return [
        RULES["TK011"](
            f"The project builds against {tk.build_requires_torch}, which {why}",
            [
                f"{tk.build_requires_source}: [build-system] requires {tk.build_requires_torch}",
                f"installed torch {t.version}",
            ],
            "pip builds in an isolated environment with its own torch, so the extension fails to "
            'load against the installed one ("undefined symbol"). Install the build requirements '
            "into this environment and build without isolation: `pip install --no-build-isolation .` "
            "(uv: `--no-build-isolation`).",
        )
    ]
