"""Text fits COLUMNS without breaking a word or a command, and waits show progress on a
terminal only. Real console-script runs; a real pty for the terminal; real bash to read
a wrapped command back."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

from envcheck.report.smoke_text import render_results
from envcheck.report.wrap import command_lines, wrap
from envcheck.smoke.runner import SmokeResult
from tests.runner import envcheck

REPO = Path(__file__).resolve().parent.parent
RTX4090 = {
    "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
    "ENVCHECK_DRIVER_VERSION": "550.54.14",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.4",
}
CONTAINER = {
    "NVIDIA_VISIBLE_DEVICES": "all",
    "ENVCHECK_FACT_SYSTEM_CONTAINER": "docker",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu126",
    "ENVCHECK_FACT_TORCH_CUDA": "12.6",
    "ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB",
}
CORPUS = REPO / "tests" / "diagnose_corpus" / "collect_env_2x_rtx5090.txt"
WIDTHS = [40, 60, 80]


def fits(text: str, width: int) -> List[str]:
    """Lines longer than ``width`` that are more than one unbreakable token (a path, a URL)
    with its label or marker."""
    bad = []
    for line in text.splitlines():
        if len(line) <= width:
            continue
        tokens = line.split()
        rest = sum(len(t) for t in tokens) - max(len(t) for t in tokens)
        if rest > 16:
            bad.append(line)
    return bad


COMMANDS = {
    "check": (("check", "--no-deep"), RTX4090),
    "check-container": (("check", "--no-deep"), CONTAINER),
    "install": (("install", "--torch", "2.13", "--with", "torchvision,torchaudio"), RTX4090),
    "install-conflict": (("install", "--torch", "2.5", "--variant", "cu113"), RTX4090),
    "explain": (
        ("explain", "CUDA error: no kernel image is available for execution on the device"),
        {},
    ),
    "diagnose": (("diagnose", str(CORPUS)), {}),
    "probe": (("probe", "--no-deep"), RTX4090),
    "tables": (("tables",), {}),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_text_output_fits_the_width(name: str, width: int) -> None:
    args, env = COMMANDS[name]
    run = envcheck(*args, env={**env, "COLUMNS": str(width)})
    assert run.stdout.strip(), run.stderr
    assert fits(run.stdout, width) == [], run.stdout


def test_no_word_of_a_finding_is_split() -> None:
    """Every word of every title, evidence line and fix (from --json) is whole in the text."""
    env = {**CONTAINER, **RTX4090}
    report = json.loads(envcheck("check", "--no-deep", "--json", env=env).stdout)
    text = envcheck("check", "--no-deep", env={**env, "COLUMNS": "40"}).stdout
    words = set(text.split())
    assert report["findings"]  # a report without findings would check no word
    for finding in report["findings"]:
        for field in [finding["title"], finding["fix"], *finding["evidence"]]:
            for word in field.split():
                assert word in words, (word, field)


def _command_from_text(text: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("$ "))
    parts = [lines[start].strip()[2:]]
    while parts[-1].endswith(" \\"):
        start += 1
        parts[-1] = parts[-1][:-2]
        parts.append(lines[start].strip())
    return "\n".join(p + " \\" for p in parts[:-1]) + ("\n" if len(parts) > 1 else "") + parts[-1]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_wrapped_command_reads_back_as_the_same_argv(width: int) -> None:
    report = json.loads(envcheck("check", "--no-deep", "--json", env=RTX4090).stdout)
    argv = report["install"]["argv"]
    text = envcheck("check", "--no-deep", env={**RTX4090, "COLUMNS": str(width)}).stdout
    shown = _command_from_text(text)
    if width < 80:
        assert "\\\n" in shown  # it was long enough to be continued
    read = subprocess.run(
        ["bash", "-c", f"set -- {shown}\nprintf '%s\\n' \"$@\""], capture_output=True, text=True
    )
    assert read.stdout.splitlines() == argv


def test_without_a_terminal_or_columns_a_command_stays_on_one_line() -> None:
    """A script reading `envcheck install | tail -n 1` gets the whole command."""
    run = envcheck(
        "install",
        "--torch",
        "2.13",
        "--python-version",
        "3.11",
        "--with",
        "torchvision,torchaudio",
        env=RTX4090,
    )
    last = run.stdout.strip().splitlines()[-1]
    assert last.endswith("https://download.pytorch.org/whl/cu126") and "pip install" in last


def test_wrap_never_splits_a_token_and_keeps_its_line_breaks() -> None:
    text = "a " * 10 + "https://download.pytorch.org/whl/cu126 b\nsecond paragraph"
    lines = wrap(text, 20, first="x: ")
    assert "   https://download.pytorch.org/whl/cu126" in lines  # whole, on a line of its own
    assert lines[-1] == "   second paragraph"  # the text's own break is kept
    assert all(len(x) <= 20 for x in lines if "://" not in x)


def test_file_snippets_are_never_continued() -> None:
    toml = 'dependencies = ["torch==2.13.0", "torchvision==0.28.0", "torchaudio==2.11.1"]'
    assert command_lines(toml, 40, first="", rest="") == [toml]


def test_smoke_lines_fit() -> None:
    results = [
        SmokeResult(
            "matmul",
            "cpu",
            "passed",
            2.2,
            figures={"float32_tflops": 0.3, "float32_rel_error": 4e-7, "bfloat16_tflops": 1.2},
        ),
        SmokeResult(
            "all_reduce",
            "cuda:0",
            "timed_out",
            120.0,
            error="no result after 120 s",
            hints=["NCCL_DEBUG=INFO, NCCL_P2P_DISABLE=1 to test peer-to-peer"],
        ),
    ]
    for width in WIDTHS:
        assert fits(render_results(results, width=width), width) == []


def _stderr_on_a_pty(args: List[str], env: Dict[str, str]) -> bytes:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, **env, "TERM": "xterm"},
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            seen += data
        elif proc.poll() is not None:
            break
    proc.communicate(timeout=60)
    os.close(master)
    return seen


def test_the_deep_probe_shows_progress_on_a_terminal_and_erases_it() -> None:
    pytest.importorskip("torch")  # the wait is real torch's import (about 2 s here)
    seen = _stderr_on_a_pty(["check"], {})
    assert b"importing torch in a child process ..." in seen
    assert seen.endswith(b"\r")  # erased: the last write returns to the line's start


def test_no_progress_when_stderr_is_not_a_terminal() -> None:
    run = envcheck("check")
    assert "importing torch" not in run.stderr and "\r" not in run.stderr
