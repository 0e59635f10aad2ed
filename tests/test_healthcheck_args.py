"""The healthcheck's plain command lines are read without click (envcheck.healthcheck.
plain_options), everything else by its click command: both must read a command line alike."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, List

import click
import pytest

from envcheck.healthcheck import DEFAULT_TIMEOUT, plain_options
from envcheck.healthcheck_command import command

PLAIN = [
    [],
    ["--gpus", "2"],
    ["--gpus=0"],
    ["--timeout", "2.5"],
    ["--timeout=30"],
    ["--timeout", "7."],
    ["--deep"],
    ["--state", "/var/lib/x.json"],
    ["--state=old", "--gpus", "8", "--deep", "--timeout", "1"],
]
# Left to click: help, unknown or abbreviated options, values that are not plainly valid,
# repeats (click keeps the last), a missing value.
NOT_PLAIN = [
    ["--help"],
    ["-h"],
    ["--gpu", "2"],
    ["--gpus", "-1"],
    ["--gpus", "1e3"],
    ["--gpus", "2.0"],
    ["--gpus", "\u0663"],  # an Arabic-Indic three: int() reads it, plain_options does not
    ["--gpus"],
    ["--timeout", "nan"],
    ["--timeout", "0"],
    ["--timeout", "1e3"],
    ["--timeout", "99999999"],
    ["--deep", "--deep"],
    ["--deep=1"],
    ["--state", "--deep"],
    ["--gpus", "1", "--gpus", "2"],
    ["extra"],
    ["--"],
]


def click_reads(argv: List[str]) -> Dict[str, Any]:
    ctx = command.make_context("healthcheck", list(argv))
    params = dict(ctx.params)
    params.pop("state")
    return params


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a) or "(none)")
def test_a_plain_command_line_reads_as_click_reads_it(argv: List[str]) -> None:
    options = plain_options(argv)
    assert options is not None
    full = {"gpus": None, "deep": False, "timeout": DEFAULT_TIMEOUT, **options}
    assert full == click_reads(argv)


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=" ".join)
def test_anything_else_is_left_to_click(argv: List[str]) -> None:
    assert plain_options(argv) is None


@pytest.mark.parametrize("argv", [a for a in NOT_PLAIN if a[:1] not in (["--help"], ["-h"])])
def test_what_is_left_to_click_is_still_one_line(argv: List[str]) -> None:
    """Either click reads it (a repeat, an unusual number) or refuses it in one line, exit 1."""
    out = subprocess.run(
        [sys.executable, "-c", "from envcheck._entry import main; main()", "healthcheck", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode in (0, 1), out.stderr
    assert len(out.stdout.strip().splitlines()) == 1 and out.stderr == ""
    assert out.stdout.startswith(("healthy:", "unhealthy:"))


def test_the_click_command_refuses_what_it_cannot_read(capsys) -> None:
    """click_reads is only worth something while the command refuses bad lines itself."""
    with pytest.raises(click.exceptions.Exit) as stopped:
        command.make_context("healthcheck", ["--gpu", "2"])
    assert stopped.value.exit_code == 1
    out = capsys.readouterr().out  # click's words differ between its versions
    assert out.startswith("unhealthy: No such option") and "--gpu" in out and out.count("\n") == 1
