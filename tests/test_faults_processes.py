"""Faults around child processes: envcheck interrupted, terminated or killed while a
child runs, and children whose output has no end.

Real processes, real signals: the real `envcheck` CLI (``python -m envcheck``, as
tests/runner.py starts it) imports a hostile fake torch (tests/faketorch.py) in
its children, is signalled once its child (and the child's own child) is running,
and then nothing it started may be left alive.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Sequence

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envcheck import _proc
from envcheck.probes.torch_deep import parse_records, probe_torch_deep
from envcheck.smoke.runner import run_one
from tests.faketorch import make_fake_torch

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="process groups, signals and the watchdog are tested on Linux",
)

REPO = Path(__file__).resolve().parent.parent


def envcheck_env(fake: Path, **extra: str) -> Dict[str, str]:
    """tests/runner.py's clean slate, with a fake torch first on PYTHONPATH."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ENVCHECK_")
        and k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "NVIDIA_VISIBLE_DEVICES")
    }
    env["PYTHONPATH"] = f"{fake}{os.pathsep}{REPO}"
    env.update(extra)
    return env


def as_in_a_terminal() -> None:
    """Popen's preexec_fn: SIGINT at its default, as in a terminal. A test run started in
    the background (``pytest &``) ignores SIGINT, its children inherit that, and envcheck
    rightly leaves an ignored SIGINT ignored (nohup)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def gone(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def command_line(proc: psutil.Process) -> str:
    """``proc``'s command line, or "" once it has ended: a process of the tree may turn
    zombie between the look at its status and the read of its command line."""
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def wait_gone(procs: Sequence[psutil.Process], within: float = 5.0) -> List[str]:
    """The processes of ``procs`` still alive after ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not all(gone(p) for p in procs):
        time.sleep(0.05)
    alive = []
    for p in procs:
        if not gone(p):
            with contextlib.suppress(psutil.Error):
                alive.append(f"{p.pid} {' '.join(p.cmdline())}")
    return alive


def kill_tree(procs: Sequence[psutil.Process]) -> None:
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()


def running_tree(
    proc: subprocess.Popen, child_cmd: str, pid_file: Path, within: float = 90.0
) -> List[psutil.Process]:
    """Wait until envcheck's child (``child_cmd`` in its command line) has started
    its own child (whose pid it writes to ``pid_file``); return envcheck's descendants."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"envcheck ended before its child ran: {proc.returncode}\n{out}\n{err}")
        if pid_file.exists() and pid_file.read_text().strip():
            grandchild = int(pid_file.read_text())
            tree = psutil.Process(proc.pid).children(recursive=True)
            pids = {p.pid for p in tree}
            cmds = [command_line(p) for p in tree if not gone(p)]
            if grandchild in pids and any(child_cmd in c for c in cmds):
                return tree
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"no {child_cmd} with a grandchild within {within} s")
    raise AssertionError  # pragma: no cover


# The three phases where envcheck waits for a child that hangs, with a grandchild:
#   smoke        the first smoke test (the deep probe before it goes through)
#   check        the deep probe importing torch
#   healthcheck  --deep: the tiny matmul
PHASES = {
    "smoke": (("smoke", "--timeout", "120"), "hang_in_worker", "envcheck.smoke.worker"),
    "check": (("check", "--timeout", "120"), "hang_with_grandchild", "torch_deep.py"),
    "healthcheck": (
        ("healthcheck", "--deep", "--timeout", "120"),
        "hang_with_grandchild",
        "envcheck.smoke.worker",
    ),
}
# SIGINT goes to envcheck's process group, as a terminal's Ctrl-C does; SIGTERM and
# SIGKILL to envcheck alone, as `kill` and Docker's HEALTHCHECK timeout do.
SIGNALS = {"SIGINT": 130, "SIGTERM": 143, "SIGKILL": -signal.SIGKILL}


@pytest.mark.slow
@pytest.mark.parametrize("signame", list(SIGNALS))
@pytest.mark.parametrize("phase", list(PHASES))
def test_nothing_outlives_envcheck(tmp_path: Path, phase: str, signame: str) -> None:
    args, kind, child_cmd = PHASES[phase]
    pid_file = tmp_path / "grandchild.pid"
    env = envcheck_env(make_fake_torch(tmp_path, kind), GRANDCHILD_PID_FILE=str(pid_file))
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(tmp_path),
        start_new_session=True,  # its own group, as in a terminal
        preexec_fn=as_in_a_terminal,
    )
    tree: List[psutil.Process] = []
    try:
        tree = running_tree(proc, child_cmd, pid_file)
        assert len(tree) >= 2  # the child and its child, at least
        signum = getattr(signal, signame)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == SIGNALS[signame], f"{proc.returncode}\n{out}\n{err}"
        assert "Aborted!" not in err and "Traceback" not in err, err
        if signum == signal.SIGINT:
            assert err.strip().splitlines()[-1:] == ["envcheck: interrupted"], err
        assert wait_gone(tree) == [], "left alive"
    finally:
        with contextlib.suppress(OSError):
            proc.kill()
        kill_tree(tree)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=30)  # reaped, or a later test sees it as a zombie child


# Python drops an exception raised inside a __del__ or weakref callback, and so the
# SystemExit of a signal handler that happens to run there (seen under load: SIGTERM
# during a WeakSet callback, after which envcheck reported its killed child as a crash
# and exited 1). The run must still end with 128 + signum, before any further child.
SWALLOWED = """
import os, signal, sys
from envcheck import _entry, _proc, cli

