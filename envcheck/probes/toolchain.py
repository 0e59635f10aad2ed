"""What builds code for torch besides the wheel: C/C++ compilers, nvcc's host-compiler
limits, ninja, the libcuda.so Triton links against, and torch.compile's cache folders.

torch.compile (Inductor) compiles C++ on the CPU and Triton kernels on the GPU; extension
builds (flash-attn, apex, a project's own ops) run nvcc with a host compiler. Each piece
is read here without importing torch; the checks (envcheck.checks.toolchain) judge them.
Every command runs in a child with a timeout; ``environ`` and ``root`` make it testable
over fake PATHs and trees.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast

from .. import _proc
from .._proc.together import together
from ..facts import CacheDirFacts, CompilerFacts, ToolkitFacts

_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
_GCC_MAX = re.compile(r"#if\s+__GNUC__\s*>\s*(\d+)")
_CLANG_LIMIT = re.compile(r"__clang_major__\s*>=\s*(\d+)")
_MSVC = re.compile(r"_MSC_VER\s*<\s*(\d+)\s*\|\|\s*_MSC_VER\s*>=\s*(\d+)")
POSIX_COMPILERS = ("cc", "c++", "gcc", "g++", "clang", "clang++")


def host_limits(cuda_home: Optional[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """(the header read, {"gcc": newest major, "clang": newest major, "msvc": "1920-1949"})
    from the toolkit's own include/crt/host_config.h: the checks nvcc itself makes, so they
    hold for exactly this nvcc. ``(None, {})`` when there is no such header."""
    if not cuda_home:
        return None, {}
    for rel in ("include/crt/host_config.h", "targets/x86_64-linux/include/crt/host_config.h"):
        path = os.path.join(cuda_home, rel)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(256 * 1024)
        except OSError:
            continue
        limits: Dict[str, str] = {}
        gcc = [int(n) for n in _GCC_MAX.findall(text)]
        if gcc:
            limits["gcc"] = str(min(gcc))
        clang = [int(n) for n in _CLANG_LIMIT.findall(text)]
        if clang:
            limits["clang"] = str(min(clang) - 1)
        msvc = _MSVC.search(text)
        if msvc:
            limits["msvc"] = f"{msvc.group(1)}-{int(msvc.group(2)) - 1}"
        return path, limits
    return None, {}


def _kind(text: str) -> Optional[str]:
    low = text.lower()
    if "clang" in low:
        return "clang"
    if "gcc" in low or "g++" in low or "free software foundation" in low:
        return "gcc"
    if "microsoft" in low:
        return "msvc"
    return None


def _ask(
    exe: str, name: str, env: Mapping[str, str], timeout: float
) -> Tuple[Optional[str], Optional[str]]:
    """(kind, version) from a compiler's --version (cl prints its banner without one)."""
    try:
        result = _proc.run([exe] if name == "cl" else [exe, "--version"], timeout, env=dict(env))
    except OSError:
        return None, None
    text = (result.stdout or "") + (result.stderr or "")
    first = next((line for line in text.splitlines() if line.strip()), "")
    match = _VERSION.search(first.split(")")[-1]) or _VERSION.search(first)
    return _kind(text), match.group(1) if match else None


def compilers(env: Mapping[str, str], timeout: float = 10.0) -> List[CompilerFacts]:
    """The C/C++ compilers on PATH (and CC/CXX), each binary asked for its version once,
    all at the same time (each is a child process)."""
    path = env.get("PATH")
    names: List[str] = [env[v] for v in ("CC", "CXX") if env.get(v)]
    names += ["cl"] if os.name == "nt" else list(POSIX_COMPILERS)
    found: List[Tuple[str, str, str]] = []  # (name, path, real path)
    for name in dict.fromkeys(names):
        exe = shutil.which(name, path=path)
        if exe is not None:
            found.append((name, exe, os.path.realpath(exe)))
    unique = {real: (name, exe) for name, exe, real in reversed(found)}  # cc -> gcc: asked once
    asks = [partial(_ask, exe, name, env, timeout) for name, exe in unique.values()]
    answers = dict(zip(unique, together(asks)))
    return [CompilerFacts(name, exe, *answers[real]) for name, exe, real in found]


def cxx_of(env: Mapping[str, str], found: List[CompilerFacts]) -> Optional[str]:
    """The C++ compiler builds use: $CXX (torch.utils.cpp_extension, setuptools), else the
    first of c++, g++, clang++ (cl on Windows) found."""
    if env.get("CXX"):
        return env["CXX"]
    order = ("cl",) if os.name == "nt" else ("c++", "g++", "clang++")
    return next((c.path for name in order for c in found if c.name == name), None)


def ninja(env: Mapping[str, str], timeout: float = 10.0) -> Tuple[Optional[str], Optional[str]]:
    exe = shutil.which("ninja", path=env.get("PATH"))
    if exe is None:
        return None, None
    try:
        result = _proc.run([exe, "--version"], timeout, env=dict(env))
    except OSError:
        return exe, None
    match = _VERSION.search(result.stdout or "")
    return exe, match.group(1) if match else None


