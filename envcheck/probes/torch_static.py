"""The installed torch, read from its files: never ``import torch`` here.

torch/version.py is generated at build time and holds the version with its
local label (``2.8.0+cu128``), the CUDA or HIP version the build targets and the
git commit. Reading it costs a millisecond; importing torch costs a second and
200 MB, and can crash. The dist-info folders beside it tell the installer and
reveal duplicate or half-removed installs; conda-meta tells conda's view.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from ..facts import PackageFacts, TorchFacts
from . import packages

TORCH = "torch"

# Distributions that must agree with torch: companions, compilers, CUDA runtime wheels.
COMPANIONS = frozenset(
    {
        "torchvision",
        "torchaudio",
        "torchtext",
        "torchdata",
        "triton",
        "pytorch-triton",
        "pytorch-triton-rocm",
        "pytorch-triton-xpu",
        "xformers",
        "flash-attn",
        "numpy",  # torch's extension is built against one NumPy ABI (PKG008)
    }
)
# Companions whose pairing with torch the tables judge (PKG001): their own pin on torch is
# not read again as a dependent's (PKG006), which would say the same twice.
PAIRED = frozenset({"torchvision", "torchaudio"})
# nvidia-ml-py is NVML's Python binding (envcheck's own dependency), not a CUDA runtime.
_NOT_RUNTIME = frozenset({"nvidia-ml-py", "nvidia-ml-py3", "nvidia-pyindex"})

CONDA_PACKAGES = frozenset(
    {
        "pytorch",
        "pytorch-cuda",
        "pytorch-gpu",
        "pytorch-cpu",
        "pytorch-mutex",
        "libtorch",
        "torchvision",
        "torchaudio",
        "cudatoolkit",
        "cuda-version",
        "cuda-cudart",
        "cudnn",
        "nccl",
    }
)

_ASSIGN = re.compile(r"^(\w+)\s*(?::[^=]+)?=\s*(.+?)\s*$")
_VERSION_FIELDS = ("__version__", "cuda", "hip", "xpu", "git_version", "debug")


def is_companion(name: str) -> bool:
    return name in COMPANIONS or (name.startswith("nvidia-") and name not in _NOT_RUNTIME)


def read_version_file(path: str) -> Dict[str, object]:
    """Literal assignments of torch/version.py, without executing it."""
    out: Dict[str, object] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(64 * 1024)
    except OSError:
        return out
    for line in text.splitlines():
        match = _ASSIGN.match(line)
        if not match or match.group(1) not in _VERSION_FIELDS:
            continue
        try:
            out[match.group(1)] = _literal(match.group(2))
        except (ValueError, SyntaxError):
            continue
    return out


_CONSTANTS = {"None": None, "True": True, "False": False}


def _literal(text: str) -> object:
    """``ast.literal_eval(text)``, without importing ast (2 ms of a static check) for what
    version.py holds: a quoted string with no escape, None, True or False."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    quote = text[:1]
    if quote in ("'", '"') and len(text) >= 2 and text[-1] == quote:
        inner = text[1:-1]
        if quote not in inner and "\\" not in inner:
            return inner
    import ast

    return ast.literal_eval(text)


def _opt_str(value: object) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def probe_torch_static(
    sys_path: Sequence[str],
    torch_origin: Optional[str],
    prefix: Optional[str] = None,
    watched: Optional[Mapping[str, Optional[str]]] = None,
) -> TorchFacts:
    """Describe torch from the files on ``sys_path`` of the target interpreter.

    ``torch_origin`` is where ``importlib.util.find_spec("torch")`` points: the
    copy an import would load. Dist-infos elsewhere are duplicates. ``watched``: the
    packages package_builds.json knows as built for one torch, each with the build-record
    file to read (relative to its site folder; None: it ships none).
    """
    every = packages.scan(sys_path, lambda n: True)
    found = [d for d in every if d.name == TORCH or is_companion(d.name)]
    torch_dists = [d for d in found if d.name == TORCH]
    facts = TorchFacts(
        installs=[d.facts() for d in torch_dists],
        companions=[d.facts() for d in found if d.name != TORCH],
        dependents=_dependents(
            (d for d in every if d.name != TORCH and d.name not in PAIRED), watched or {}
        ),
    )
    if prefix:
        facts.conda_packages = packages.scan_conda_meta(prefix, CONDA_PACKAGES.__contains__)

    if not torch_origin:
        return facts
    pkg_dir = os.path.dirname(torch_origin)
    facts.installed = True
    facts.location = pkg_dir
    info = read_version_file(os.path.join(pkg_dir, "version.py"))
    facts.version = _opt_str(info.get("__version__"))
    facts.cuda = _opt_str(info.get("cuda"))
    facts.hip = _opt_str(info.get("hip"))
    facts.xpu = _opt_str(info.get("xpu"))
    facts.git_version = _opt_str(info.get("git_version"))
    debug = info.get("debug")
    facts.debug = debug if isinstance(debug, bool) else None

    owner = _owning_dist(torch_dists, pkg_dir)
    if owner is not None:
        facts.dist_version = owner.version
        facts.installer = packages.read_installer(owner.metadata_dir)
        facts.triton_requirement = triton_requirement(owner.metadata_dir)
    if facts.version is None:
        facts.version = facts.dist_version
    return facts


