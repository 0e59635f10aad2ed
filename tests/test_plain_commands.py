"""The usual command lines of `envcheck check`, `diagnose` and `probe` are read without click
(envcheck.commands), every other one by their click commands: both must read a command line
alike, run the same body, say a usage error alike, and a plain line must cost no click
import."""

from __future__ import annotations

import inspect
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import click
import pytest

from envcheck.cli.check import check as command
from envcheck.commands.check import plain_options, run_check, run_plain
from envcheck.tables.load import builtin_dir
from tests.runner import user_env

DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(run_check).parameters.items()
    if name != "tables_dir"
}

PLAIN = [
    [],
    ["--no-deep"],
    ["--deep"],
    ["--json", "--no-deep"],
    ["--format", "markdown"],
    ["--format=github", "--strict"],
    ["--timeout", "2.5"],
    ["--timeout=30", "--show-ids"],
    ["--timeout", "0.1"],
    ["--manager", "uv"],
    ["--manager=uv-project"],
    ["--ignore", "TRC003"],
    ["--ignore", "TRC003", "--ignore=SYS001,SYS002"],
    ["--config", "pyproject.toml", "--python", "/usr/bin/python3"],
    ["--smoke", "--no-deep"],
    ["--junit", "out/report.xml", "--html", "report.html"],
]
# Left to click: help, the group's options, unknown or abbreviated options, values that are
# not plainly valid, a choice click refuses, repeats (click keeps the last), a missing value,
# --code (its value is optional), anything that is not an option.
NOT_PLAIN = [
    ["--help"],
    ["-h"],
    ["--tables", "x"],
    ["--no-dee"],
    ["--format", "yaml"],
    ["--format", "JSON"],
    ["--manager", "pipx"],
    ["--timeout", "0.05"],
    ["--timeout", "1e3"],
    ["--timeout", "nan"],
    ["--timeout", "-1"],
    ["--timeout"],
    ["--deep", "--no-deep"],
    ["--json", "--json"],
    ["--strict=1"],
    ["--python", ""],
    ["--config", "--strict"],
    ["--code"],
    ["--code", "src"],
    ["extra"],
    ["--"],
]


def click_reads(argv: List[str]) -> Dict[str, Any]:
    return dict(command.make_context("check", list(argv)).params)


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a) or "(none)")
def test_a_plain_command_line_reads_as_click_reads_it(argv: List[str], tmp_path: Path) -> None:
    """And run_check's defaults are click's: the same body gets the same keywords."""
    argv = [str(tmp_path / a) if a.startswith(("out/", "report.")) else a for a in argv]
    options = plain_options(argv)
    assert options is not None
    assert {**DEFAULTS, **options} == click_reads(argv)


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=" ".join)
def test_anything_else_is_left_to_click(argv: List[str]) -> None:
    assert plain_options(argv) is None


