"""Faults of `envcheck healthcheck` (issue 12): files it did not make, verdicts, options, pipes.

Real files, real symlinks, real processes and pipes; the fake NVML stands in for
``pynvml`` only (in a child process through ``python -m tests.fake_nvml``).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pynvml
import pytest

from envcheck.healthcheck import check as health
from tests.fake_nvml import MACHINES, h100_sxm, make_nvml
from tests.runner import envcheck

REPO = Path(__file__).resolve().parent.parent
UID = os.getuid()
OTHER_UID = 65534  # nobody
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def one_gpu(**fields: Any) -> Dict[str, Any]:
    machine = copy.deepcopy(MACHINES["8xH100-SXM"])
    machine["gpus"] = [dict(h100_sxm(0), **fields)]
    return machine


ECC5 = one_gpu(ecc_uncorrected=5)
ECC5_LINE = "unhealthy: GPU 0: 5 uncorrectable ECC errors since the driver loaded"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A machine root without NVIDIA device nodes: NVML (the fake) is all there is."""
    (tmp_path / "root" / "dev").mkdir(parents=True)
    return tmp_path / "root"


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A sticky, world-writable directory like /tmp, where the state used to go."""
    base = tmp_path / "shared"
    base.mkdir()
    base.chmod(0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(base))
    return base


def snapshot(path: Path) -> Dict[str, Any]:
    """Every entry under ``path`` (links not followed): type, owner, mode and content."""
    out: Dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                body: Any = "-> " + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                body = Path(p).read_bytes()
            else:
                body = None
            out[os.path.relpath(p, path)] = (stat.S_IFMT(st.st_mode), st.st_uid, st.st_mode, body)
    return out


def victim(tmp_path: Path) -> Path:
    target = tmp_path / "victim" / "passwd"
    target.parent.mkdir()
    target.write_text("root:x:0:0:root:/root:/bin/bash\n")
    return target


# --------------------------------------------------------------------------- no file is trusted


def test_a_symlink_planted_at_the_old_state_path_is_not_followed(
    root: Path, tmp_path: Path, shared_tmp: Path
) -> None:
    """As root this overwrote the link's target with JSON; now nothing is written at all."""
    target = victim(tmp_path)
    link = shared_tmp / f"envcheck-health-{UID}.json"
    link.symlink_to(target)
    if os.geteuid() == 0:
        os.lchown(link, OTHER_UID, OTHER_UID)  # planted by another user
    before, victim_before = snapshot(shared_tmp), snapshot(target.parent)
    nvml = make_nvml(MACHINES["8xH100-SXM"])
    assert health(gpus=8, root=root, nvml=nvml, environ={}) == (0, "healthy: 8 GPU(s), 31-38 C")
    assert target.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert snapshot(target.parent) == victim_before and snapshot(shared_tmp) == before


@pytest.mark.parametrize(
    "planted",
    [
        "symlink to a folder of the victim",
        pytest.param("folder owned by another user", marks=as_root),
        "folder with mode 0777",
    ],
)
def test_nothing_is_read_or_written_where_state_could_go(
    root: Path, tmp_path: Path, shared_tmp: Path, planted: str
) -> None:
    """A private per-user folder would be the next place for state: whatever sits there is
    not used, nothing is created beside it, and ECC errors are still found."""
    target = victim(tmp_path)
    private = shared_tmp / f"envcheck-{UID}"
    if planted.startswith("symlink"):
        private.symlink_to(target.parent, target_is_directory=True)
    else:
        private.mkdir()
        (private / "ecc.json").write_text(json.dumps({"00000000:18:00.0": 10**9}))
        if planted.startswith("folder owned"):
            os.chown(private, OTHER_UID, OTHER_UID)
            os.chown(private / "ecc.json", OTHER_UID, OTHER_UID)
        else:
            private.chmod(0o777)
    before, victim_before = snapshot(shared_tmp), snapshot(target.parent)
    for _ in range(2):
        assert health(root=root, nvml=make_nvml(ECC5), environ={}) == (1, ECC5_LINE)
    assert snapshot(shared_tmp) == before and snapshot(target.parent) == victim_before


