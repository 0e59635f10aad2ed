"""The one registry of finding codes: every rule envcheck can report, with its family, the
facts it needs, whether an install fixes it, and what it follows from.

Selection (``--ignore``), docs/checks.md, JUnit (which checks ran, which did not) and
diagnose's "not judged" all read this table; nothing else lists codes.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from .findings import Rule

# The Facts sections each family needs (see Rule.needs). "torch_runtime" is there only
# after the deep probe; "smoke", "requirements" and "text" are stages, not sections.
_NEEDS: Dict[str, FrozenSet[str]] = {
    "TRC": frozenset({"torch", "nvidia"}),
    "DRV": frozenset({"nvidia"}),
    "ARC": frozenset({"torch", "nvidia"}),
    "PY": frozenset({"python", "system"}),
    "PKG": frozenset({"torch"}),
    "INS": frozenset({"torch", "python"}),
    "RUN": frozenset({"torch_runtime"}),
    "TK": frozenset({"toolkit", "torch"}),
    "GPU": frozenset({"nvidia"}),
    "SYS": frozenset({"system"}),
    "LNK": frozenset({"nvidia"}),
    "MAC": frozenset({"system", "torch_runtime"}),
    "TBL": frozenset(),
    "SMK": frozenset({"smoke"}),
    "REQ": frozenset({"requirements"}),
    "MSG": frozenset({"text"}),
    "COD": frozenset({"code"}),
    "INT": frozenset(),
    "SEL": frozenset(),
    "CMP": frozenset({"fleet"}),  # judged by `envcheck compare` only, across machines
}
# Details of a section that a pasted report may lack although it shows the section (a
# collect_env cut before its GPU lines, an OS without its architecture, a message that
# proves a driver but names no GPU). A live probe always knows them; diagnose passes the
# ones its text lacks as ``unstated``, and the rules that need them are not judged.
DETAILS: Dict[str, str] = {
    "nvidia.gpus": "nvidia",  # the list of GPUs (empty is a fact too)
    "nvidia.driver": "nvidia",  # the driver version or the CUDA it supports
    "system.machine": "system",  # the OS and its architecture (which wheels exist)
    "nvidia.links": "nvidia",  # the GPUs' PCIe links, ACS, IOMMU (Linux sysfs)
    "nvidia.topology": "nvidia",  # NVML's GPU pairs (path, P2P status) and NVLinks
    # which build the torch is (CPU, CUDA X, ROCm): a bare "torch 2.1.0" typed in a report
    # may be PyPI's CUDA wheel, a CPU wheel or a conda build
    "torch.build": "torch",
    # what the other installed packages require of torch (their METADATA): a pip list in a
    # report names them without it
    "torch.dependents": "torch",
}
_DETAIL_NEEDS: Dict[str, FrozenSet[str]] = {
    **{c: frozenset({"nvidia.gpus", "torch.build"}) for c in ("TRC001", "TRC002", "TRC004")},
    "GPU005": frozenset({"nvidia.gpus"}),
    **{c: frozenset({"nvidia.gpus", "torch.build"}) for c in ("ARC001", "ARC002", "ARC004")},
    "ARC003": frozenset({"nvidia.gpus"}),
    **{c: frozenset({"nvidia.driver", "torch.build"}) for c in ("DRV001", "DRV002")},
    "DRV006": frozenset({"nvidia.driver"}),
    "PKG002": frozenset({"torch.build"}),  # a companion's build against torch's
    **{c: frozenset({"torch.dependents"}) for c in ("PKG006", "PKG007", "PKG009")},
    **{c: frozenset({"nvidia.driver", "nvidia.gpus"}) for c in ("DRV003", "DRV005")},
    **{c: frozenset({"system.machine"}) for c in ("PY002", "PY003")},
    **{c: frozenset({"nvidia.gpus", "nvidia.links"}) for c in ("LNK001", "LNK002", "LNK003")},
    **{c: frozenset({"nvidia.gpus", "nvidia.topology"}) for c in ("LNK004", "LNK005", "LNK006")},
    "LNK007": frozenset({"nvidia.gpus", "nvidia.links"}),
}
# Fixed by installing other torch packages: the core attaches the one install plan.
_INSTALL_FIX = {
    "TRC001",
    "TRC002",
    "TRC003",
    "TRC004",
    "DRV001",
    "DRV005",
    "DRV003",
    "ARC001",
    "PY001",
    "PKG001",
    "PKG002",
    "PKG005",
    "INS001",
    "INS002",
    "REQ001",
    "REQ003",
}
_NO_TORCH = ("TRC003", "RUN001", "RUN002")
# Findings that say a fact the tables or the probe do not hold (not a problem found): a READY
# verdict beside one of them is not verified, and reports say so.
NOT_VERIFIED = frozenset({"ARC004", "DRV006", "INS005"})
# code -> the codes it follows from when they are present in the same report.
_FOLLOWS: Dict[str, Tuple[str, ...]] = {
    "SMK001": _NO_TORCH,
    "SMK002": _NO_TORCH,
    # a failed torch.compile smoke test: the toolchain finding that explains it comes first
    "SMK003": ("TK002", "TK003", "TK007", "TK009", "TK010", "PKG005", *_NO_TORCH),
    # a slow all_reduce: the link finding that explains it comes first
    "SMK004": ("LNK001", "LNK002", "LNK003", "LNK004", "LNK005", "LNK006"),
    "RUN003": ("DRV001", "DRV003", "DRV004", "DRV005", "GPU001", "GPU005", "SYS005", "SYS006"),
    # a container started without its GPUs: no driver library, no GPU, a CUDA torch on the CPU
    "DRV004": ("SYS006",),
    "TRC002": ("SYS006",),
    # no torch yet: which build fits depends on the GPUs the container was started without
    "TRC003": ("SYS006",),
    "DRV001": ("DRV005",),  # a driver that cannot see the GPU: that comes first
    "TRC001": ("DRV005", "DRV003"),  # no build runs until the driver sees the GPU
    "REQ001": ("TRC003",),
    "REQ003": ("TRC001", "TRC003"),
    "REQ004": ("RUN003", "DRV004", "GPU001", "GPU005", "TRC001"),  # TRC001: torch sees none
    # no GPU for a memory or capability floor: the driver or container did not show it
    **{c: ("RUN003", "DRV004", "GPU001", "GPU005") for c in ("REQ005", "REQ006")},
    "REQ007": ("DRV004",),
    "REQ008": ("TRC001", "TRC004", *_NO_TORCH),
    "ARC002": ("ARC001",),
    "ARC004": ("RUN001", "RUN002"),  # the deep probe could not ask torch: it failed first
}

_RULES: List[Rule] = [
    # torch build versus the machine
    Rule(
        "TRC001", "cpu-build-with-gpu", "error", "a CPU-only torch on a machine with an NVIDIA GPU"
    ),
    Rule(
        "TRC002",
        "cuda-build-without-gpu",
        "info",
        "a CUDA torch on a machine without an NVIDIA GPU",
    ),
    Rule("TRC003", "torch-not-installed", "info", "torch is not installed in this environment"),
    Rule(
        "TRC005",
        "jetson-board",
        "warning",
        "an NVIDIA Jetson board: PyTorch's own aarch64 wheels are not built for it",
        needs=frozenset({"system"}),
    ),
    Rule(
        "TRC004",
        "build-for-other-vendor",
        "error",
        "a ROCm torch with an NVIDIA GPU, or a CUDA torch with an AMD GPU",
    ),
    # driver
    Rule("DRV001", "driver-too-old", "error", "the driver cannot run torch's CUDA build"),
    Rule(
        "DRV002",
        "minor-version-compatibility",
        "warning",
        "the driver runs torch's CUDA only through minor-version compatibility",
    ),
    Rule("DRV003", "driver-dropped-gpu", "error", "the driver branch no longer supports a GPU"),
    Rule("DRV004", "nvml-failed", "error", "NVML, the driver's management library, failed"),
    Rule("DRV005", "driver-predates-gpu", "error", "the driver is older than the GPU it must run"),
    Rule(
        "DRV006",
        "bundled-update-unknown",
        "info",
        "whether the driver covers the CUDA update the build bundles is not known",
    ),
    # GPU architectures
    Rule(
        "ARC001", "no-kernels-for-gpu", "error", "torch carries no kernels for a GPU's architecture"
    ),
    Rule("ARC002", "ptx-only", "warning", "a GPU is served only by PTX compiled at first start"),
    Rule(
        "ARC003",
        "gpu-too-old-for-current-torch",
        "warning",
        "the newest torch has no build for a GPU",
    ),
    Rule("ARC004", "arch-list-unknown", "warning", "the architectures of this build are not known"),
    # Python and platform
    Rule(
        "PY001",
        "python-unsupported",
        "error",
        "the installed torch has no wheels for this Python",
        needs=frozenset({"python", "torch"}),
    ),
    Rule(
        "PY002",
        "python-too-new-or-old-for-current-torch",
        "warning",
        "the newest torch has no wheels for this Python",
    ),
    Rule("PY003", "platform-without-wheels", "error", "no torch wheels for this platform"),
    # companions and runtime wheels
    Rule(
        "PKG001",
        "companion-version-mismatch",
        "error",
        "torchvision or torchaudio does not match torch",
    ),
    Rule(
        "PKG002",
        "companion-build-mismatch",
        "error",
        "a companion was built for another CUDA variant",
    ),
    Rule(
        "PKG003",
        "nvidia-wheel-cuda-mismatch",
        "error",
        "nvidia-* runtime wheels of another CUDA major than torch",
    ),
    Rule(
        "PKG004",
        "nvidia-wheels-two-majors",
        "warning",
        "nvidia-* wheels of two CUDA majors side by side",
    ),
    Rule(
        "PKG005",
        "triton-mismatch",
        "warning",
        "triton is not the version this torch was released with",
    ),
    Rule("PKG006", "pinned-to-other-torch", "error", "an installed package requires another torch"),
    Rule("PKG007", "built-for-other-torch", "error", "an extension was built for another torch"),
    Rule("PKG008", "numpy-abi", "error", "torch was built against another NumPy major"),
    Rule(
        "PKG009", "built-for-other-cuda", "warning", "a package needs another CUDA or cuDNN major"
    ),
    # installs
    Rule("INS001", "duplicate-torch", "error", "more than one torch installed"),
    Rule("INS002", "mixed-torch-files", "error", "torch's files and metadata disagree"),
    Rule(
        "INS005",
        "torch-label-unknown",
        "info",
        "not known whether torch's labelled files and plain metadata are one PyPI build",
    ),
    Rule(
        "INS003",
        "pip-and-conda-torch",
        "warning",
        "torch from both pip and conda in one environment",
    ),
    Rule("INS004", "no-virtual-environment", "info", "no virtual environment"),
    # the deep probe
    Rule("RUN001", "import-failed", "error", "import torch failed"),
    Rule("RUN002", "import-crashed", "error", "import torch crashed or hung"),
    Rule(
        "RUN003",
        "cuda-unavailable",
        "error",
        "torch.cuda.is_available() is False on a machine with a GPU",
    ),
    Rule(
        "RUN004",
        "library-shadowed",
        "warning",
        "a CUDA library was loaded from outside torch's own",
    ),
    Rule(
        "RUN005",
        "other-torch-imported",
        "warning",
        "the torch that imports is not the one installed",
    ),
    # CUDA toolkit
    Rule(
        "TK001",
        "nvcc-mismatch",
        "warning",
        "nvcc's CUDA differs from torch's (extensions will not build)",
    ),
    Rule(
        "TK002",
        "no-compiler",
        "warning",
        "no C/C++ compiler: torch.compile and extension builds fail",
        needs=frozenset({"toolkit", "torch"}),
    ),
    Rule(
        "TK003",
        "no-python-headers",
        "warning",
        "Python.h is missing",
        needs=frozenset({"toolkit", "torch", "python"}),
    ),
    Rule(
        "TK004",
        "host-compiler-unsupported",
        "warning",
        "the host compiler is newer than nvcc allows",
    ),
    Rule("TK005", "cuda-home-mismatch", "warning", "CUDA_HOME and the nvcc on PATH disagree"),
    Rule(
        "TK006",
        "arch-list-missing-gpu",
        "warning",
        "TORCH_CUDA_ARCH_LIST leaves out a GPU here",
        needs=frozenset({"toolkit", "nvidia"}),
    ),
    Rule("TK007", "libcuda-not-linkable", "warning", "no libcuda.so for Triton's -lcuda"),
    Rule(
        "TK009",
        "triton-gpu-too-old",
        "warning",
        "a GPU below Triton's compute capability 7.0",
        needs=frozenset({"toolkit", "torch", "nvidia"}),
    ),
    Rule(
        "TK010",
        "compile-cache-not-writable",
        "warning",
        "torch.compile's cache folder is not writable",
    ),
    Rule(
        "TK011",
        "build-isolation-torch",
        "warning",
        "the project's build requirements pull another torch",
    ),
    # GPU health
    Rule("GPU001", "gpu-lost", "error", "a GPU has fallen off the bus"),
    Rule("GPU002", "ecc-uncorrectable", "error", "uncorrectable ECC errors"),
    Rule("GPU003", "memory-repair-pending", "warning", "GPU memory repair waits for a reset"),
    Rule("GPU004", "row-remap-failed", "error", "GPU row remapping failed"),
    Rule("GPU005", "mig-without-instances", "error", "MIG mode on, no MIG instances"),
    Rule("GPU006", "persistence-off", "info", "persistence mode off on a server GPU"),
    Rule("GPU007", "gpu-query-failed", "warning", "NVML could not read a GPU"),
    # system
    Rule("SYS001", "small-shm", "warning", "/dev/shm too small for DataLoader workers and NCCL"),
    Rule("SYS002", "memory-limit", "info", "a cgroup memory limit below the machine's RAM"),
    Rule("SYS003", "cpu-quota", "info", "a CPU quota below the machine's CPU count"),
    Rule("SYS004", "disk-nearly-full", "warning", "little free disk space"),
    Rule("SYS005", "wsl1", "error", "WSL 1 has no GPU support"),
    Rule(
        "SYS006",
        "container-without-gpus",
        "error",
        "a GPU container was started without its GPUs",
        needs=frozenset({"system", "nvidia"}),
    ),
    # GPU links (PCIe, ACS, IOMMU): what multi-GPU jobs and NCCL depend on
    Rule("LNK001", "pcie-link-degraded", "warning", "a GPU's PCIe link runs below its width"),
    Rule("LNK002", "acs-redirects-p2p", "warning", "PCIe ACS redirects GPU peer-to-peer traffic"),
    Rule(
        "LNK003", "iommu-translates-p2p", "warning", "the IOMMU translates GPU peer-to-peer traffic"
    ),
    Rule("LNK004", "p2p-unavailable", "warning", "GPU pairs the driver will not let talk P2P"),
    Rule(
        "LNK005", "geforce-p2p", "warning", "GeForce GPUs report P2P over PCIe, which may hang NCCL"
    ),
    Rule("LNK006", "nvlink-down", "warning", "NVLink links are down: traffic takes PCIe"),
    Rule(
        "LNK007",
        "nic-numa-far",
        "warning",
        "GPUs with no RDMA NIC on their NUMA node",
        needs=frozenset({"system", "nvidia"}),
    ),
    Rule("MAC001", "mps-unavailable", "warning", "Apple GPU (MPS) not available to torch"),
    # the smoke test (envcheck check --smoke)
    Rule("SMK001", "smoke-failed", "error", "a smoke test failed"),
    Rule("SMK002", "smoke-timed-out", "error", "a smoke test hung and was killed"),
    Rule("SMK003", "compile-failed", "error", "torch.compile failed in the smoke test"),
    Rule(
        "SMK004",
        "busbw-below-expected",
        "warning",
        "all_reduce bus bandwidth well below what the GPU links allow",
    ),
    # the tables themselves
    Rule(
        "TBL001",
        "newer-than-tables",
        "warning",
        "something on this machine is newer than the tables know",
    ),
    Rule(
        "TBL002", "tables-age", "info", "the compatibility tables are older than their refresh age"
    ),
    Rule("TBL003", "updated-tables-unused", "info", "updated tables in the cache cannot be used"),
    Rule(
        "REQ001",
        "torch-requirement",
        "error",
        "the installed torch is not what the project needs",
    ),
    Rule("REQ002", "python-requirement", "error", "Python is not what the project needs"),
    Rule("REQ003", "cuda-requirement", "error", "torch's CUDA is older than the project needs"),
    Rule("REQ004", "gpu-count", "error", "fewer GPUs than the project needs"),
    Rule("REQ005", "gpu-memory", "error", "a GPU has less memory than the project needs"),
    Rule("REQ006", "compute-capability", "error", "a GPU is older than the project needs"),
    Rule("REQ007", "dtype-unsupported", "error", "a dtype the project needs is not supported"),
    Rule(
        "REQ008",
        "backend-unavailable",
        "error",
        "a distributed backend the project needs is missing",
    ),
    # machines compared (`envcheck compare`): a difference that breaks a job across them
    Rule("CMP001", "fleet-torch-differs", "error", "machines run other torch builds"),
    Rule("CMP002", "fleet-nccl-differs", "error", "machines load other NCCL versions"),
    Rule("CMP003", "fleet-cuda-differs", "error", "machines' torch targets other CUDA versions"),
    Rule("CMP004", "fleet-python-differs", "error", "machines run other Python versions"),
    Rule("CMP005", "fleet-backends-differ", "error", "machines' torch has other backends"),
    Rule("CMP006", "fleet-gpus-differ", "warning", "machines have other GPU models or counts"),
    Rule("CMP007", "fleet-driver-differs", "warning", "machines run other driver branches"),
    Rule("CMP008", "fleet-cudnn-differs", "warning", "machines load other cuDNN versions"),
    Rule("CMP009", "fleet-companions-differ", "warning", "machines have other companions"),
    Rule("CMP010", "fleet-variable-differs", "warning", "a job variable is set on some only"),
    Rule("CMP011", "fleet-shm-differs", "warning", "machines have other /dev/shm sizes"),
    Rule("CMP012", "fleet-network-differs", "warning", "machines have other RDMA devices"),
    Rule("CMP013", "fleet-container-differs", "warning", "machines run in other containers"),
    Rule("CMP014", "fleet-system-differs", "info", "machines differ in OS, kernel or CPU"),
    Rule("CMP015", "fleet-machine-error", "error", "a machine's own error, named by machine"),
    Rule("CMP016", "fleet-memlock-differs", "warning", "machines have other memlock limits"),
    # the project's code against this torch (check --code)
    Rule(
        "COD001",
        "code-breaks-on-torch",
        "warning",
        "the project's code uses what this torch removed or changed",
    ),
    Rule(
        "COD002",
        "code-deprecated-on-torch",
        "info",
        "the project's code uses what this torch deprecated",
    ),
    Rule(
        "COD003", "code-changes-unknown", "info", "this torch is newer than the change table knows"
    ),
    # envcheck itself
    Rule("MSG001", "pasted-error", "error", "an error message in the pasted text"),
    Rule("INT001", "check-crashed", "warning", "an envcheck check failed (a bug)"),
    Rule("SEL001", "unknown-code", "warning", "--ignore or ignore names no finding code"),
]


def _complete(rule: Rule) -> Rule:
    return Rule(
        rule.code,
        rule.name,
        rule.severity,
        rule.summary,
        needs=(rule.needs or _NEEDS[rule.family]) | _DETAIL_NEEDS.get(rule.code, frozenset()),
        install_fix=rule.code in _INSTALL_FIX,
        follows=_FOLLOWS.get(rule.code, ()),
    )


RULES: Dict[str, Rule] = {r.code: _complete(r) for r in _RULES}
assert len(RULES) == len(_RULES), "duplicate finding code"
_BY_NAME: Dict[str, Rule] = {r.name: r for r in RULES.values()}
assert len(_BY_NAME) == len(RULES), "duplicate finding name"


def follows(code: str, name: str, messages: Mapping[str, Tuple[str, ...]]) -> Tuple[str, ...]:
    """The codes a finding (code, and for a pasted message its name) follows from;
    ``messages``: each message's ``follows`` (compat_tables/messages.json)."""
    if code == "MSG001":
        return messages.get(name, ())
    rule = RULES.get(code)
    return rule.follows if rule else ()


def lookup(code_or_name: str) -> Optional[Rule]:
    """A rule by code (any case) or name."""
    key = code_or_name.strip()
    return RULES.get(key.upper()) or _BY_NAME.get(key.lower())


def family_rules(family: str) -> List[Rule]:
    return [r for r in RULES.values() if r.family == family]


def with_details(sections: Iterable[str], unstated: Iterable[str] = ()) -> FrozenSet[str]:
    """``sections`` and the details (DETAILS) of each, less those ``unstated``."""
    have = set(sections)
    have |= {d for d, section in DETAILS.items() if section in have}
    return frozenset(have - set(unstated))


def not_judged(available: Iterable[str]) -> List[Rule]:
    """The rules that need something ``available`` lacks (a stage that did not run, a
    section a pasted report did not contain)."""
    have = set(available)
    # a fleet rule is never judged of one machine: no one-machine report lists it as not run
    return [r for r in RULES.values() if not r.needs <= have and "fleet" not in r.needs]
