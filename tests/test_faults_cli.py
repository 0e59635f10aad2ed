"""Faults at the command line: closed pipes, unwritable outputs, a deleted current
folder, an interpreter too old to describe, credentials in URLs, a dumb terminal.

Each runs the real CLI in a real process (tests/runner.py), or the real function.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Tuple

import pytest

from envcheck.probes.environ import redact_value
from envcheck.report.style import use_color
from tests.runner import envcheck, user_env


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVCHECK_")}
    env.pop("GITHUB_ACTIONS", None)
    return env


def _closed_reader(*args: str, env: dict) -> subprocess.CompletedProcess:
    """envcheck writing into a pipe whose reader has already gone (``| true``)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "envcheck", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write)
    return proc


@pytest.mark.parametrize(
    "args", [("check", "--no-deep"), ("check", "--no-deep", "--json"), ("probe", "--no-deep")]
)
def test_a_reader_that_closes_the_pipe_does_not_change_the_exit_code(args) -> None:
    env = _clean_env()
    expected = envcheck(*args).returncode
    out = _closed_reader(*args, env=env)
    assert out.returncode == expected
    assert "Traceback" not in out.stderr


def test_a_not_ready_machine_keeps_exit_1_through_a_closed_pipe() -> None:
    env = user_env({"ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB"})
    expected = envcheck("check", "--no-deep", env={"ENVCHECK_GPUS": env["ENVCHECK_GPUS"]})
    out = _closed_reader("check", "--no-deep", env=env)
    assert out.returncode == expected.returncode
    assert "Traceback" not in out.stderr


def test_junit_path_that_is_a_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    out = envcheck("check", "--no-deep", "--junit", str(tmp_path))
    assert out.returncode == 2
    assert "is a folder" in out.stderr
    assert out.stdout == ""  # refused before the report, not after it


def test_junit_folder_is_made_when_missing(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "ci" / "envcheck.xml"
    out = envcheck("check", "--no-deep", "--junit", str(target))
    assert out.returncode in (0, 1), out.stderr
    assert target.read_text().startswith("<?xml")


def test_junit_that_cannot_be_written_fails_the_run() -> None:
    """A folder that accepts no new file (/proc): the report is printed, the JUnit file
    is missing, so the run must not pass in CI."""
    out = envcheck("check", "--no-deep", "--junit", "/proc/envcheck-junit.xml")
    assert out.returncode == 3
    assert "cannot write --junit /proc/envcheck-junit.xml" in out.stderr
    assert "Traceback" not in out.stderr


def test_unwritable_step_summary_is_a_line_not_a_traceback() -> None:
    out = envcheck(
        "check",
        "--no-deep",
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "/proc/envcheck-summary.md"},
    )
    assert "cannot write GITHUB_STEP_SUMMARY" in out.stderr
    assert "Traceback" not in out.stderr
    assert out.returncode in (0, 1)


def test_a_deleted_current_folder(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        "import os, runpy, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "sys.argv = ['envcheck', 'check', '--no-deep', '--json']; "
        "runpy.run_module('envcheck', run_name='__main__')"
    )
    env = _clean_env()
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", script, str(gone)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "Traceback" not in out.stderr
    assert out.returncode in (0, 1), out.stderr
    assert '"verdict"' in out.stdout


def _python27() -> str:
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")))
    return found[-1] if found else ""


@pytest.mark.skipif(not _python27(), reason="no Python 2.7 on this machine")
def test_python_2_is_a_one_line_usage_error() -> None:
    out = envcheck("check", "--no-deep", "--python", _python27())
    assert out.returncode == 2
    assert "is Python 2.7" in out.stderr and "Traceback" not in out.stderr


def test_an_interpreter_that_fails_is_one_line() -> None:
    out = envcheck("check", "--no-deep", "--python", "/bin/false")
    assert out.returncode == 2
    error = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert error == ["Error: /bin/false could not describe itself: exit code 1"]