def test_an_output_file_click_would_refuse_is_left_to_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --junit FILE that is a folder or a link is a usage error click states (exit 2): the
    plain line is left to click before anything runs. Reading a line creates nothing: a line
    click must read (a repeat, an unknown option) leaves no folder behind."""
    link = tmp_path / "link.xml"
    link.symlink_to(tmp_path / "elsewhere.xml")
    monkeypatch.setattr("envcheck.commands.check.run_check", lambda *a, **k: pytest.fail("ran"))
    assert run_plain(["--junit", str(tmp_path)]) is None
    assert run_plain(["--html", str(link)]) is None
    twice = ["--junit", f"{tmp_path}/a/j.xml", "--junit", f"{tmp_path}/b/j.xml"]
    unknown = ["--junit", f"{tmp_path}/c/j.xml", "--bogus"]
    assert run_plain(twice) is None and run_plain(unknown) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.xml"]


# The console script's entry, reporting whether click was imported.
CONSOLE = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('click imported:', 'click' in sys.modules, file=sys.stderr))\n"
    "from envcheck._entry import main\nmain()\n"
)


def _console(*args: str, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CONSOLE, *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture
def no_gpu_env(tmp_path: Path) -> Dict[str, str]:
    return user_env({"ENVCHECK_GPUS": "none", "HOME": str(tmp_path)})


def test_both_ways_give_the_same_report(no_gpu_env: Dict[str, str]) -> None:
    """A plain line runs without click; a line click must read (here the group's --tables)
    goes to click; both run the same body, so the reports agree."""
    plain = _console("check", "--no-deep", "--json", env=no_gpu_env)
    assert "click imported: False" in plain.stderr
    tables = ("--tables", str(builtin_dir()))
    grouped = _console(*tables, "check", "--no-deep", "--json", env=no_gpu_env)
    assert "click imported: True" in grouped.stderr
    assert plain.returncode == grouped.returncode == 0, plain.stderr + grouped.stderr
    a, b = json.loads(plain.stdout), json.loads(grouped.stdout)
    assert a["command"] == "check" and a["verdict"] == b["verdict"]
    assert [f["code"] for f in a["findings"]] == [f["code"] for f in b["findings"]]
    assert a["facts"]["python"] == b["facts"]["python"]


def test_a_usage_error_found_while_running_is_said_by_click(
    tmp_path: Path, no_gpu_env: Dict[str, str]
) -> None:
    """A plain line whose --config cannot be read is click's usage error: exit 2, the message,
    no report and no traceback."""
    missing = tmp_path / "nowhere.toml"
    out = _console("check", "--no-deep", "--config", str(missing), env=no_gpu_env)
    assert out.returncode == 2, out.stderr
    assert "Usage: envcheck check" in out.stderr and str(missing) in out.stderr
    assert "click imported: True" in out.stderr
    assert out.stdout == "" and "Traceback" not in out.stderr


def test_a_bug_on_the_plain_path_reads_as_one(no_gpu_env: Dict[str, str]) -> None:
    """An exception inside the check is a plea to report it and exit 3, as on click's path."""
    code = (
        "import envcheck.core\n"
        "def broken(**kwargs): raise RuntimeError('a bug')\n"
        "envcheck.core.check = broken\n"
        "from envcheck._entry import main\nmain(['check', '--no-deep'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=no_gpu_env
    )
    assert out.returncode == 3
    assert "envcheck failed unexpectedly; please report this:" in out.stderr
    assert "RuntimeError: a bug" in out.stderr and out.stdout == ""


# --------------------------------------------------------------------------- diagnose

DIAGNOSE_PLAIN = [
    ["report.txt"],
    ["-"],
    ["--json", "report.txt"],
    ["report.txt", "--format", "markdown"],
    ["--format=html", "--strict", "-"],
    ["--ignore", "MSG001", "report.txt", "--ignore=PY002"],
    ["--json", "--format", "json", "report.txt"],
    ["--json", "--format", "markdown", "report.txt"],  # read alike; the body says they conflict
]
DIAGNOSE_NOT_PLAIN = [
    [],
    ["--help"],
    ["a.txt", "b.txt"],
    ["--format", "github", "report.txt"],
    ["--ignore", "report.txt"],
    ["--strict=1", "report.txt"],
    ["-x"],
    ["--", "report.txt"],
]


def diagnose_click_reads(argv: List[str]) -> Dict[str, Any]:
    from envcheck.cli.diagnose import diagnose

    params = dict(diagnose.make_context("diagnose", list(argv)).params)
    source = params.pop("source")
    name = getattr(source, "name", None)
    params["source"] = name if isinstance(name, str) and name != "<stdin>" else "-"
    if params["source"] != "-":
        source.close()
    return params


@pytest.mark.parametrize("argv", DIAGNOSE_PLAIN, ids=" ".join)
def test_a_plain_diagnose_line_reads_as_click_reads_it(
    argv: List[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from envcheck.commands.diagnose import plain_options, run_diagnose

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"nvidia-smi\n")))
    (tmp_path / "report.txt").write_text("nvidia-smi\n", "utf-8")
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(run_diagnose).parameters.items()
        if name not in ("source", "tables_dir")
    }
    options = plain_options(argv)
    assert options is not None
    assert {**defaults, **options} == diagnose_click_reads(argv)


@pytest.mark.parametrize("argv", DIAGNOSE_NOT_PLAIN, ids=lambda a: " ".join(a) or "(none)")
def test_any_other_diagnose_line_is_left_to_click(argv: List[str]) -> None:
    from envcheck.commands.diagnose import plain_options

    assert plain_options(argv) is None