class Trap:
    def __del__(self):
        os.kill(os.getpid(), signal.SIG{sig})
        for _ in range(100000):  # the handler runs in here; its SystemExit is dropped
            pass

def command(args):
    trap = Trap()
    del trap
    print("after the signal", flush=True)
    if {start_child}:
        _proc.run([sys.executable, "-c", "print('child ran')"], 30)
        print("after the child", flush=True)

cli.main = command
_entry.main(["tables"])  # a command click always reads (`check` may run without it)
"""


@pytest.mark.parametrize("start_child", [False, True])
@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_a_signal_whose_exit_python_dropped_still_ends_the_run(sig: str, start_child: bool) -> None:
    script = SWALLOWED.format(sig=sig, start_child=start_child)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        preexec_fn=as_in_a_terminal,
    )
    code = 128 + getattr(signal, f"SIG{sig}")
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert "child ran" not in proc.stdout and "after the child" not in proc.stdout


# A child started from a thread that has since ended (PR_SET_PDEATHSIG would kill it
# then) is kept running, and still goes, grandchild and all, when its parent is killed.
THREAD_PARENT = """
import sys, threading, time
from envcheck import _proc

def start():
    _proc.Child([sys.executable, "-c", sys.argv[1]], timeout=600)

thread = threading.Thread(target=start)
thread.start()
thread.join()
print("started", flush=True)
time.sleep(600)
"""
HANG_WITH_GRANDCHILD = """
import os, subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.environ["GRANDCHILD_PID_FILE"], "w") as fh:
    fh.write(str(p.pid))
time.sleep(600)
"""


@pytest.mark.slow
def test_a_child_started_by_an_ended_thread_lives_on_and_dies_with_its_parent(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    env = dict(os.environ, PYTHONPATH=str(REPO), GRANDCHILD_PID_FILE=str(pid_file))
    parent = subprocess.Popen(
        [sys.executable, "-c", THREAD_PARENT, HANG_WITH_GRANDCHILD],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    tree: List[psutil.Process] = []
    try:
        tree = running_tree(parent, "time.sleep(600)", pid_file, within=30)
        time.sleep(0.5)  # the thread is long gone
        assert [p for p in tree if gone(p)] == []
        parent.kill()
        parent.wait(timeout=30)
        assert wait_gone(tree) == []
    finally:
        parent.kill()
        kill_tree(tree)


ESCAPE = """
import os, subprocess, sys
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open(os.environ["GRANDCHILD_PID_FILE"], "w") as fh:
    fh.write(str(p.pid))