@pytest.mark.parametrize(
    ("value", "secret", "kept"),
    [
        ("https://dave:SECRET@pass4@links.example.com/simple", "pass4", "links.example.com"),
        ("https://idx.example.com/simple?access_token=abc123&x=1", "abc123", "x=1"),
        ("https://h.example.com/s?X-Amz-Signature=f00d;sig=beef", "f00d", "h.example.com"),
        ("https://h.example.com/s?X-Amz-Signature=f00d;sig=beef", "beef", "/s?"),
        ("Authorization: Bearer eyJhbGciOi.x.y", "eyJhbGciOi", "Authorization:"),
        ("Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic"),
        ("https://user@host.example.com/a@b", "user", "/a@b"),
        ("https://a:b@one.example.com https://c:d@two.example.com", ":d@", "two.example.com"),
    ],
)
def test_redaction_of_every_credential_form(value: str, secret: str, kept: str) -> None:
    redacted = redact_value(value)
    assert secret not in redacted
    assert kept in redacted


def test_redaction_leaves_plain_urls_alone() -> None:
    plain = (
        "https://download.pytorch.org/whl/cu126 --extra-index-url https://pypi.example.org/simple"
    )
    assert redact_value(plain) == plain


@pytest.mark.parametrize(
    "value",
    ["a" * 1_000_000, "x://@" * 200_000, "?a=1&" * 200_000, "Bearer " * 150_000, "x://" * 250_000],
)
def test_redaction_of_a_huge_value_does_not_hang(value: str) -> None:
    """Linear, not quadratic: these took from seconds to hours with the old expressions.
    (A hang detector with a generous bound, not a speed target.)"""
    start = time.process_time()  # CPU time of this process: others' load does not count
    redact_value(value)
    assert time.process_time() - start < 20


class _Terminal:
    def isatty(self) -> bool:
        return True


def test_dumb_terminal_gets_no_colour() -> None:
    assert use_color(_Terminal(), {}) is True  # type: ignore[arg-type]
    assert use_color(_Terminal(), {"TERM": "dumb"}) is False  # type: ignore[arg-type]
    assert use_color(_Terminal(), {"TERM": "dumb", "FORCE_COLOR": "1"}) is True  # type: ignore[arg-type]


def _one_rank_job() -> dict:
    """The variables torchrun gives a job of one rank: `smoke --distributed` runs for real."""
    from envcheck.smoke.runner import free_port

    return {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(free_port())}  # fmt: skip


def _plant(kind: str, path: Path) -> str:
    """A path that is not a regular file: what envcheck must say it is."""
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO"
    if kind == "symlink":
        victim = path.parent / "victim.txt"
        victim.write_text("keep me")
        path.symlink_to(victim)
        return "is a symbolic link"
    path.mkdir()
    return "is a folder"


# Every command with an output file, as a user runs it; smoke --distributed in a real job of
# one rank (torchrun's variables), so a check made only after the run would show as a run.
OUTPUT_COMMANDS = {
    "check --junit": (("check", "--no-deep", "--junit"), {}),
    "smoke --distributed --html": (("smoke", "--distributed", "--timeout", "60", "--html"), None),
}


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
@pytest.mark.parametrize("command", list(OUTPUT_COMMANDS))
def test_an_output_target_that_is_not_a_regular_file_is_refused_before_any_work(
    tmp_path: Path, command: str, kind: str
) -> None:
    """A FIFO would block the write forever after the verdict; a link would write elsewhere;
    a folder cannot be written: each is a usage error (exit 2) before anything runs, worded
    the same for every command."""
    args, env = OUTPUT_COMMANDS[command]
    target = tmp_path / "out"
    what = _plant(kind, target)
    out = envcheck(*args, str(target), env=_one_rank_job() if env is None else env, timeout=180)
    assert out.returncode == 2, out.stdout + out.stderr
    assert what in out.stderr and "envcheck writes only a regular file" in out.stderr
    assert out.stdout == ""  # refused before the report, not after it
    assert "Traceback" not in out.stderr
    if kind == "symlink":
        assert (tmp_path / "victim.txt").read_text() == "keep me"


