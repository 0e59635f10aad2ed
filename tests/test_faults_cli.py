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

import pytest

from envcheck.probes.environ import redact_value
from envcheck.report.style import use_color
from tests.runner import envcheck


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
    env = dict(_clean_env(), ENVCHECK_GPUS="NVIDIA GeForce RTX 4090:8.9:24GiB")
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
