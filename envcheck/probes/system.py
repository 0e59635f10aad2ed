"""Probe the operating system, container, cgroup limits, CPUs, memory and disks.

These facts decide advice that has nothing to do with versions: Docker's 64 MB
/dev/shm kills DataLoader workers, a cgroup memory limit is the real RAM, a CPU
quota is the real core count for ``num_workers``, WSL 1 has no GPU at all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..facts import CgroupFacts, DiskFacts, SystemFacts
from ._files import parse_key_values, read_first_line, read_text
from .container import detect_container
from .pcie import iommu_cmdline, probe_nics

# cgroup v1 reports "no limit" as a page-aligned number near 2**63.
_V1_UNLIMITED = 1 << 60


def probe_system(
    root: Path = Path("/"),
    environ: Optional[Dict[str, str]] = None,
    disk_paths: Sequence[str] = (),
    show_hostname: bool = False,
) -> SystemFacts:
    env = dict(os.environ) if environ is None else environ
    system, machine, release = _uname()
    facts = SystemFacts(os=system, machine=machine)
    facts.kernel = release or None
    if show_hostname:
        import socket

        facts.hostname = socket.gethostname()

    if facts.os == "Linux":
        _linux_distro(root, facts)
        facts.glibc = _glibc()
        facts.wsl = detect_wsl(facts.kernel or "", read_text(root, "/proc/version") or "")
        facts.container = detect_container(root, env)
        facts.hosted = detect_hosted(root, env)
        tegra = read_text(root, "/etc/nv_tegra_release") or ""
        facts.jetson = detect_jetson(root, tegra)
        facts.l4t = l4t_release(tegra)
        facts.cgroup = probe_cgroup(root)
        facts.cpu_model = _cpu_model(root)
        facts.shm_total, facts.shm_free = _statvfs(str(root / "dev/shm"))
        facts.memlock_limit = _memlock()
        facts.iommu_cmdline = iommu_cmdline(root)
        facts.nics = probe_nics(root)
    elif facts.os == "Darwin":
        import platform

        facts.os_version = platform.mac_ver()[0] or None
        facts.cpu_model = platform.processor() or None
    elif facts.os == "Windows":  # pragma: no cover - not exercised on Linux CI
        import platform

        facts.os_version = platform.version() or None
        facts.cpu_model = platform.processor() or None

    _cpus_and_memory(facts, root)
    facts.disks = probe_disks(disk_paths)
    return facts


def _memlock() -> Optional[int]:
    """This process's RLIMIT_MEMLOCK soft limit in bytes (-1: unlimited); None when unread."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    except (ImportError, AttributeError, OSError, ValueError):
        return None
    return -1 if soft == resource.RLIM_INFINITY else int(soft)


# The variables each hosted runtime sets in its kernels (names only: a value may be a token).
HOSTED_VARIABLES = {
    "colab": ("COLAB_RELEASE_TAG", "COLAB_BACKEND_VERSION", "COLAB_GPU"),
    "kaggle": ("KAGGLE_KERNEL_RUN_TYPE", "KAGGLE_URL_BASE"),
}


def detect_hosted(root: Path, environ: Mapping[str, str]) -> Optional[str]:
    """Google Colab or Kaggle, from the variables their runtimes set (or Kaggle's
    /kaggle/working folder). There the driver comes with the runtime: a fix must pick the
    build for it, never ask for a driver upgrade."""
    for host, names in HOSTED_VARIABLES.items():
        if any(name in environ for name in names):
            return host
    if (root / "kaggle" / "working").is_dir():
        return "kaggle"
    return None


def detect_jetson(root: Path, tegra_release: Optional[str] = None) -> Optional[str]:
    """An NVIDIA Jetson (Tegra) board: the device-tree model when it names a Jetson, else the
    L4T release line of /etc/nv_tegra_release (JetPack writes it; containers often mount it).
    Its iGPU runs JetPack's CUDA, so PyTorch's own aarch64 wheels are not judged for it."""
    model = (read_text(root, "/proc/device-tree/model") or "").replace("\x00", "").strip()
    if "jetson" in model.lower():
        return model[:200]
    if tegra_release is None:  # the probe passes what it read
        tegra_release = read_text(root, "/etc/nv_tegra_release") or ""
    release = tegra_release.splitlines()
    if release and release[0].lstrip("# ").startswith("R"):
        return "L4T " + release[0].lstrip("# ").split(", GCID")[0][:120]
    return None


def l4t_release(text: str) -> Optional[str]:
    """The L4T release JetPack wrote to /etc/nv_tegra_release ("# R36 (release), REVISION:
    4.3, GCID: ...") as a version, "36.4.3"; None for anything else."""
    found = re.match(r"#?\s*R(\d{1,3}) \(release\), REVISION: (\d{1,3}(?:\.\d{1,3})?)", text)
    return f"{found[1]}.{found[2]}" if found else None