print("done", flush=True)
"""


def test_a_grandchild_that_escaped_the_group_does_not_hold_up_the_result(
    tmp_path: Path,
) -> None:
    """It keeps the child's pipes open: the child's exit and output count all the same."""
    pid_file = tmp_path / "grandchild.pid"
    env = dict(os.environ, GRANDCHILD_PID_FILE=str(pid_file))
    start = time.monotonic()
    try:
        result = _proc.run([sys.executable, "-c", ESCAPE], timeout=30, env=env)
        assert time.monotonic() - start < 10
        assert result.returncode == 0 and not result.timed_out
        assert result.stdout == "done\n"
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# --- Output without end ------------------------------------------------------

MEASURED = """
import resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a runaway fails, not the machine
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as fh:
    fh.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


@pytest.mark.slow
def test_a_flooding_torch_costs_neither_time_nor_memory(tmp_path: Path) -> None:
    """Before: `probe --json --timeout 2` took 19 s and 4.9 GB here (5.3 GB at 1 s elsewhere)."""
    rss_file = tmp_path / "maxrss"
    start = time.monotonic()
    probe = [sys.executable, "-m", "envcheck", "probe", "--json", "--timeout", "2"]
    out = subprocess.run(
        [sys.executable, "-c", MEASURED, str(rss_file), *probe],
        capture_output=True,
        text=True,
        env=envcheck_env(make_fake_torch(tmp_path, "flood")),
        cwd=str(tmp_path),
        timeout=300,
    )
    elapsed = time.monotonic() - start
    peak_mb = int(rss_file.read_text()) / 1024  # KiB on Linux
    assert elapsed < 30, elapsed
    assert peak_mb < 500, peak_mb
    runtime = json.loads(out.stdout)["torch_runtime"]
    assert runtime["status"] == "timed_out" and runtime["stage"] == "import"
    assert runtime["error"] == "timed out after 2 s during `import torch`; the child was killed"


@pytest.mark.slow
def test_a_flooding_smoke_worker_times_out_on_time(tmp_path: Path) -> None:
    """Before: 15 s and 4.7 GB more in this process."""
    env = envcheck_env(make_fake_torch(tmp_path, "flood"))
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    result = run_one("matmul", "cpu", timeout=2, env=env)
    assert result.status == "timed_out"
    assert time.monotonic() - start < 10
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mb < 500, grown_mb


FLOOD_WITH_RESULTS = """
import sys
MARK = sys.argv[1]
junk = ("noise " * 200 + "\\n") * 50
sys.stdout.write(MARK + ' {"stage": "import"}\\n')
for i in range(1000):
    sys.stdout.write(junk)
    if i == 500:
        sys.stdout.write("\\n" + MARK + ' {"stage": "cuda", "version": "9.9"}\\n')
sys.stderr.write("e" * 10000000 + "\\nthe last error line\\n")
sys.stdout.write("\\n" + MARK + ' {"stage": "done"}\\n')
"""


def test_large_output_keeps_head_tail_and_result_lines() -> None:
    from envcheck._child.torch_deep import MARK

    result = _proc.run([sys.executable, "-c", FLOOD_WITH_RESULTS, MARK], timeout=60, marker=MARK)
    assert result.ok
    assert result.stdout_dropped > 50_000_000 and result.stderr_dropped > 9_000_000
    assert len(result.stdout) < 2_000_000 and len(result.stderr) < 2_000_000
    assert re.search(r"^\[\.\.\. \d+\.\d MB dropped \.\.\.\]$", result.stdout, re.M)
    assert result.stdout.startswith(MARK + ' {"stage": "import"}')
    assert parse_records(result.stdout) == {"stage": "done", "version": "9.9"}
    assert result.stderr.splitlines()[-1] == "the last error line"


