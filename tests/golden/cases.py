"""What envcheck prints, command by command, on machines that do not depend on this one.

Each case is a real ``python -m envcheck`` process: saved reports (the test profiles and the
diagnose corpus) read by ``diagnose`` in every format it has, error messages given to
``explain``, the tables summary, and install plans for simulated machines (the NVIDIA facts,
the Python and the installed torch set through ENVCHECK_* overrides, the platform named).
Their output is kept under ``outputs/`` and compared byte for byte by tests/test_golden.py, so
that a change of the code's shape cannot change what a user reads.

    python -m tests.golden            # compare, listing the cases that differ
    python -m tests.golden --update   # write the outputs anew (after a change meant to show)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from tests.runner import user_env

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUTPUTS = HERE / "outputs"
PROFILES = ROOT / "tests" / "profiles"
CORPUS = ROOT / "tests" / "diagnose_corpus"


class Case(NamedTuple):
    name: str
    args: Tuple[str, ...]
    env: Dict[str, str]


def _machine(
    gpus: str, driver: Optional[str], python: str = "3.12.3", **torch: str
) -> Dict[str, str]:
    """A simulated machine: its GPUs and driver, its Python, and no torch unless given."""
    env = {"ENVCHECK_GPUS": gpus, "ENVCHECK_FACT_PYTHON_VERSION": python}
    if driver:
        env["ENVCHECK_DRIVER_VERSION"] = driver
    if torch:
        env["ENVCHECK_FACT_TORCH_INSTALLED"] = "true"
        env.update({f"ENVCHECK_FACT_TORCH_{k.upper()}": v for k, v in torch.items()})
    else:
        env["ENVCHECK_FACT_TORCH_INSTALLED"] = "false"
    return env


MACHINES: Dict[str, Dict[str, str]] = {
    "rtx4090-550": _machine("NVIDIA GeForce RTX 4090:8.9:24GiB", "550.54.15"),
    "rtx5090-570": _machine("NVIDIA GeForce RTX 5090:12.0:32GiB", "570.86.10", python="3.13.1"),
    "h100-535": _machine("NVIDIA H100 80GB HBM3:9.0:80GiB", "535.104.05", python="3.10.12"),
    "gtx1080-470": _machine("NVIDIA GeForce GTX 1080:6.1:8GiB", "470.82.01", python="3.9.18"),
    "v100-580": _machine("Tesla V100-SXM2-32GB:7.0:32GiB", "580.65.06", python="3.11.9"),
    "nogpu": _machine("none", None, python="3.12.3"),
    "rtx3060-cpu-torch": _machine(
        "NVIDIA GeForce RTX 3060:8.6:12GiB",
        "535.104.05",
        python="3.11.9",
        version="2.5.1+cpu",
        dist_version="2.5.1+cpu",
    ),
}

INSTALLS: List[Tuple[str, Tuple[str, ...]]] = [
    ("rtx4090-550", ()),
    ("rtx4090-550", ("--torch", "2.7")),
    ("rtx4090-550", ("--torch", "2.5.1", "--with", "torchvision,torchaudio")),
    ("rtx4090-550", ("--variant", "cpu")),
    ("rtx4090-550", ("--json",)),
    ("rtx5090-570", ()),
    ("rtx5090-570", ("--torch", "2.6")),
    ("rtx5090-570", ("--variant", "cu126")),
    ("h100-535", ()),
    ("h100-535", ("--torch", "2.4")),
    ("gtx1080-470", ()),
    ("gtx1080-470", ("--torch", "2.9")),
    ("v100-580", ()),
    ("v100-580", ("--torch", "2.11")),
    ("nogpu", ()),
    ("nogpu", ("--torch", "1.13")),
    ("rtx3060-cpu-torch", ()),
    ("rtx3060-cpu-torch", ("--keep",)),
]
MANAGERS = ["pip", "uv", "conda", "requirements", "uv-project", "poetry"]
PLATFORMS = ["linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64"]
MESSAGES = [
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    "NCCL WARN NET/Socket : peer 10.0.0.2<41234> shutdown",
    "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error.",
    "ERROR: No matching distribution found for torch==2.5.1+cu118",
    "this message is not one envcheck knows",
]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def cases() -> List[Case]:
    out: List[Case] = []
    for path in sorted(PROFILES.glob("*.json")):
        for fmt in ("text", "json", "markdown"):
            out.append(
                Case(
                    f"diagnose-{path.stem}-{fmt}",
                    ("diagnose", _relative(path), "--format", fmt),
                    {},
                )
            )
    for stem in ("h100-server", "rtx5090-cu126"):
        path = PROFILES / f"{stem}.json"
        out.append(
            Case(f"diagnose-{stem}-html", ("diagnose", _relative(path), "--format", "html"), {})
        )
        out.append(
            Case(
                f"diagnose-{stem}-strict-ignore",
                ("diagnose", _relative(path), "--strict", "--ignore", "DRV002"),
                {},
            )
        )
    for path in sorted(CORPUS.glob("*.txt")):
        out.append(Case(f"diagnose-corpus-{path.stem}", ("diagnose", _relative(path)), {}))
    for number, message in enumerate(MESSAGES):
        out.append(Case(f"explain-{number}", ("explain", message), {}))
    out.append(Case("tables", ("tables",), {}))
    out.append(Case("tables-json", ("tables", "--json"), {}))
    for number, (machine, args) in enumerate(INSTALLS):
        out.append(
            Case(
                f"install-{number:02d}-{machine}",
                ("install", "--platform", "linux-x86_64", *args),
                MACHINES[machine],
            )
        )
    for manager in MANAGERS:
        for machine in ("rtx4090-550", "nogpu"):
            out.append(
                Case(
                    f"install-{manager}-{machine}",
                    (
                        "install",
                        "--platform",
                        "linux-x86_64",
                        "--manager",
                        manager,
                        "--with",
                        "torchvision",
                    ),
                    MACHINES[machine],
                )
            )
    for platform in PLATFORMS:
        for machine in ("rtx4090-550", "nogpu"):
            for manager in ("pip", "uv"):
                out.append(
                    Case(
                        f"install-{platform}-{machine}-{manager}",
                        ("install", "--platform", platform, "--manager", manager),
                        MACHINES[machine],
                    )
                )
    out.append(Case("install-bad-torch", ("install", "--torch", "banana"), MACHINES["nogpu"]))
    out.append(Case("install-bad-variant", ("install", "--variant", "cu999x"), MACHINES["nogpu"]))
    out.append(
        Case("install-bad-platform", ("install", "--platform", "plan9-mips"), MACHINES["nogpu"])
    )
    out.append(Case("diagnose-missing-file", ("diagnose", "/nonexistent/report.txt"), {}))
    return out


_AGE = re.compile(r"\(\d+ days? old")
_AGE_JSON = re.compile(r'"age_days": \d+')
# click 8.1 names the help option it finds first, click 8.2 the long one.
_HELP = re.compile(r"(Try '[^']*) -h' for help")


def normalised(text: str) -> str:
    """The output with what belongs to this machine, today or the click release taken out:
    the interpreter's and the checkout's paths, the age of the tables, click's help hint."""
    for path, name in (
        (sys.executable, "<python>"),
        (sys.prefix, "<prefix>"),
        (str(ROOT), "<root>"),
    ):
        text = text.replace(path, name)
    text = _HELP.sub(r"\1 --help' for help", text)
    return _AGE_JSON.sub('"age_days": N', _AGE.sub("(N days old", text))


def run(case: Case) -> str:
    """The case as a user runs it from the checkout, naming its files by relative paths (an
    absolute one would make the output depend on where the checkout lies)."""
    done = subprocess.run(
        [sys.executable, "-m", "envcheck", *case.args],
        capture_output=True,
        text=True,
        env=user_env(case.env),
        cwd=ROOT,
        timeout=300,
    )
    return (
        f"$ envcheck {' '.join(case.args)}\nexit {done.returncode}\n"
        f"--- stdout\n{normalised(done.stdout)}--- stderr\n{normalised(done.stderr)}"
    )


def main(argv: List[str]) -> int:
    update = "--update" in argv
    OUTPUTS.mkdir(exist_ok=True)
    differ = []
    for case in cases():
        got = run(case)
        path = OUTPUTS / f"{case.name}.txt"
        if update:
            path.write_text(got, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != got:
            differ.append(case.name)
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(cases())} cases, {len(differ)} differ" + (" (written)" if update else ""))
    return 1 if differ else 0
