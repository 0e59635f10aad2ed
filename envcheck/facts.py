"""Facts: everything envcheck observed about one machine, as plain data.

Facts is the spine of envcheck. The live probe fills it, a saved report or a
pasted ``collect_env`` text can be turned into it, and every check, the install
resolver and the smoke test read it. It is therefore plain data (dataclasses of
strings, numbers, booleans, lists and dicts) with a lossless JSON round trip:
``Facts.from_dict(facts.to_dict()) == facts``.

Conventions kept by every field:

* ``None`` means "not observed" (the probe could not tell or did not run), never
  "no" or zero. A machine without GPUs has ``gpus == []``; a machine whose GPUs
  could not be enumerated has ``gpus == []`` *and* an NVML error recorded.
* Sizes are bytes, durations seconds, versions the strings the source printed.
* A failing probe step records it in its own field (``nvidia.nvml``,
  ``torch_runtime.status``) or in ``probe_errors``; never raises.

The schema is documented field by field in docs/facts.md. ``SCHEMA_VERSION``
rises whenever a field changes meaning or is removed; adding a field does not.
"""

from __future__ import annotations

import enum
import json
from typing import Any, Dict, List, Optional

from ._record import field, record
from .facts_codec import FactsError, build, convert, field_type, kind_of, to_plain
from .values import ComputeCapability, GpuArch, OsFamily, Variant

__all__ = [
    "SCHEMA_VERSION",
    "Facts",
    "FactsError",
    "GpuStatus",
    "RuntimeStatus",
    "convert",
    "field_type",
]

SCHEMA_VERSION = 1


class GpuStatus(str, enum.Enum):
    """How a GPU answered NVML: ``ok``, ``lost`` (fell off the bus) or ``error`` (a query
    failed; ``GpuFacts.errors`` says which)."""

    OK = "ok"
    LOST = "lost"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class RuntimeStatus(str, enum.Enum):
    """How the deep probe's ``import torch`` in a child process went."""

    OK = "ok"
    IMPORT_FAILED = "import_failed"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    NOT_INSTALLED = "not_installed"
    SKIPPED = "skipped"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


# --------------------------------------------------------------------------- system


@record
class CgroupFacts:
    """Limits the container or systemd slice puts on this process."""

    version: Optional[int] = None  # 1 or 2; None outside Linux or without cgroups
    cpu_quota: Optional[float] = None  # CPUs allowed (quota / period); None when unlimited
    memory_limit: Optional[int] = None  # bytes; None when unlimited


@record
class DiskFacts:
    path: str = ""
    total: Optional[int] = None
    free: Optional[int] = None


@record
class NicFacts:
    """A network device on PCI (Linux sysfs): NCCL's inter-node traffic goes through it."""

    name: str = ""  # "mlx5_0" (InfiniBand/RoCE) or "eth0"
    kind: str = ""  # rdma (in /sys/class/infiniband) or net
    pci_bus_id: Optional[str] = None
    numa_node: Optional[int] = None
    speed_mbps: Optional[int] = None  # net devices: the link speed, where up


@record
class SystemFacts:
    os: str = ""  # platform.system(): Linux, Darwin, Windows
    os_version: Optional[str] = None  # macOS / Windows release, e.g. "14.5", "10.0.22631"
    distro_id: Optional[str] = None  # /etc/os-release ID, e.g. "ubuntu"
    distro_name: Optional[str] = None  # PRETTY_NAME, e.g. "Ubuntu 22.04.4 LTS"
    distro_version: Optional[str] = None  # VERSION_ID, e.g. "22.04"
    kernel: Optional[str] = None  # platform.release()
    machine: str = ""  # platform.machine(): x86_64, aarch64, arm64, AMD64
    glibc: Optional[str] = None  # "2.36"; None on musl, macOS, Windows
    hostname: Optional[str] = None  # redacted (None) unless the user asks for it
    wsl: Optional[int] = None  # 1 or 2 under Windows Subsystem for Linux
    container: Optional[str] = None  # docker, podman, kubernetes, containerd, lxc, apptainer
    jetson: Optional[str] = None  # a Jetson's device-tree model, or its L4T release line
    l4t: Optional[str] = None  # a Jetson's L4T release, "36.4.3": which JetPack it runs
    hosted: Optional[str] = None  # "colab", "kaggle": a notebook runtime that brings its driver
    cgroup: CgroupFacts = field(default_factory=CgroupFacts)
    cpu_model: Optional[str] = None
    cpus_logical: Optional[int] = None
    cpus_physical: Optional[int] = None
    cpus_affinity: Optional[int] = None  # CPUs this process may run on
    memory_total: Optional[int] = None
    memory_available: Optional[int] = None
    shm_total: Optional[int] = None  # /dev/shm: DataLoader workers and NCCL live here
    shm_free: Optional[int] = None
    memlock_limit: Optional[int] = None  # RLIMIT_MEMLOCK bytes, -1 unlimited (RDMA pins under it)
    disks: List[DiskFacts] = field(default_factory=list)
    iommu_cmdline: List[str] = field(default_factory=list)  # iommu= words of /proc/cmdline
    nics: List[NicFacts] = field(default_factory=list)  # network devices with a PCI function

    @property
    def family(self) -> Optional[OsFamily]:
        """linux, macos or windows: the OS family ``os`` names; None for another system."""
        return OsFamily.of_system(self.os)