REPORT = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_both_ways_diagnose_alike(how: str, tmp_path: Path, no_gpu_env: Dict[str, str]) -> None:
    """The plain line (no click) and the same line through the group (click) print the same
    report and exit alike, from a file or from stdin; a FILE that cannot be opened is click's
    usage error."""
    (tmp_path / "report.txt").write_text(REPORT, "utf-8")
    source = str(tmp_path / "report.txt") if how == "file" else "-"
    runs = []
    for group in ([], ["--tables", str(builtin_dir())]):
        runs.append(
            subprocess.run(
                [sys.executable, "-c", CONSOLE, *group, "diagnose", "--json", source],
                input=REPORT,
                capture_output=True,
                text=True,
                timeout=120,
                env=no_gpu_env,
            )
        )
    plain, grouped = runs
    assert "click imported: False" in plain.stderr and "click imported: True" in grouped.stderr
    assert plain.returncode == grouped.returncode == 1, plain.stderr
    a, b = json.loads(plain.stdout), json.loads(grouped.stdout)
    assert a["command"] == "diagnose" and "MSG001" in [f["code"] for f in a["findings"]]
    assert [f["code"] for f in a["findings"]] == [f["code"] for f in b["findings"]]
    missing = _console("diagnose", str(tmp_path / "nowhere.txt"), env=no_gpu_env)
    assert missing.returncode == 2 and "No such file or directory" in missing.stderr


def test_a_paste_that_reads_as_nothing_is_not_judged_without_click(
    no_gpu_env: Dict[str, str],
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CONSOLE, "diagnose", "-"],
        input="hello\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=no_gpu_env,
    )
    assert out.returncode == 2 and "found nothing it can read" in out.stdout
    assert "click imported: False" in out.stderr


# --------------------------------------------------------------------------- probe

PROBE_PLAIN = [
    [],
    ["--json"],
    ["--no-deep", "--json"],
    ["--timeout=5", "--show-ids"],
    ["--python", "/usr/bin/python3"],
]
PROBE_NOT_PLAIN = [["--help"], ["--strict"], ["--json", "--json"], ["--timeout", "0"], ["x"]]


@pytest.mark.parametrize("argv", PROBE_PLAIN, ids=lambda a: " ".join(a) or "(none)")
def test_a_plain_probe_line_reads_as_click_reads_it(argv: List[str]) -> None:
    from envcheck.cli.probe import probe
    from envcheck.commands.probe import plain_options, run_probe

    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(run_probe).parameters.items()
        if name != "tables_dir"
    }
    options = plain_options(argv)
    assert options is not None
    assert {**defaults, **options} == dict(probe.make_context("probe", list(argv)).params)


@pytest.mark.parametrize("argv", PROBE_NOT_PLAIN, ids=" ".join)
def test_any_other_probe_line_is_left_to_click(argv: List[str]) -> None:
    from envcheck.commands.probe import plain_options

    assert plain_options(argv) is None


def test_both_ways_probe_alike(no_gpu_env: Dict[str, str]) -> None:
    """The plain line and the same line through the group print the same facts; a bad
    override found while probing is click's usage error (exit 2) either way."""
    plain = _console("probe", "--no-deep", "--json", env=no_gpu_env)
    grouped = _console(
        "--tables", str(builtin_dir()), "probe", "--no-deep", "--json", env=no_gpu_env
    )
    assert "click imported: False" in plain.stderr and "click imported: True" in grouped.stderr
    assert plain.returncode == grouped.returncode == 0, plain.stderr
    a, b = json.loads(plain.stdout), json.loads(grouped.stdout)
    assert a["python"] == b["python"] and a["system"]["os"] == b["system"]["os"]
    bad = _console("probe", "--no-deep", env={**no_gpu_env, "ENVCHECK_GPUS": "garbage"})
    assert bad.returncode == 2 and "ENVCHECK_GPUS" in bad.stderr and bad.stdout == ""


# --------------------------------------------------------------------------- errors