def test_a_fifo_put_at_the_path_during_the_run_is_not_waited_on(tmp_path: Path) -> None:
    """The path may change after the check: the write itself refuses a FIFO at once (a real
    FIFO with no reader, in a real process that would otherwise block)."""
    fifo = tmp_path / "late.xml"
    os.mkfifo(fifo)
    code = (
        "import sys\nfrom envcheck._outfile import write_text\n"
        "try:\n    write_text(sys.argv[1], 'x')\n"
        "except OSError as exc:\n    print(exc.strerror)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "is a FIFO (a named pipe): not written", out.stderr


def test_a_fifo_as_the_step_summary_is_a_line_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "summary.md"
    os.mkfifo(fifo)
    out = envcheck(
        "check",
        "--no-deep",
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(fifo)},
        timeout=120,
    )
    assert "cannot write GITHUB_STEP_SUMMARY: is a FIFO" in out.stderr
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr


def test_the_help_and_the_readme_give_the_exit_codes_the_output_file_gets(tmp_path: Path) -> None:
    """`check --help` and the README's table say which code an output file that cannot be
    written gets; the code is that one, before the run (refused) and after it (failed)."""
    refused = envcheck("check", "--no-deep", "--junit", str(tmp_path))
    failed = envcheck("check", "--no-deep", "--junit", "/proc/envcheck-junit.xml")
    assert (refused.returncode, failed.returncode) == (2, 3), refused.stderr + failed.stderr
    helptext = " ".join(envcheck("check", "--help").stdout.split())
    assert "2 usage error (e.g. a --junit FILE that is a folder, a link or a FIFO" in helptext
    assert "3 envcheck could not run or finish (e.g. unreadable tables, a --junit file whose" in (
        helptext
    )
    rows = {
        line.split("|")[1].strip(): line.split("|")[2]
        for line in (Path(__file__).parent.parent / "README.md").read_text().splitlines()
        if line.startswith("| 2 |") or line.startswith("| 3 |")
    }
    assert "output file" in rows["2"] and "refused before any work" in rows["2"]
    assert "output file whose writing failed after the run" in rows["3"]


def test_github_format_under_actions_prints_each_annotation_once(tmp_path: Path) -> None:
    """The runner shows stdout and stderr in one log: an annotation on both is shown twice."""
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",  # a CPU torch: an error finding
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",  # simulated, so the same without torch
        "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
        "ENVCHECK_FACT_TORCH_CUDA": "",
        "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
    }
    github = envcheck("check", "--no-deep", "--format", "github", env=env)
    annotations = [line for line in github.stdout.splitlines() if line.startswith("::")]
    assert annotations and github.returncode == 1, github.stdout + github.stderr
    assert not [line for line in github.stderr.splitlines() if line.startswith("::")]
    text = envcheck("check", "--no-deep", env=env)  # other formats: on stderr, once
    assert [line for line in text.stderr.splitlines() if line.startswith("::")] == annotations
    assert not [line for line in text.stdout.splitlines() if line.startswith("::")]


ODD_GPU = "NVIDIA GeForce RTX 4090 \u2014 \u03a9"  # an em dash and a letter ASCII lacks
ASCII_TERMINALS = {
    "PYTHONIOENCODING=ascii": {"PYTHONIOENCODING": "ascii"},
    "LC_ALL=C": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""},
}


def _ascii_outputs(tmp_path: Path) -> Dict[str, Tuple[str, ...]]:
    pasted = tmp_path / "pasted.txt"
    pasted.write_text(f"GPU 0: {ODD_GPU} (UUID: GPU-1234)\n", encoding="utf-8")
    runs: Dict[str, Tuple[str, ...]] = {
        f"check {fmt}": ("check", "--no-deep", "--format", fmt)
        for fmt in ("text", "json", "markdown", "github", "junit", "html")
    }
    runs.update(
        {
            "probe": ("probe", "--no-deep"),
            "probe --json": ("probe", "--no-deep", "--json"),
            "diagnose": ("diagnose", str(pasted)),
            "diagnose markdown": ("diagnose", str(pasted), "--format", "markdown"),
            "explain": ("explain", f"CUDA error: no kernel image \u2014 {ODD_GPU}"),
            "tables": ("tables",),
        }
    )
    return runs


