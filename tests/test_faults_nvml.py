"""A hostile libnvidia-ml (issue 28, item 17): one that segfaults, calls ``exit(0)`` or hangs
inside ``nvmlInit``.

Real processes and a real shared library: tiny C libraries named ``libnvidia-ml.so.1`` are
built with the C compiler at test time, and the real ``pynvml`` loads them (it dlopens the
library by that name, so ``LD_LIBRARY_PATH`` points it at ours). Before NVML ran in a child,
the segfault ended `envcheck check` and `envcheck healthcheck` with no output (exit 139),
and ``exit(0)`` made the healthcheck exit 0 with no line: healthy, to Docker.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import psutil
import pytest

from tests.runner import envcheck

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the fake libnvidia-ml is an ELF shared object"
)

REPO = Path(__file__).resolve().parent.parent

# nvmlInitWithFlags is what pynvml's nvmlInit() calls in the library.
LIBRARIES = {
    "segfault": """
        int nvmlInitWithFlags(unsigned int flags) { volatile int *p = 0; *p = flags; return 0; }
    """,
    "exit0": """
        #include <stdlib.h>
        int nvmlInitWithFlags(unsigned int flags) { exit(0); }
    """,
    # Says where it is (the pid of the process that called it), then never returns.
    "hang": """
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        int nvmlInitWithFlags(unsigned int flags) {
            const char *path = getenv("FAKE_NVML_PIDFILE");
            if (path) { FILE *f = fopen(path, "w"); fprintf(f, "%d\\n", (int)getpid()); fclose(f); }
            for (;;) pause();
        }
    """,
}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """Each fake as ``DIR/libnvidia-ml.so.1``; the folders, by name."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build a fake libnvidia-ml with")
    base = tmp_path_factory.mktemp("libnvidia-ml")
    folders = {}
    for name, source in LIBRARIES.items():
        folder = base / name
        folder.mkdir()
        (folder / "fake.c").write_text(source)
        subprocess.run(
            [cc, "-O0", "-shared", "-fPIC", "-o", str(folder / "libnvidia-ml.so.1"), "fake.c"],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=120,
        )
        folders[name] = folder
    return folders


def with_library(folder: Path, **extra: str) -> Dict[str, str]:
    return {"LD_LIBRARY_PATH": str(folder), "NVIDIA_VISIBLE_DEVICES": "", **extra}


def test_a_segfault_in_nvml_init_makes_the_healthcheck_unhealthy(libraries) -> None:
    out = envcheck("healthcheck", env=with_library(libraries["segfault"]), timeout=120)
    assert (out.returncode, out.stderr) == (1, "")
    assert out.stdout.splitlines() == [
        "unhealthy: NVML crashed: libnvidia-ml crashed (SIGSEGV) in nvmlInit"
    ]


def test_exit_0_in_nvml_init_is_unhealthy_not_healthy(libraries) -> None:
    """Docker and Kubernetes read exit 0 as healthy, whatever was (not) printed."""
    out = envcheck("healthcheck", env=with_library(libraries["exit0"]), timeout=120)
    assert (out.returncode, out.stderr) == (1, "")
    assert out.stdout.splitlines() == [
        "unhealthy: NVML no_answer: NVML exited without answering (exit status 0) in nvmlInit"
    ]


def test_check_reports_a_segfault_in_nvml_instead_of_dying(libraries) -> None:
    out = envcheck("check", "--no-deep", env=with_library(libraries["segfault"]), timeout=120)
    assert out.returncode == 1, out.stderr  # NOT READY, with its report (not 139, no output)
    assert "DRV004" in out.stdout and "NOT READY" in out.stdout
    assert "libnvidia-ml crashed (SIGSEGV) in nvmlInit" in out.stdout
    head = " ".join(out.stdout.split("\nchecking ")[0].split())  # not "no driver · no GPU"
    # the driver may still be known from sysfs (it was on a real H200): NVML's GPUs are not
    assert "GPUs not known (NVML crashed)" in head and "no GPU" not in head, head
    assert "no driver" not in head, head


def test_check_json_records_an_nvml_that_exited(libraries) -> None:
    out = envcheck(
        "check", "--no-deep", "--json", env=with_library(libraries["exit0"]), timeout=120
    )
    report = json.loads(out.stdout)
    nvml = report["facts"]["nvidia"]["nvml"]
    assert (nvml["ok"], nvml["error"]) == (False, "no_answer")
    assert "DRV004" in [f["code"] for f in report["findings"]]


def test_a_hung_nvml_init_times_out_and_its_process_is_gone(libraries, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    env = with_library(libraries["hang"], FAKE_NVML_PIDFILE=str(pidfile))
    out = envcheck("healthcheck", "--timeout", "1", env=env, timeout=120)
    assert (out.returncode, out.stderr) == (1, "")
    assert out.stdout.splitlines() == [
        "unhealthy: NVML timeout: NVML did not answer within 1 s (a hung driver or GPU) in nvmlInit"
    ]
    assert gone(int(pidfile.read_text()))


def test_a_hung_nvml_child_dies_with_a_killed_healthcheck(libraries, tmp_path: Path) -> None:
    """SIGKILL (Docker's HEALTHCHECK timeout) leaves envcheck no time to clean up: the NVML
    child's watchdog kills it, which works only if the forked child holds no copy of the
    watchdog's pipe."""
    pidfile = tmp_path / "pid"
    env = dict(os.environ, **with_library(libraries["hang"], FAKE_NVML_PIDFILE=str(pidfile)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "healthcheck", "--timeout", "600"],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        child = int(pidfile.read_text())
        assert child != proc.pid  # NVML ran in a child, not in envcheck itself
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert gone(child)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def gone(pid: int, within: float = 60.0) -> bool:
    """Whether ``pid`` has ended (a zombie counts: it runs no more) within a generous time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_the_fresh_interpreter_child_reports_a_segfault_too(
    libraries, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Where there is no fork() (Windows) the NVML child is a fresh interpreter running the
    same code; tried here with the real pynvml loading the segfaulting library. (The
    forked child is what the tests above run; LD_LIBRARY_PATH set now reaches only a
    process started after it, so this one cannot be a fork.)"""
    from envcheck.probes import nvidia, nvml_child

    monkeypatch.setenv("LD_LIBRARY_PATH", str(libraries["segfault"]))
    monkeypatch.setattr(nvml_child, "FORK", False)
    (tmp_path / "dev").mkdir()
    facts = nvidia.probe_nvidia(tmp_path)
    assert (facts.nvml.ok, facts.nvml.error) == (False, "crashed")
    assert facts.nvml.message == "libnvidia-ml crashed (SIGSEGV) in nvmlInit"
    assert facts.gpus == []