# --------------------------------------------------------------------------- python


@record
class PythonFacts:
    version: str = ""  # "3.11.7"
    implementation: str = ""  # CPython, PyPy
    executable: str = ""
    bits: Optional[int] = None  # 64 or 32
    platform_tag: Optional[str] = None  # sysconfig.get_platform(), e.g. linux-x86_64
    prefix: Optional[str] = None
    env_kind: str = "none"  # venv, virtualenv, uv, conda, none
    env_name: Optional[str] = None  # conda env name or venv folder name
    env_tool: Optional[str] = None  # conda, mamba, micromamba when env_kind == "conda"
    externally_managed: bool = False  # PEP 668: pip refuses to install here
    pip_version: Optional[str] = None  # None when pip is not installed
    # Why envcheck describes this interpreter ("the activated virtual environment
    # (VIRTUAL_ENV)", "--python", ...; see envcheck.target). None: a library call, itself.
    chosen_because: Optional[str] = None
    include_dir: Optional[str] = None  # sysconfig's "include": where Python.h should be
    python_h: Optional[bool] = None  # whether Python.h is there (extension and Inductor builds)
    # Whether the `python` first on PATH is this one, so that a bare `pip install` reaches
    # it; when False, commands name the interpreter (`PATH -m pip`). None: not known.
    on_path: Optional[bool] = None


# --------------------------------------------------------------------------- nvidia


@record
class NvmlStatus:
    """How talking to NVML went. ``ok`` False always comes with ``error``."""

    ok: bool = False
    error: Optional[str] = None  # library_not_found, driver_not_loaded, lib_rm_version_mismatch,
    #                              no_permission, gpu_is_lost, unknown, bindings_missing, and
    #                              for the child that asked NVML: timeout, crashed, no_answer
    message: Optional[str] = None  # the text NVML (or the timeout) gave
    version: Optional[str] = None  # NVML library version, e.g. "12.535.104.05"


@record
class PcieFacts:
    """A GPU's PCIe link and the path to it (Linux sysfs): what decides whether GPUs can talk
    peer-to-peer, and how fast."""

    speed_current: Optional[float] = None  # GT/s per lane (links.json names the generation)
    speed_max: Optional[float] = None
    width_current: Optional[int] = None  # lanes
    width_max: Optional[int] = None
    numa_node: Optional[int] = None  # None where unknown or the machine has no NUMA (-1)
    # the IOMMU domain of its group: "DMA"/"DMA-FQ" translate every P2P access, "identity"
    # passes it through (iommu=pt); None without an IOMMU
    iommu_group_type: Optional[str] = None
    bridges: List[str] = field(default_factory=list)  # PCIe bridges above it, root first
    acs_redirect: List[str] = field(default_factory=list)  # those whose ACS redirects P2P
    acs_unread: List[str] = field(default_factory=list)  # those whose ACS could not be read


@record
class NvLinkFacts:
    """One NVLink of a GPU, as NVML reports it."""

    link: int = 0
    active: Optional[bool] = None
    version: Optional[int] = None  # NVLink generation: 2 V100, 3 A100, 4 H100, 5 B200
    remote_bus_id: Optional[str] = None  # the PCI bus id at the far end (a GPU or NVSwitch)