def libcuda(env: Mapping[str, str], timeout: float = 10.0) -> Optional[str]:
    """The unversioned libcuda.so that ``-lcuda`` (Triton's launcher build) links: Triton
    finds the folders of libcuda.so.1 with ``ldconfig -p`` (or LD_LIBRARY_PATH), and the
    linker also reads LIBRARY_PATH; WSL keeps the driver in /usr/lib/wsl/lib. Returns its
    path, "" when the driver's libcuda.so.1 is there but no libcuda.so beside it, None when
    there is no libcuda.so.1 at all (no driver: nothing to judge)."""
    folders: List[str] = []
    ldconfig = shutil.which("ldconfig", path=f"{env.get('PATH', '')}{os.pathsep}/sbin:/usr/sbin")
    if ldconfig:
        try:
            listing = _proc.run([ldconfig, "-p"], timeout, env=dict(env)).stdout
        except OSError:
            listing = ""
        for line in listing.splitlines():
            if "libcuda.so.1" in line and "=>" in line:
                folders.append(os.path.dirname(line.split("=>")[-1].strip()))
    for var in ("LD_LIBRARY_PATH",):
        folders += [
            d
            for d in env.get(var, "").split(os.pathsep)
            if d and os.path.exists(os.path.join(d, "libcuda.so.1"))
        ]
    if os.path.exists("/usr/lib/wsl/lib/libcuda.so.1"):
        folders.append("/usr/lib/wsl/lib")
    if not folders:
        return None
    linker = folders + [d for d in env.get("LIBRARY_PATH", "").split(os.pathsep) if d]
    for folder in linker:
        candidate = os.path.join(folder, "libcuda.so")
        if os.path.exists(candidate):
            return candidate
    return ""


def _writable(path: str) -> Optional[bool]:
    """Whether ``path`` can be written, or made: the nearest folder that exists decides."""
    probe = Path(path)
    while not probe.exists():
        if probe.parent == probe:
            return None
        probe = probe.parent
    if not probe.is_dir():
        return False
    return os.access(probe, os.W_OK | os.X_OK)


def caches(env: Mapping[str, str]) -> List[CacheDirFacts]:
    """Inductor's and Triton's cache folders as torch would pick them."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers with an arbitrary uid)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    home = env.get("HOME") or os.path.expanduser("~")
    out = []
    for name, var, default in (
        (
            "inductor",
            "TORCHINDUCTOR_CACHE_DIR",
            os.path.join(tempfile.gettempdir(), f"torchinductor_{user}"),
        ),
        ("triton", "TRITON_CACHE_DIR", os.path.join(home, ".triton", "cache")),
    ):
        path = env.get(var) or default
        out.append(CacheDirFacts(name, path, var if env.get(var) else "default", _writable(path)))
    return out


def build_requires(start: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """(the torch requirement of [build-system] requires, the pyproject.toml it is in) for
    the nearest pyproject.toml from ``start`` upwards; (None, None) without one, or when
    it cannot be read (the requirements' reader reports a bad file, not this probe)."""
    if not start:
        return None, None
    from .._toml import ConfigError
    from .._toml import read_toml as _toml

    folder = Path(start)
    for candidate in (folder, *folder.parents):
        project = candidate / "pyproject.toml"
        if not project.is_file():
            continue
        try:
            data = _toml(project)
        except (ConfigError, ImportError):
            return None, None
        requires = (data.get("build-system") or {}).get("requires") or []
        for item in requires if isinstance(requires, list) else []:
            torch = _torch_requirement(str(item))
            if torch is not None:
                return torch, str(project)
        return None, str(project)
    return None, None


def _torch_requirement(item: str) -> Optional[str]:
    """``torch<spec>`` when ``item`` requires torch; None for any other (or a bad) one.
    packaging's parser (13 ms to import) is loaded only for an item that starts with torch."""
    if not item.lstrip().lower().startswith("torch"):
        return None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(item)
    except InvalidRequirement:
        return None
    return f"torch{req.specifier}" if req.name.lower() == "torch" else None


def probe_toolchain(
    facts: ToolkitFacts,
    environ: Optional[Mapping[str, str]] = None,
    timeout: float = 10.0,
    cwd: Optional[str] = None,
) -> ToolkitFacts:
    """Fill the toolchain fields of ``facts`` (whose nvcc part probe_toolkit filled);
    ``cwd``: where the project is (default: the current folder)."""
    env = dict(os.environ) if environ is None else dict(environ)
    if cwd is None:
        from .._cwd import current

        cwd = current()
    facts.build_requires_torch, facts.build_requires_source = build_requires(cwd)
    if facts.build_requires_torch is None:
        facts.build_requires_source = None
    facts.host_config, facts.nvcc_host_max = host_limits(facts.cuda_home)
    if facts.host_config is None and facts.nvcc_path:  # nvcc on PATH may be a wrapper script
        facts.host_config, facts.nvcc_host_max = host_limits("/usr/local/cuda")
    asks: List[Callable[[], Any]] = [partial(f, env, timeout) for f in (compilers, ninja, libcuda)]
    found, ninja_found, lib = together(asks)  # each waits on child processes
    facts.compilers = cast(List[CompilerFacts], found)
    facts.ninja_path, facts.ninja_version = cast(Tuple[Optional[str], Optional[str]], ninja_found)
    facts.libcuda = cast(Optional[str], lib)
    facts.cxx = cxx_of(env, facts.compilers)
    facts.caches = caches(env)
    facts.toolchain_probed = True
    return facts