def test_a_usage_error_is_said_once_as_click_says_it(
    tmp_path: Path, no_gpu_env: Dict[str, str]
) -> None:
    """A usage error found while a plain line runs is not found again by running it through
    click: a --config read from a pipe (which cannot be read twice) is still refused, exit 2,
    and the message reads as click's for the same line (the group's --tables sends it there)."""
    bad = '[tool.envcheck]\ngpus = "x"\n'
    piped = subprocess.run(
        [sys.executable, "-c", CONSOLE, "check", "--no-deep", "--config", "/dev/stdin"],
        input=bad,
        capture_output=True,
        text=True,
        timeout=120,
        env=no_gpu_env,
    )
    assert piped.returncode == 2 and piped.stdout == "", piped.stdout
    assert "Error: /dev/stdin: gpus = 'x' is not a whole number" in piped.stderr
    config = tmp_path / "envcheck.toml"
    config.write_text(bad, "utf-8")
    plain = _console("check", "--no-deep", "--config", str(config), env=no_gpu_env)
    tables = ("--tables", str(builtin_dir()))
    grouped = _console(*tables, "check", "--no-deep", "--config", str(config), env=no_gpu_env)
    assert plain.returncode == grouped.returncode == 2
    assert "click imported: True" in plain.stderr  # only to say the error
    assert plain.stderr == grouped.stderr and plain.stderr.startswith("Usage: envcheck check")
    conflict = _console("diagnose", "--json", "--format", "markdown", str(config), env=no_gpu_env)
    assert conflict.returncode == 2 and "give one" in conflict.stderr
    assert conflict.stderr.startswith("Usage: envcheck diagnose [OPTIONS] FILE|-")


BROKEN_BUILTIN = """
import shutil, sys
from pathlib import Path
from envcheck.tables import load
folder = Path(sys.argv[1])
for name in load.TABLE_NAMES:
    shutil.copy(load.builtin_dir() / f"{name}.json", folder / f"{name}.json")
broken = folder / f"{sys.argv[2]}.json"
text = broken.read_text("utf-8")
broken.write_text(text[: len(text) // 2], "utf-8")
load.builtin_dir = lambda: folder
from envcheck._entry import main
main(sys.argv[3:])
"""


@pytest.mark.parametrize(
    "table, command", [("gpu_arches", ["check", "--no-deep"]), ("messages", ["diagnose", "-"])]
)
def test_a_broken_built_in_table_read_on_use_ends_the_run_as_at_load(
    table: str, command: List[str], tmp_path: Path, no_gpu_env: Dict[str, str]
) -> None:
    """A built-in file is parsed on first use (tables.groups.OnUse): one that turns out broken
    then ends the run as unusable tables do at load (exit 3, one line saying which file),
    never as a check that failed, a READY or a traceback."""
    env = {**no_gpu_env, "ENVCHECK_GPUS": "NVIDIA A100-SXM4-80GB:8.0:80GiB"}
    out = subprocess.run(
        [sys.executable, "-c", BROKEN_BUILTIN, str(tmp_path), table, *command],
        input="CUDA error: no kernel image is available for execution on the device\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 3, out.stdout + out.stderr
    assert "envcheck: cannot use the compatibility tables:" in out.stderr
    assert f"{table}.json: not valid JSON" in out.stderr and "Traceback" not in out.stderr


def test_what_is_written_holds_no_control_sequence_and_no_lone_surrogate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As click's echo did: a path or a paste that holds an ANSI sequence cannot colour the
    terminal or move its cursor, unless colour is asked; an undecodable byte of a file name
    is a "?"."""
    from envcheck.report.emit import write

    write("py\x1b[31mred \x1b[2Jx\x1b[>0c\x1b[2~\x1b[1 q\n")
    write("py\x1b[31mred\n", color=True)
    write("big\udcff.txt\n", err=True)
    out, err = capsys.readouterr()
    assert out == "pyred x\npy\x1b[31mred\n" and err == "big?.txt\n"


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "1e400"])
@pytest.mark.parametrize("command", ["check", "probe", "smoke"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(command: str, value: str) -> None:
    """click's FloatRange took "nan" (and "inf" where it has no maximum); a deep probe given
    either was not run while the report said nothing of it. Now a usage error, and the probe
    itself refuses it."""
    from envcheck.cli import cli
    from envcheck.probes import probe

    with pytest.raises(click.BadParameter, match="is not a number of seconds"):
        cli.get_command(click.Context(cli), command).make_context(command, ["--timeout", value])
    with pytest.raises(ValueError, match="finite number of seconds"):
        probe(deep=False, timeout=float(value))