def test_a_baseline_planted_at_the_old_state_path_is_not_read(root: Path, shared_tmp: Path) -> None:
    """Huge counts there once hid every new ECC error."""
    planted = {"00000000:18:00.0": 10**9, "0": 10**9}
    (shared_tmp / f"envcheck-health-{UID}.json").write_text(json.dumps(planted))
    assert health(root=root, nvml=make_nvml(ECC5), environ={}) == (1, ECC5_LINE)


def test_errors_already_there_at_the_first_run_are_reported_every_run(
    root: Path, shared_tmp: Path
) -> None:
    """The volatile counter already counts from the driver's load: no baseline hides them,
    and a fresh container (no state) on the same GPU gets the same answer."""
    for _ in range(3):
        assert health(root=root, nvml=make_nvml(ECC5), environ={}) == (1, ECC5_LINE)
    assert list(shared_tmp.iterdir()) == []


def test_the_state_option_is_accepted_and_nothing_is_read_or_written_anywhere(
    tmp_path: Path,
) -> None:
    """`envcheck healthcheck --state FILE` (a real process, on a GPU with ECC errors): the
    option still parses, a baseline in FILE is neither read (it would hide the errors) nor
    rewritten, and nothing appears where the state file used to go ($XDG_RUNTIME_DIR, then
    $TMPDIR)."""
    runtime, tmp, given = tmp_path / "runtime", tmp_path / "tmp", tmp_path / "given"
    for folder in (runtime, tmp, given):
        folder.mkdir()
    state = given / "state.json"
    state.write_text(json.dumps({"00000000:18:00.0": 10**9, "0": 10**9}))
    before = {p: snapshot(p) for p in (runtime, tmp, given)}
    env = dict(child_env("buffered"), XDG_RUNTIME_DIR=str(runtime), TMPDIR=str(tmp))
    out = subprocess.run(
        fake_envcheck(json.dumps(ECC5), "healthcheck", "--state", str(state)),
        capture_output=True,
        cwd=REPO,
        env=env,
        text=True,
        timeout=120,
    )
    assert (out.returncode, out.stdout, out.stderr) == (1, ECC5_LINE + "\n", "")
    assert {p: snapshot(p) for p in (runtime, tmp, given)} == before


# --------------------------------------------------------------------------- verdicts

NO_PERMISSION = pynvml.NVML_ERROR_NO_PERMISSION


@pytest.mark.parametrize(
    ("fail", "noted"),
    [
        ({"persistence_mode": NO_PERMISSION}, "persistence_mode no_permission on GPU 0"),
        ({"temperature_threshold": NO_PERMISSION}, "temperature_threshold no_permission on GPU 0"),
        (
            {"persistence_mode": NO_PERMISSION, "temperature_threshold": NO_PERMISSION},
            "temperature_threshold no_permission on GPU 0, persistence_mode no_permission on GPU 0",
        ),
        (
            {"persistence_mode": pynvml.NVML_ERROR_FUNCTION_NOT_FOUND},
            "persistence_mode function_not_found on GPU 0",
        ),
    ],
    ids=["persistence", "threshold", "both", "old-driver"],
)
def test_a_refused_secondary_query_is_noted_not_fatal(
    root: Path, fail: Dict[str, int], noted: str
) -> None:
    """`envcheck check` calls these a warning (GPU007); the healthcheck stays healthy."""
    machine = one_gpu(fail=fail)
    assert health(gpus=1, root=root, nvml=make_nvml(machine), environ={}) == (
        0,
        f"healthy: 1 GPU(s), 31 C; noted: {noted}",
    )