@record
class GpuPairFacts:
    """How two GPUs reach each other (NVML's topology and P2P status for the pair).

    ``path`` is the nearest common ancestor as ``nvidia-smi topo -m`` names it: NV (NVLink),
    PIX (one PCIe switch), PXB (several switches), PHB (the host bridge of one CPU), NODE (across
    host bridges of one NUMA node), SYS (across CPUs). The P2P fields hold NVML's status word:
    ok, chipset_not_supported, gpu_not_supported, topology_not_supported, disabled_by_regkey,
    not_supported, unknown; None where NVML was not asked or could not answer.
    """

    a: int = 0  # GPU indexes, a < b
    b: int = 0
    path: Optional[str] = None
    nvlinks: Optional[int] = None  # active NVLinks joining the two (direct, not via NVSwitch)
    p2p_read: Optional[str] = None
    p2p_write: Optional[str] = None
    p2p_nvlink: Optional[str] = None


@record
class GpuFacts:
    index: int = 0
    name: Optional[str] = None
    uuid: Optional[str] = None  # redacted unless the user asks for identifiers
    pci_bus_id: Optional[str] = None
    compute_capability: Optional[ComputeCapability] = None  # "9.0" in JSON
    memory_total: Optional[int] = None
    memory_used: Optional[int] = None
    mig_mode: Optional[bool] = None  # current MIG mode; None where MIG is not supported
    mig_devices: Optional[int] = None  # MIG instances created, when MIG is on
    ecc_mode: Optional[bool] = None
    ecc_uncorrected_volatile: Optional[int] = None  # uncorrectable errors since driver load
    retired_pages_pending: Optional[bool] = None  # older GPUs: a reboot retires pages
    row_remap_pending: Optional[bool] = None  # A100/H100: a reset applies a remap
    row_remap_failure: Optional[bool] = None  # A100/H100: remapping failed, GPU needs service
    temperature_c: Optional[int] = None
    temperature_slowdown_c: Optional[int] = None
    persistence_mode: Optional[bool] = None
    status: GpuStatus = GpuStatus.OK
    errors: Dict[str, str] = field(default_factory=dict)  # query -> "code: message"
    pcie: Optional[PcieFacts] = None  # Linux: from sysfs, by the PCI bus id NVML gives
    cpu_affinity: Optional[str] = None  # CPUs near the GPU, as a list "0-31,64-95" (NVML)
    nvlinks: Optional[List[NvLinkFacts]] = None  # None where NVML has no NVLink for it


@record
class NvidiaFacts:
    kernel_module: Optional[str] = None  # "proprietary", "open", or None when not loaded
    driver_version: Optional[str] = None  # "535.104.05"
    driver_version_source: Optional[str] = None  # sysfs, procfs, nvml, override
    cuda_driver_version: Optional[str] = None  # newest CUDA the driver supports, "12.2"
    device_nodes: List[str] = field(default_factory=list)  # /dev/nvidia0, /dev/nvidiactl, ...
    nvml: NvmlStatus = field(default_factory=NvmlStatus)
    gpus: List[GpuFacts] = field(default_factory=list)
    pairs: List[GpuPairFacts] = field(default_factory=list)  # every GPU pair, when 2 or more


@record
class AmdGpuFacts:
    index: int = 0
    gfx: Optional[str] = None  # LLVM target, e.g. "gfx942", from KFD's gfx_target_version
    device_id: Optional[str] = None  # PCI device id, e.g. "0x74a1"


@record
class AmdFacts:
    """AMD GPUs, for ROCm builds of torch (Linux: the amdgpu driver's KFD topology)."""

    driver_version: Optional[str] = None  # /sys/module/amdgpu/version (ROCm's DKMS driver)
    gpus: List[AmdGpuFacts] = field(default_factory=list)


# --------------------------------------------------------------------------- torch


@record
class PackageFacts:
    """One installed distribution, read from its metadata folder (no import)."""

    name: str = ""  # normalised project name, e.g. "nvidia-cudnn-cu12"
    version: str = ""
    location: Optional[str] = None  # the sys.path entry it lives in
    installer: Optional[str] = None  # contents of INSTALLER: pip, uv, conda, ...
    requires: List[str] = field(default_factory=list)  # Requires-Dist: torch, CUDA rt, cuDNN
    wheel: Optional[str] = None  # the wheel file it was installed from (direct_url.json)
    record: Optional[str] = None  # its build-record file's text (package_builds.json names it)


