"""The system probe over fake /proc and /sys trees, and on this machine for real."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from envcheck.probes.system import detect_container, detect_wsl, probe_cgroup, probe_system

GiB = 1024**3


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def cgroup_v2_tree(root: Path, own: str, limits: dict) -> Path:
    """A cgroup2 mount at /sys/fs/cgroup; ``limits`` maps a cgroup path to (cpu.max, memory.max)."""
    write(
        root, "proc/self/mountinfo", "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
    )
    write(root, "proc/self/cgroup", f"0::{own}\n")
    for path, (cpu, mem) in limits.items():
        folder = root / "sys/fs/cgroup" / path.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cpu.max").write_text(cpu + "\n")
        (folder / "memory.max").write_text(mem + "\n")
    return root


def test_docker_with_limits_on_cgroup_v2(tmp_path: Path) -> None:
    # docker run --cpus 2.5 --memory 8g: the container's cgroup is the mount root.
    root = cgroup_v2_tree(tmp_path, "/", {"/": ("250000 100000", str(8 * GiB))})
    facts = probe_cgroup(root)
    assert (facts.version, facts.cpu_quota, facts.memory_limit) == (2, 2.5, 8 * GiB)


def test_unlimited_cgroup_v2(tmp_path: Path) -> None:
    root = cgroup_v2_tree(
        tmp_path, "/user.slice", {"/": ("max 100000", "max"), "/user.slice": ("max 100000", "max")}
    )
    facts = probe_cgroup(root)
    assert (facts.version, facts.cpu_quota, facts.memory_limit) == (2, None, None)


def test_tightest_limit_on_the_way_up_applies(tmp_path: Path) -> None:
    root = cgroup_v2_tree(
        tmp_path,
        "/system.slice/job.scope",
        {
            "/": ("max 100000", "max"),
            "/system.slice": ("400000 100000", str(4 * GiB)),
            "/system.slice/job.scope": ("800000 100000", str(16 * GiB)),
        },
    )
    facts = probe_cgroup(root)
    assert facts.cpu_quota == 4.0 and facts.memory_limit == 4 * GiB


def test_cgroup_v1_with_nested_memory_cgroup(tmp_path: Path) -> None:
    """The layout of this very machine: v1 controllers, a per-process memory cgroup."""
    write(
        tmp_path,
        "proc/self/mountinfo",
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
    )
    write(tmp_path, "proc/self/cgroup", "4:memory:/process_api/abc\n1:cpu:/\n0::/\n")
    write(tmp_path, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
    write(tmp_path, "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", f"{6 * GiB}\n")
    write(tmp_path, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
    write(tmp_path, "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n")
    facts = probe_cgroup(tmp_path)
    assert (facts.version, facts.cpu_quota, facts.memory_limit) == (1, None, 6 * GiB)


def test_cgroup_v1_inside_a_container_whose_path_is_not_mounted(tmp_path: Path) -> None:
    # /proc/self/cgroup names the host path; the container only sees its own cgroup as "/".
    write(
        tmp_path,
        "proc/self/mountinfo",
        "40 30 0:35 /docker/0123 /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n"
        "41 30 0:36 /docker/0123 /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
    )
    write(tmp_path, "proc/self/cgroup", "5:memory:/docker/0123\n3:cpu,cpuacct:/docker/0123\n")
    write(tmp_path, "sys/fs/cgroup/memory/memory.limit_in_bytes", f"{2 * GiB}\n")
    write(tmp_path, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n")
    write(tmp_path, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
    facts = probe_cgroup(tmp_path)
    assert (facts.version, facts.cpu_quota, facts.memory_limit) == (1, 1.5, 2 * GiB)


def test_no_cgroups_at_all(tmp_path: Path) -> None:
    facts = probe_cgroup(tmp_path)
    assert (facts.version, facts.cpu_quota, facts.memory_limit) == (None, None, None)


@pytest.mark.parametrize(
    ("release", "proc_version", "expected"),
    [
        ("5.15.153.1-microsoft-standard-WSL2", "", 2),
        (
            "4.4.0-19041-Microsoft",
            "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)",
            1,
        ),
        ("6.6.36.3-microsoft-standard-WSL2+", "", 2),
        ("6.8.0-45-generic", "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)", None),
    ],
)
def test_wsl_detection(release: str, proc_version: str, expected) -> None:
    assert detect_wsl(release, proc_version) == expected


@pytest.mark.parametrize(
    ("files", "environ", "expected"),
    [
        ({".dockerenv": ""}, {}, "docker"),
        ({"run/.containerenv": ""}, {}, "podman"),
        ({".dockerenv": ""}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "kubernetes"),
        ({}, {"APPTAINER_CONTAINER": "/images/torch.sif"}, "apptainer"),
        ({}, {"container": "lxc"}, "lxc"),
        (
            {
                "proc/1/cgroup": "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab.scope\n"
            },
            {},
            "kubernetes",
        ),
        ({"proc/1/cgroup": "12:cpu:/docker/4f1c\n"}, {}, "docker"),
        ({"proc/1/cgroup": "0::/init.scope\n"}, {}, None),
    ],
)
def test_container_detection(tmp_path: Path, files: dict, environ: dict, expected) -> None:
    for rel, text in files.items():
        write(tmp_path, rel, text)
    assert detect_container(tmp_path, environ) == expected


def test_distribution_and_shm_from_a_fake_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        "etc/os-release",
        'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n',
    )
    (tmp_path / "dev/shm").mkdir(parents=True)
    facts = probe_system(tmp_path, environ={}, disk_paths=[str(tmp_path)])
    if platform.system() != "Linux":
        pytest.skip("Linux layout")
    assert facts.distro_id == "ubuntu" and facts.distro_version == "22.04"
    assert facts.distro_name == "Ubuntu 22.04.4 LTS"
    assert facts.shm_total is not None and facts.shm_total > 0  # statvfs of a real folder
    assert len(facts.disks) == 1 and facts.disks[0].free > 0


def test_this_machine() -> None:
    facts = probe_system(disk_paths=[os.getcwd(), os.getcwd()])
    assert facts.os == platform.system() and facts.machine == platform.machine()
    assert facts.cpus_logical == os.cpu_count()
    assert (
        facts.memory_total
        and facts.memory_available
        and facts.memory_available <= facts.memory_total
    )
    assert len(facts.disks) == 1  # the same filesystem is reported once
    assert facts.hostname is None  # redacted unless asked for
    if facts.os == "Linux":
        assert facts.shm_total is not None and facts.kernel == platform.release()
        assert facts.cpus_affinity == len(os.sched_getaffinity(0))
        import resource

        soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]  # what `ulimit -l` shows, in bytes
        assert facts.memlock_limit == (-1 if soft == resource.RLIM_INFINITY else soft)


def test_hostname_only_when_asked() -> None:
    import socket

    assert probe_system(show_hostname=True).hostname == socket.gethostname()


@pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc and /sys")
def test_cpus_memory_and_disks_are_what_psutil_says_without_importing_it() -> None:
    """The static check reads /proc/meminfo, the CPUs' sibling lists and statvfs itself (psutil
    costs 7 ms to import): the same figures as psutil's, on this machine."""
    import psutil

    from envcheck.probes.system import linux_cores, linux_memory, probe_disks

    memory = linux_memory()
    assert memory is not None and memory[0] == psutil.virtual_memory().total
    assert abs(memory[1] - psutil.virtual_memory().available) < 256 << 20  # it moves
    assert linux_cores() == psutil.cpu_count(logical=False)
    usage = psutil.disk_usage(os.getcwd())
    (disk,) = probe_disks([os.getcwd()])
    assert disk.total == usage.total and abs(disk.free - usage.free) < 256 << 20