def test_small_output_is_kept_whole() -> None:
    result = _proc.run(
        [sys.executable, "-c", "import sys; sys.stdout.write('a\\r\\nb\\n\\xe9'); print('x')"],
        timeout=30,
        env=dict(os.environ, PYTHONIOENCODING="utf-8"),
    )
    assert result.stdout == "a\nb\n\xe9x\n" and result.stdout_dropped == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(
        st.one_of(
            st.integers(0, 10_000).map(lambda i: f"@@m@@ {i};\n"),
            st.text(alphabet="ab", max_size=40).map(lambda s: s + "\n"),
        ),
        max_size=60,
    ),
    cuts=st.lists(st.integers(1, 50), min_size=1, max_size=20),
    head=st.integers(1, 40),
    tail=st.integers(1, 60),
)
def test_every_complete_result_line_survives_any_cut(pieces, cuts, head, tail) -> None:
    """Whatever the sizes and wherever the reads split the stream, every complete
    marker line is kept, in order; nothing is dropped from what fits."""
    stream = "".join(pieces).encode()
    capture = _proc.Capture("@@m@@", head=head, tail=tail)
    pos, i = 0, 0
    while pos < len(stream):
        n = cuts[i % len(cuts)]
        capture.feed(stream[pos : pos + n])
        pos, i = pos + n, i + 1
    text = capture.text()
    if len(stream) <= head + tail:
        assert text == stream.decode() and capture.dropped == 0
        return
    assert capture.dropped == len(stream) - head - tail
    whole = [ln for ln in stream.decode().split("\n")[:-1] if ln.startswith("@@m@@ ")]
    found = [ln for ln in text.split("\n") if re.fullmatch(r"@@m@@ \d+;", ln)]
    # A line cut at the head's end is also kept whole: seen twice, in a row.
    deduped = [ln for k, ln in enumerate(found) if k == 0 or found[k - 1] != ln]
    expected = [ln for k, ln in enumerate(whole) if k == 0 or whole[k - 1] != ln]
    assert deduped == expected


# --- Hostile torches: crashes that are not hangs -------------------------------


def test_abort_during_import_is_a_crash_by_sigabrt(tmp_path: Path) -> None:
    env = envcheck_env(make_fake_torch(tmp_path, "abort"))
    facts = probe_torch_deep(sys.executable, 30, env)
    assert facts.status == "crashed" and facts.signal == "SIGABRT"
    assert facts.error.startswith("killed by SIGABRT during `import torch`")
    result = run_one("matmul", "cpu", timeout=30, env=env)
    assert result.status == "failed" and result.error.startswith("killed by SIGABRT")


def test_exit_0_during_import_is_still_a_crash(tmp_path: Path) -> None:
    env = envcheck_env(make_fake_torch(tmp_path, "exit0"))
    facts = probe_torch_deep(sys.executable, 30, env)
    assert facts.status == "crashed" and facts.returncode == 0
    assert facts.error.startswith("exited with code 0 during `import torch`")
    result = run_one("matmul", "cpu", timeout=30, env=env)
    assert result.status == "failed" and result.error.startswith("exited with code 0")


def test_the_registry_is_empty_after_children_are_reaped(tmp_path: Path) -> None:
    env = envcheck_env(make_fake_torch(tmp_path, "hang"))
    children = [
        _proc.Child([sys.executable, "-c", "import torch"], timeout=1.5, env=env) for _ in range(2)
    ]
    threads = [threading.Thread(target=c.wait) for c in children]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not _proc.child._live  # the registry kill_all empties
    ours = {c.pid for c in children}
    left = [p for p in psutil.Process().children(recursive=True) if p.pid in ours]
    assert not left