@record
class CondaPackageFacts:
    name: str = ""
    version: str = ""
    build: Optional[str] = None  # e.g. "py3.11_cuda12.1_cudnn8.9.2_0"
    channel: Optional[str] = None


@record
class TorchFacts:
    """The installed torch as its files describe it; read without importing torch."""

    installed: bool = False
    version: Optional[str] = None  # torch/version.py __version__, e.g. "2.8.0+cu128"
    dist_version: Optional[str] = None  # the dist-info beside it; differs if files are mixed
    cuda: Optional[str] = None  # CUDA the build targets (version.py), None for CPU builds
    hip: Optional[str] = None  # HIP version of ROCm builds
    xpu: Optional[str] = None
    git_version: Optional[str] = None
    debug: Optional[bool] = None
    location: Optional[str] = None  # the torch package folder
    installer: Optional[str] = None
    installs: List[PackageFacts] = field(default_factory=list)  # every torch dist found
    companions: List[PackageFacts] = field(default_factory=list)  # torchvision, nvidia-*, ...
    dependents: List[PackageFacts] = field(default_factory=list)  # others that pin or label torch
    conda_packages: List[CondaPackageFacts] = field(default_factory=list)
    # torch's Requires-Dist on Triton ("triton==3.5.0"), markers dropped; None: it has none
    triton_requirement: Optional[str] = None

    @property
    def variant(self) -> Optional[Variant]:
        """The wheel variant of the installed build (cu128, rocm6.2, cpu, xpu): the one
        place it is derived from the version's label and version.py; None when torch is
        not installed or its build is not known."""
        if not self.installed:
            return None
        return Variant.of_build(self.version, self.cuda, self.hip, self.xpu)


@record
class CudaDeviceFacts:
    index: int = 0
    name: Optional[str] = None
    capability: Optional[ComputeCapability] = None  # "8.6" in JSON
    memory_total: Optional[int] = None
    multiprocessors: Optional[int] = None


@record
class TorchRuntimeFacts:
    """What a child process that really imported torch saw (the deep probe)."""

    status: RuntimeStatus = RuntimeStatus.SKIPPED
    stage: Optional[str] = None  # last stage reached: start, import, cuda, devices, libraries, done
    error: Optional[str] = None  # exception text, "killed by SIGSEGV", "timed out after 60 s"
    signal: Optional[str] = None  # SIGSEGV, SIGKILL, ...
    returncode: Optional[int] = None
    duration_s: Optional[float] = None
    timeout_s: Optional[float] = None
    version: Optional[str] = None
    file: Optional[str] = None  # torch.__file__: which torch was really imported
    cuda: Optional[str] = None
    hip: Optional[str] = None
    cuda_available: Optional[bool] = None
    cuda_warnings: List[str] = field(default_factory=list)  # why is_available() said False
    device_count: Optional[int] = None
    devices: List[CudaDeviceFacts] = field(default_factory=list)
    # torch.cuda.get_arch_list(): sm_XY / compute_XY (Arch), gfx targets on ROCm (Gfx)
    arch_list: List[GpuArch] = field(default_factory=list)
    cudnn_version: Optional[int] = None  # torch.backends.cudnn.version(), e.g. 90100
    nccl_version: Optional[str] = None  # "2.21.5"
    bf16_supported: Optional[bool] = None  # on the CUDA device, when there is one
    mps_built: Optional[bool] = None
    mps_available: Optional[bool] = None
    xpu_available: Optional[bool] = None
    cpu_capability: Optional[str] = None  # DEFAULT, AVX2, AVX512, ...
    num_threads: Optional[int] = None
    distributed_backends: List[str] = field(default_factory=list)  # gloo, nccl, mpi, ucc
    loaded_libraries: List[str] = field(default_factory=list)  # CUDA/ROCm libs in the memory map
    step_errors: Dict[str, str] = field(default_factory=dict)  # query -> error, import aside


# --------------------------------------------------------------------------- toolkit


@record
class CompilerFacts:
    """A C/C++ compiler found on PATH (or named by CC/CXX)."""

    name: str = ""  # as called: cc, c++, gcc, g++, clang, clang++, cl
    path: Optional[str] = None
    kind: Optional[str] = None  # gcc, clang, msvc; None when its --version said neither
    version: Optional[str] = None  # "12.2.0"