def test_cpus_and_memory_from_a_fake_root(tmp_path: Path) -> None:
    """Two cores with two threads each (sibling lists), 16 GiB of which 10 available; a root
    without them answers None (and psutil is asked)."""
    from envcheck.probes.system import linux_cores, linux_memory

    write(
        tmp_path,
        "proc/meminfo",
        "MemTotal:       16777216 kB\nMemFree: 1 kB\nMemAvailable:   10485760 kB\n",
    )
    for cpu, siblings in ((0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")):
        write(tmp_path, f"sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list", siblings + "\n")
    (tmp_path / "sys/devices/system/cpu/cpufreq").mkdir()
    assert linux_memory(tmp_path) == (16 << 30, 10 << 30)
    assert linux_cores(tmp_path) == 2
    assert linux_memory(tmp_path / "none") is None and linux_cores(tmp_path / "none") is None
    write(tmp_path, "old/proc/meminfo", "MemTotal: 1024 kB\n")  # before MemAvailable (3.14)
    assert linux_memory(tmp_path / "old") is None


def test_the_system_and_interpreter_read_as_platform_reads_them() -> None:
    """The probe reads the OS, the machine, the kernel, the Python version and implementation
    without importing platform (its regexes cost a static check 3 ms): they must be what
    platform says, on every Python the suite runs on."""
    from envcheck._child.interpreter import version_and_implementation
    from envcheck.probes.system import _uname

    assert _uname() == (platform.system(), platform.machine(), platform.release())
    assert version_and_implementation() == (
        platform.python_version(),
        platform.python_implementation(),
    )
    facts = probe_system()
    assert (facts.os, facts.machine, facts.kernel) == _uname()