def test_refusals_are_noted_and_faults_stay_fatal_gpu_by_gpu(root: Path) -> None:
    machine = copy.deepcopy(MACHINES["8xH100-SXM"])
    machine["gpus"] = [
        dict(h100_sxm(0), fail={"persistence_mode": NO_PERMISSION}),
        dict(h100_sxm(1), fail={"persistence_mode": NO_PERMISSION}),
    ]
    assert health(root=root, nvml=make_nvml(machine), environ={}) == (
        0,
        "healthy: 2 GPU(s), 31-32 C; noted: persistence_mode no_permission on GPU 0,1",
    )
    cases = [
        # a fault on a secondary query is still a fault
        ({"temperature": pynvml.NVML_ERROR_UNKNOWN}, "GPU 1: unknown: Unknown Error"),
        (
            {"persistence_mode": pynvml.NVML_ERROR_RESET_REQUIRED},
            "GPU 1: reset_required: GPU requires restart",
        ),
        # no handle, no GPU to check, whatever the reason
        ({"handle": NO_PERMISSION}, "GPU 1: no_permission: Insufficient Permissions"),
    ]
    for fail, problem in cases:
        machine["gpus"][1]["fail"] = fail
        code, line = health(root=root, nvml=make_nvml(machine), environ={})
        assert (code, line.split("; noted: ")[0]) == (1, f"unhealthy: {problem}")
        assert line.endswith("; noted: persistence_mode no_permission on GPU 0")


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--timeout", "0"),
            "Invalid value for '--timeout': must be more than 0 and at most 86400",
        ),
        (("--timeout", "-1"), "Invalid value for '--timeout': must be more than 0 and at most"),
        (("--timeout", "nan"), "Invalid value for '--timeout': must be more than 0"),
        (("--timeout", "inf"), "Invalid value for '--timeout': must be more than 0"),
        (("--timeout", "soon"), "Invalid value for '--timeout': 'soon' is not a valid float"),
        (("--timeout",), "Option '--timeout' requires an argument"),
        (("--gpus", "-1"), "Invalid value for '--gpus': must be 0 or more, not -1"),
        # argparse took any unambiguous prefix: --gpu 2 was --gpus 2, silently
        (("--gpu", "2"), "No such option '--gpu'. Did you mean '--gpus'?"),
        (("--time", "5"), "No such option '--time'."),
        (("--dee",), "No such option '--dee'"),
        (("extra",), "Got unexpected extra argument (extra)"),
    ],
)
@pytest.mark.parametrize(
    "route", [(), ("--tables", str(REPO / "compat_tables"))], ids=["fast", "group"]
)
def test_bad_options_are_one_line_errors_with_exit_1(args, message, route) -> None:
    """Docker reserves exit 2, click's exit for a usage error: one stdout line and exit 1,
    whether the console script's fast path runs the command or the CLI group does."""
    out = envcheck(*route, "healthcheck", *args)
    assert (out.returncode, out.stderr) == (1, "")
    (line,) = out.stdout.splitlines()

    def words(text: str) -> str:  # click 8.1 says "No such option: --gpu", 8.2 "'--gpu'."
        return re.sub(r"[':.]", "", text)

    assert words(line).startswith(words(f"unhealthy: {message}")), line


def test_nonsense_values_through_the_python_api(root: Path) -> None:
    nvml = make_nvml(MACHINES["8xH100-SXM"])
    assert health(timeout=0, root=root, nvml=nvml, environ={}) == (
        1,
        "unhealthy: --timeout must be more than 0 and at most 86400 seconds, not 0",
    )
    assert health(gpus=-1, root=root, nvml=nvml, environ={}) == (
        1,
        "unhealthy: --gpus must be 0 or more, not -1",
    )


