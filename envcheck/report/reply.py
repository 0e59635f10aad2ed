"""`envcheck diagnose --format markdown`: a reply to paste into the issue the report came from.

It says what the reporter needs and nothing the maintainer does: the cause (the root
findings, with the line of the report that shows each), the install command resolved for the
reporter's machine (never for the machine envcheck runs on), and what the report did not say
with the command that prints it. Values come from the Report; nothing is decided here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from .._version import __version__

if TYPE_CHECKING:
    from ..core import Report

# What to run on the reporter's machine to print a fact the report lacked (diagnose's
# "missing" labels, envcheck.diagnose.KEY_FACTS and DETAIL_LABELS).
COLLECT_ENV = "python -m torch.utils.collect_env"
HOW_TO_GET = {
    "torch version and build": 'python -c "import torch; print(torch.__version__, torch.version.cuda)"',
    "NVIDIA driver and GPUs": "nvidia-smi",
    "Python version": "python --version",
    "operating system": "python -m torch.utils.collect_env",
    "whether CUDA initialised in torch": 'python -c "import torch; print(torch.cuda.is_available())"',
    "CUDA toolkit (nvcc)": "nvcc -V",
    "the GPUs (their names)": "nvidia-smi -L",
    "the NVIDIA driver version": "nvidia-smi",
    "the machine's architecture (x86_64, aarch64)": "python -m torch.utils.collect_env",
    "the GPUs' PCIe links (envcheck probe on the machine)": "envcheck probe --json",
}


def render_reply(report: Report) -> str:
    diagnosis = report.diagnosis or {}
    roots = [f for f in report.findings if f.caused_by is None and f.severity.value != "info"]
    lines: List[str] = ["### What envcheck found in this report", ""]
    if not roots:
        lines += ["Nothing in the report shows a problem envcheck knows.", ""]
    for f in roots:
        lines.append(f"- **{f.title}** (`{f.code}` {f.name})")
        if f.evidence:
            lines.append(f"  - seen: `{_inline(f.evidence[0])}`")
        if f.fix:
            lines.append(f"  - fix: {f.fix}")
        follows = [g for g in report.findings if g.caused_by == f.code]
        for g in follows:
            lines.append(f"  - also explained by this: {g.title}")
    advice = report.install
    if advice is not None and advice.command:
        lines += ["", "**Command for your machine:**", "", "```sh", advice.command, "```"]
    elif diagnosis.get("command_needs"):
        lines += [
            "",
            "**Install command:** not resolved: the report does not say "
            + ", ".join(diagnosis["command_needs"])
            + ".",
        ]
    missing = list(diagnosis.get("missing") or [])
    if missing:
        lines += ["", "**The report does not say:**", ""]
        asks = _asks(missing)
        lines += [f"- {m}" for m in missing]
        lines += ["", "Please run these and paste their output:", "", "```sh", *asks, "```"]
    lines += [
        "",
        f"<sub>envcheck {__version__} diagnose; compatibility tables as of "
        f"{report.tables_as_of}</sub>",
        "",
    ]
    return "\n".join(lines)


def _asks(missing: List[str]) -> List[str]:
    """The fewest commands that print what is missing: one fact, its own command; more,
    collect_env (it prints torch, Python, OS, nvcc, driver and GPUs), with nvidia-smi when
    the driver is missing (collect_env does not print the CUDA the driver supports)."""
    if len(missing) == 1:
        return [HOW_TO_GET.get(missing[0], COLLECT_ENV)]
    asks = [COLLECT_ENV]
    if any("driver" in m or "GPU" in m for m in missing):
        asks.append("nvidia-smi")
    return asks


def _inline(text: str) -> str:
    """One line of evidence inside backticks."""
    line = " ".join(text.split())
    return (line[:197] + "...") if len(line) > 200 else line.replace("`", "'")