# A name that says which CUDA (or that it is a GPU build): cupy-cuda12x, tensorrt-cu12-libs,
# jax-cuda12-plugin, onnxruntime-gpu. Kept as facts; package_builds.json says what they mean.
_GPU_NAME = re.compile(r"(?:^|-)(?:cu(?:da)?[0-9]{2,3}x?|gpu)(?:-|$)")


def _dependents(
    dists: Iterable[packages.FoundDist], watched: Mapping[str, Optional[str]]
) -> List[PackageFacts]:
    """The other installed distributions that require torch or NVIDIA's CUDA runtime or cuDNN
    wheels (their METADATA headers), whose version carries a build label (torch_scatter
    2.1.2+pt21cu121: the torch it was built for), whose name names a CUDA build, or that
    ``watched`` names (with their build-record file): a package pinned to, or built for,
    another torch or CUDA breaks when torch changes under it (PKG006, PKG007, PKG009).
    NVIDIA's own wheels are torch's companions, not dependents."""
    out = []
    seen = set()
    for dist in dists:  # in sys.path order: the first copy of a name is the one that imports
        if dist.name in seen or dist.name.startswith("nvidia-"):
            continue
        seen.add(dist.name)
        requires, wheel = [], None
        if dist.metadata_dir.endswith(".dist-info"):
            requires = packages.watched_requirements(dist.metadata_dir)
            on_torch = any(r.lower().startswith("torch") for r in requires)
            if (on_torch or dist.name in watched) and "+" not in dist.version:
                wheel = packages.recorded_wheel(dist.metadata_dir)  # flash-attn's label
        keep = requires or "+" in dist.version or _GPU_NAME.search(dist.name)
        if keep or dist.name in watched:
            record_file = watched.get(dist.name)
            record = _read_record(dist.location, record_file) if record_file else None
            out.append(
                PackageFacts(dist.name, dist.version, dist.location, None, requires, wheel, record)
            )
    return out


RECORD_LIMIT = 16 * 1024  # a build record is a few hundred bytes; a bigger file is cut


def _read_record(location: str, file: str) -> Optional[str]:
    """The text of a package's build-record file (xformers/cpp_lib.json), or None when it
    has none (built without its extensions) or it cannot be read."""
    try:
        with open(
            os.path.join(location, *file.split("/")), encoding="utf-8", errors="replace"
        ) as fh:
            return fh.read(RECORD_LIMIT)
    except OSError:
        return None


def _owning_dist(dists: List[packages.FoundDist], pkg_dir: str) -> Optional[packages.FoundDist]:
    """The dist-info in the same site folder as the torch package that imports."""
    site = os.path.realpath(os.path.dirname(pkg_dir))
    same = [d for d in dists if os.path.realpath(d.location) == site]
    if same:
        return same[-1] if len(same) == 1 else max(same, key=_mtime)
    return None


def _mtime(dist: packages.FoundDist) -> float:
    try:
        return os.path.getmtime(dist.metadata_dir)
    except OSError:
        return 0.0


_TRITON_REQ = re.compile(
    r"^Requires-Dist:\s*((?:pytorch-)?triton(?:-rocm|-xpu)?)\s*\(?\s*([<>=!~][^;)]*)", re.I | re.M
)


def triton_requirement(metadata_dir: str) -> Optional[str]:
    """torch's pin on Triton from its METADATA ("triton==3.5.0"), markers dropped."""
    try:
        with open(os.path.join(metadata_dir, "METADATA"), encoding="utf-8", errors="replace") as fh:
            head = fh.read(64 * 1024).split("\n\n", 1)[0]  # the headers, not the description
    except OSError:
        return None
    match = _TRITON_REQ.search(head)
    return f"{match.group(1).lower()}{match.group(2).replace(' ', '')}" if match else None