def _linux_distro(root: Path, facts: SystemFacts) -> None:
    text = read_text(root, "/etc/os-release") or read_text(root, "/usr/lib/os-release")
    if not text:
        return
    info = parse_key_values(text)
    facts.distro_id = info.get("ID") or None
    facts.distro_name = info.get("PRETTY_NAME") or info.get("NAME") or None
    facts.distro_version = info.get("VERSION_ID") or None


def _glibc() -> Optional[str]:
    try:
        value = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"; instant, no file scan
    except (AttributeError, ValueError, OSError):
        return None
    if value and value.startswith("glibc "):
        return value.split(" ", 1)[1]
    return None


def detect_wsl(kernel_release: str, proc_version: str) -> Optional[int]:
    """1 or 2 under WSL, else None.

    WSL 2 runs a real Linux kernel named ``…-microsoft-standard-WSL2``; WSL 1
    translates syscalls and reports releases such as ``4.4.0-19041-Microsoft``.
    """
    text = f"{kernel_release} {proc_version}".lower()
    if "microsoft" not in text:
        return None
    if "wsl2" in text or "microsoft-standard" in text:
        return 2
    return 1


# --------------------------------------------------------------------------- cgroups


def _mounts(root: Path) -> List[Tuple[str, str, str, str]]:
    """(mount root, mount point, fs type, super options) from /proc/self/mountinfo."""
    text = read_text(root, "/proc/self/mountinfo") or ""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf, rf = left.split(), right.split()
        if len(lf) < 5 or len(rf) < 3:
            continue
        mounts.append((lf[3], lf[4], rf[0], rf[2]))
    return mounts