@pytest.mark.parametrize("terminal", list(ASCII_TERMINALS))
@pytest.mark.slow
def test_an_ascii_terminal_gets_ascii_from_every_command_and_format(
    tmp_path: Path, terminal: str
) -> None:
    """The header's "·", a GPU named with a letter ASCII lacks: on an ASCII stdout and stderr
    (real child processes) every command prints its output, in ASCII, with its own exit
    code, never a UnicodeEncodeError."""
    env = dict(ASCII_TERMINALS[terminal], ENVCHECK_GPUS=f"{ODD_GPU}:8.9:24GiB")

    def narrow_run(*args: str) -> subprocess.CompletedProcess:
        """envcheck on this narrow terminal: its bytes, as the terminal gets them."""
        return subprocess.run(
            [sys.executable, "-m", "envcheck", *args],
            capture_output=True,
            env=user_env(env),
            timeout=300,
        )

    for name, args in _ascii_outputs(tmp_path).items():
        wide = envcheck(*args, env={"ENVCHECK_GPUS": env["ENVCHECK_GPUS"]})
        narrow = narrow_run(*args)
        err = narrow.stderr.decode("utf-8", "replace")
        assert narrow.returncode == wide.returncode, f"{name}: {narrow.returncode}\n{err}"
        assert "Traceback" not in err and "UnicodeEncodeError" not in err, name
        assert narrow.stdout.isascii() and narrow.stderr.isascii(), name
        assert narrow.stdout.strip(), name
    header = narrow_run("check", "--no-deep").stdout.decode("ascii")
    # Under LC_ALL=C the name itself arrives as undecodable bytes (one "?" each)
    shown = "-- ?" if terminal == "PYTHONIOENCODING=ascii" else "??? ??"
    assert " - Python " in header and f"1x NVIDIA GeForce RTX 4090 {shown}" in header, header
    probe = narrow_run("probe", "--no-deep").stdout.decode("ascii")
    assert f"NVIDIA GeForce RTX 4090 {shown}, sm_89" in probe, probe


def test_a_utf8_terminal_keeps_every_character() -> None:
    out = envcheck(
        "probe",
        "--no-deep",
        env={"ENVCHECK_GPUS": f"{ODD_GPU}:8.9:24GiB", "PYTHONIOENCODING": "utf-8"},
    )
    assert f"{ODD_GPU}, sm_89" in out.stdout and out.returncode == 0


def test_a_junit_file_of_a_path_with_control_characters_still_parses(tmp_path: Path) -> None:
    """A finding may quote a path or a paste holding an ESC (a colour) or an undecodable byte
    of a file name (a lone surrogate): the JUnit file carries each as "?", so every CI reader
    still parses it, and writing it never fails on the surrogate."""
    from xml.etree import ElementTree as ET

    from envcheck._outfile import write_text
    from envcheck._record import replace
    from envcheck.report.ci import render_junit
    from envcheck.rules import RULES
    from tests.fixtures import profile, report_of

    report = report_of(profile("h100-server"))
    odd = RULES["TRC003"]("torch at /x/py\x1b[31mred\udcffx", ["/x/py\x1b[>0c"], "fix")
    text = render_junit(replace(report, findings=[*report.findings, odd]))
    root = ET.fromstring(text.encode("utf-8"))
    assert "torch at /x/py?[31mred?x" in ET.tostring(root, encoding="unicode")
    path = tmp_path / "j.xml"
    write_text(str(path), text + "\udcff")
    assert path.read_bytes().endswith(b"?")