def test_help_is_click_help_like_every_other_command() -> None:
    """Once argparse's ("usage: envcheck healthcheck [-h] ...", "options:"); now click's, as
    for `envcheck check`, with the defaults and the exit codes."""
    out = envcheck("healthcheck", "--help")
    assert (out.returncode, out.stderr) == (0, "")
    other = envcheck("check", "--help").stdout
    assert out.stdout.startswith("Usage: envcheck healthcheck [OPTIONS]\n\n  ")
    assert other.startswith("Usage: envcheck check [OPTIONS]\n\n  ")
    for text in (out.stdout, other):
        assert "\nOptions:\n" in text
        assert " -h, --help " in text and "Show this message and exit." in text
    text = " ".join(out.stdout.split())
    assert "--timeout SECONDS Seconds each probe may take (more than 0). [default: 10.0]" in text
    assert "Default: the number listed in NVIDIA_VISIBLE_DEVICES" in text
    assert "Exit codes: 0 healthy, 1 unhealthy or a bad option (never 2" in text
    grouped = envcheck("--tables", str(REPO / "compat_tables"), "healthcheck", "--help")
    assert grouped.stdout == out.stdout  # one command, whichever way it is reached


# --------------------------------------------------------------------------- a closed stdout


def fake_envcheck(machine: str, *args: str) -> List[str]:
    """`envcheck ARGS` in a real process on a fake machine (see tests/fake_nvml.py)."""
    return [sys.executable, "-m", "tests.fake_nvml", machine, *args]


def child_env(buffering: str) -> Dict[str, str]:
    """Python buffers stdout into a pipe (it fails at the flush at exit), unless
    PYTHONUNBUFFERED is set (then the write itself fails): both are tried."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVCHECK_")}
    for name in ("NVIDIA_VISIBLE_DEVICES", "PYTHONUNBUFFERED"):
        env.pop(name, None)
    if buffering == "unbuffered":
        env["PYTHONUNBUFFERED"] = "1"
    return env


BUFFERING = pytest.mark.parametrize("buffering", ["buffered", "unbuffered"])


@BUFFERING
@pytest.mark.parametrize(
    ("machine", "args", "code"),
    [
        ("8xH100-SXM", ("healthcheck",), 0),
        ("8xH100-SXM", ("healthcheck", "--gpus", "9"), 1),
        ("sick-H100", ("healthcheck",), 1),
        ("8xH100-SXM", ("healthcheck", "--timeout", "0"), 1),
        ("8xH100-SXM", ("healthcheck", "--help"), 0),
    ],
)
def test_a_closed_stdout_keeps_the_verdict_and_prints_no_traceback(
    machine, args, code, buffering
) -> None:
    """A pipe whose reader is gone before the line is written: EPIPE on every write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run(
            fake_envcheck(machine, *args),
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=REPO,
            env=child_env(buffering),
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (out.returncode, out.stderr) == (code, "")


@BUFFERING
def test_healthcheck_piped_into_true(buffering: str) -> None:
    command = (
        " ".join(shlex.quote(a) for a in fake_envcheck("8xH100-SXM", "healthcheck")) + " | true"
    )
    out = subprocess.run(
        ["sh", "-c", command],
        capture_output=True,
        cwd=REPO,
        env=child_env(buffering),
        text=True,
        timeout=120,
    )
    assert (out.returncode, out.stderr) == (0, "")


def test_overrides_are_read_only_under_their_prefix_and_a_bad_one_is_unhealthy(
    root: Path,
) -> None:
    """The healthcheck parses the ENVCHECK_* overrides only where such a variable is set
    (healthcheck.OVERRIDES); every override variable starts with it, and a bad one still
    makes the verdict unhealthy in one line."""
    from envcheck.healthcheck import OVERRIDES
    from envcheck.probes.overrides import ALIASES, PREFIX

    assert PREFIX.startswith(OVERRIDES) and all(name.startswith(OVERRIDES) for name in ALIASES)
    nvml = make_nvml(MACHINES["8xH100-SXM"])
    code, line = health(environ={"ENVCHECK_GPUS": "nonsense:x"}, root=root, nvml=nvml)
    assert code == 1 and line.startswith("unhealthy: ENVCHECK_GPUS") and "\n" not in line
    code, line = health(environ={"ENVCHECK_GPUS": "none"}, root=root, nvml=nvml)
    assert line.startswith("healthy"), line
    code, line = health(environ={"OTHER": "1"}, root=root, nvml=nvml)
    assert (code, line.split(":")[0]) == (0, "healthy") and "8 GPU(s)" in line, line