def _own_cgroups(root: Path) -> Dict[str, str]:
    """controller -> cgroup path of this process; v2's unified entry under key ''."""
    out: Dict[str, str] = {}
    for line in (read_text(root, "/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _candidate_dirs(root: Path, mount_root: str, mount_point: str, path: str) -> List[Path]:
    """Folders from this process's cgroup up to the mount, innermost first.

    Inside a container the mount root is the container's own cgroup, so the
    path from /proc/self/cgroup may not exist below the mount point: fall back
    to the mount point itself.
    """
    base = root / mount_point.lstrip("/")
    rel = path
    if mount_root != "/" and rel.startswith(mount_root):
        rel = rel[len(mount_root) :]
    parts = [p for p in rel.split("/") if p]
    dirs = [base.joinpath(*parts[:i]) for i in range(len(parts), 0, -1)]
    dirs.append(base)
    return [d for d in dirs if d.is_dir()]


def _int_or_none(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def probe_cgroup(root: Path) -> CgroupFacts:
    mounts = _mounts(root)
    own = _own_cgroups(root)
    v2 = next((m for m in mounts if m[2] == "cgroup2"), None)
    v1_memory = next((m for m in mounts if m[2] == "cgroup" and "memory" in m[3].split(",")), None)
    v1_cpu = next(
        (m for m in mounts if m[2] == "cgroup" and "cpu" in m[3].split(",")),
        None,
    )
    if v1_memory or v1_cpu:
        return _cgroup_v1(root, own, v1_memory, v1_cpu)
    if v2 is not None:
        return _cgroup_v2(root, own, v2)
    return CgroupFacts()


def _cgroup_v2(root: Path, own: Dict[str, str], mount: Tuple[str, str, str, str]) -> CgroupFacts:
    facts = CgroupFacts(version=2)
    dirs = _candidate_dirs(root, mount[0], mount[1], own.get("", "/"))
    limits: List[int] = []
    quotas: List[float] = []
    for d in dirs:  # the tightest limit on the way up is the one that applies
        mem = read_first_line(d, "memory.max")
        if mem and mem != "max":
            value = _int_or_none(mem)
            if value is not None:
                limits.append(value)
        cpu = read_first_line(d, "cpu.max")
        if cpu:
            quota, _, period = cpu.partition(" ")
            if quota != "max":
                q, p = _int_or_none(quota), _int_or_none(period or "100000")
                if q and p:
                    quotas.append(q / p)
    facts.memory_limit = min(limits) if limits else None
    facts.cpu_quota = min(quotas) if quotas else None
    return facts


def _cgroup_v1(
    root: Path,
    own: Dict[str, str],
    memory: Optional[Tuple[str, str, str, str]],
    cpu: Optional[Tuple[str, str, str, str]],
) -> CgroupFacts:
    facts = CgroupFacts(version=1)
    if memory is not None:
        limits = []
        for d in _candidate_dirs(root, memory[0], memory[1], own.get("memory", "/")):
            value = _int_or_none(read_first_line(d, "memory.limit_in_bytes"))
            if value is not None and value < _V1_UNLIMITED:
                limits.append(value)
        facts.memory_limit = min(limits) if limits else None
    if cpu is not None:
        quotas = []
        path = own.get("cpu", own.get("cpu,cpuacct", "/"))
        for d in _candidate_dirs(root, cpu[0], cpu[1], path):
            q = _int_or_none(read_first_line(d, "cpu.cfs_quota_us"))
            p = _int_or_none(read_first_line(d, "cpu.cfs_period_us"))
            if q is not None and q > 0 and p:
                quotas.append(q / p)
        facts.cpu_quota = min(quotas) if quotas else None
    return facts


# --------------------------------------------------------------------------- cpus, memory, disks


_MODEL_RE = re.compile(r"^(?:model name|Model|Hardware|cpu model)\s*:\s*(.+)$", re.MULTILINE)


def _uname() -> Tuple[str, str, str]:
    """platform's system(), machine() and release(): on a POSIX system they are the kernel's
    uname, read here without importing platform (its regexes cost a static check 3 ms)."""
    if hasattr(os, "uname"):
        name = os.uname()
        return name.sysname, name.machine, name.release
    import platform  # pragma: no cover - Windows

    return platform.system(), platform.machine(), platform.release()  # pragma: no cover


def _cpu_model(root: Path) -> Optional[str]:
    text = read_text(root, "/proc/cpuinfo", limit=64 * 1024) or ""
    match = _MODEL_RE.search(text)
    if match:
        return match.group(1).strip()
    import platform

    return platform.processor() or None


def cpus_affinity() -> Optional[int]:
    """The CPUs this process may run on (a container or taskset may give fewer than the
    machine has); None where the OS does not say."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _cpus_and_memory(facts: SystemFacts, root: Path = Path("/")) -> None:
    """CPUs and memory: on Linux from /proc and /sys as psutil reads them (importing psutil
    is 7 ms of a static check whose floor is 45), elsewhere, or where they cannot be read,
    from psutil."""
    facts.cpus_logical = os.cpu_count()
    facts.cpus_affinity = cpus_affinity()
    memory = linux_memory(root) if facts.os == "Linux" else None
    cores = linux_cores(root) if facts.os == "Linux" else None
    if memory is not None:
        facts.memory_total, facts.memory_available = memory
    if cores is not None:
        facts.cpus_physical = cores
    if memory is not None and cores is not None:
        return
    import psutil

    if cores is None:
        try:
            facts.cpus_physical = psutil.cpu_count(logical=False)
        except Exception:  # psutil raises odd errors in restricted sandboxes
            facts.cpus_physical = None
    if memory is None:
        try:
            vm = psutil.virtual_memory()
            facts.memory_total, facts.memory_available = int(vm.total), int(vm.available)
        except Exception:
            pass


def linux_memory(root: Path = Path("/")) -> Optional[Tuple[int, int]]:
    """(total, available) bytes from /proc/meminfo, as psutil.virtual_memory() gives them
    where the kernel reports MemAvailable (3.14 and later); None otherwise."""
    kib: Dict[str, int] = {}
    for line in (read_text(root, "/proc/meminfo") or "").splitlines():
        key, _, value = line.partition(":")
        number = value.split()[:1]
        if number and number[0].isdigit():
            kib[key.strip()] = int(number[0])
    if "MemTotal" not in kib or "MemAvailable" not in kib:
        return None
    return kib["MemTotal"] * 1024, kib["MemAvailable"] * 1024


def linux_cores(root: Path = Path("/")) -> Optional[int]:
    """Physical cores: the distinct sibling lists of the CPUs in sysfs, as psutil counts them
    (core_cpus_list, else thread_siblings_list); None where sysfs does not say."""
    base = "/sys/devices/system/cpu"
    try:
        cpus = [n for n in os.listdir(root / base.lstrip("/")) if re.fullmatch(r"cpu[0-9]+", n)]
    except OSError:
        return None
    for name in ("core_cpus_list", "thread_siblings_list"):
        lists = {read_first_line(root, f"{base}/{cpu}/topology/{name}") for cpu in cpus}
        lists.discard(None)
        if lists:
            return len(lists)
    return None


def _statvfs(path: str) -> Tuple[Optional[int], Optional[int]]:
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None, None
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def probe_disks(paths: Sequence[str]) -> List[DiskFacts]:
    """Free space where work happens (the current folder) and where packages go.

    Paths on the same filesystem are reported once, under the first name.
    """
    seen = set()
    disks = []
    for path in paths:
        try:
            dev = os.stat(path).st_dev
        except OSError:
            continue
        total, free = _statvfs(path)  # psutil.disk_usage's total and free, on POSIX
        if total is None or free is None:
            total, free = _disk_usage(path)
        if dev in seen or total is None or free is None:
            continue
        seen.add(dev)
        disks.append(DiskFacts(path=path, total=total, free=free))
    return disks


def _disk_usage(path: str) -> Tuple[Optional[int], Optional[int]]:
    """(total, free) from psutil, where os.statvfs is not there (Windows)."""
    import psutil

    try:
        usage = psutil.disk_usage(path)
    except OSError:
        return None, None
    return int(usage.total), int(usage.free)