@record
class CacheDirFacts:
    """A folder torch.compile writes to (Inductor, Triton)."""

    name: str = ""  # inductor, triton
    path: str = ""
    source: str = ""  # the variable that set it, or "default"
    writable: Optional[bool] = None  # None: could not be told


@record
class ToolkitFacts:
    """What builds code for torch: nvcc and CUDA_HOME (CUDA extensions), the host compilers,
    ninja, and what torch.compile needs (a C compiler, writable caches, libcuda.so)."""

    nvcc_path: Optional[str] = None
    nvcc_version: Optional[str] = None  # "12.4.131" (from "release 12.4, V12.4.131")
    cuda_home: Optional[str] = None  # CUDA_HOME / CUDA_PATH, or where nvcc lives
    cuda_home_source: Optional[str] = None  # CUDA_HOME, CUDA_PATH, nvcc, default
    # The nvcc under an explicit CUDA_HOME/CUDA_PATH when it is not the one on PATH:
    # torch.utils.cpp_extension builds with CUDA_HOME's, the shell runs PATH's.
    cuda_home_nvcc: Optional[str] = None
    cuda_home_nvcc_version: Optional[str] = None
    # The newest host compiler major the nvcc accepts, read from its own
    # include/crt/host_config.h ({"gcc": "15", "clang": "20"}); empty when not read.
    nvcc_host_max: Dict[str, str] = field(default_factory=dict)
    host_config: Optional[str] = None  # the host_config.h it came from
    compilers: List[CompilerFacts] = field(default_factory=list)
    cxx: Optional[str] = None  # the C++ compiler builds use: $CXX, else c++/g++/clang++ on PATH
    ninja_path: Optional[str] = None
    ninja_version: Optional[str] = None
    # The unversioned libcuda.so a linker finds (Triton links against it); "" when none is
    # found; None when not looked for (no NVIDIA driver here).
    libcuda: Optional[str] = None
    caches: List[CacheDirFacts] = field(default_factory=list)
    # The project's [build-system] requires on torch ("torch>=2.0", "torch"), from the nearest
    # pyproject.toml upwards: pip's build isolation builds against that torch, not the
    # installed one. None when there is no such project or requirement.
    build_requires_torch: Optional[str] = None
    build_requires_source: Optional[str] = None  # that pyproject.toml
    toolchain_probed: bool = False  # the fields above were looked at (not a pasted report)


@record
class ProbeError:
    """A probe step that failed in a way it had no field for (a bug or a surprise)."""

    step: str = ""
    message: str = ""


# --------------------------------------------------------------------------- the record


@record
class Facts:
    schema_version: int = SCHEMA_VERSION
    envcheck_version: str = ""
    collected_at: str = ""  # ISO 8601, UTC
    source: str = "probe"  # probe, file, collect_env, nvidia-smi, ...
    system: SystemFacts = field(default_factory=SystemFacts)
    python: PythonFacts = field(default_factory=PythonFacts)
    nvidia: NvidiaFacts = field(default_factory=NvidiaFacts)
    amd: AmdFacts = field(default_factory=AmdFacts)
    torch: TorchFacts = field(default_factory=TorchFacts)
    torch_runtime: TorchRuntimeFacts = field(default_factory=TorchRuntimeFacts)
    toolkit: ToolkitFacts = field(default_factory=ToolkitFacts)
    environment: Dict[str, str] = field(default_factory=dict)  # allow-listed, secrets dropped
    overrides: List[str] = field(default_factory=list)  # "nvidia.driver_version", ...
    probe_errors: List[ProbeError] = field(default_factory=list)

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON data: values (ComputeCapability, Arch, enums) as their strings."""
        return to_plain(self)  # type: ignore[no-any-return]

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Any) -> Facts:
        """Facts from a dict, every type checked, unknown keys ignored: a FactsError names
        the field, never a KeyError or TypeError."""
        if not isinstance(data, dict):
            raise FactsError(f"a Facts document is a JSON object, not {kind_of(data)}")
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise FactsError(f"schema_version: expected an integer, got {version!r}")
        if version > SCHEMA_VERSION:
            raise FactsError(
                f"schema_version {version} is newer than this envcheck understands "
                f"({SCHEMA_VERSION}); upgrade envcheck to read it"
            )
        facts: Facts = build(cls, data, "")
        return facts

    @classmethod
    def from_json(cls, text: str) -> Facts:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FactsError(f"not JSON: {exc}") from None
        return cls.from_dict(data)
