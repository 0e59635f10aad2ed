"""Smoke results as terminal lines (the core turns them into findings: envcheck.core)."""

from __future__ import annotations

from typing import List, Optional

from ..smoke.runner import SmokeResult
from .style import Style
from .wrap import terminal_width, wrap

_COLOR = {"passed": "green", "failed": "red", "timed_out": "red", "skipped": "yellow"}


def summary_line(r: SmokeResult) -> str:
    f = r.figures
    if r.status != "passed":
        return (r.error or "").splitlines()[0] if r.error else ""
    if r.name == "matmul":
        parts = [
            f"{k[:-7]} {v:.3f} TFLOP/s (error {f.get(k[:-7] + '_rel_error', 0):.1e})"
            for k, v in f.items()
            if k.endswith("_tflops")
        ]
        tf32 = f.get("tf32_matmul")
        return ", ".join(parts) + (f", TF32 {'on' if tf32 else 'off'}" if tf32 is not None else "")
    if r.name == "amp":
        return ", ".join(
            f"{dtype} loss {v['first_loss']:.3g} -> {v['last_loss']:.3g}, {v['skipped_steps']} skipped steps"
            for dtype, v in f.items()
        )
    if r.name == "all_reduce":
        last = f["sizes"][-1]
        return (
            f"{f['world_size']} ranks over {f['backend']}, verified; busbw {last['busbw_gbps']:.3f} GB/s "
            f"(algbw {last['algbw_gbps']:.3f}) at {last['bytes'] / 2**20:.1f} MiB"
        )
    return ", ".join(f"{k} {v}" for k, v in f.items())


def result_lines(r: SmokeResult, color: bool = False, width: Optional[int] = None) -> List[str]:
    """A result in lines of at most ``width`` columns (default: the terminal's)."""
    s = Style(color)
    width = terminal_width() if width is None else width
    plain = f"{str(r.status).replace('_', ' '):9}"
    lead = f"{plain} {r.name + ' ' + r.device:22} {r.duration_s:6.2f} s  "
    summary = summary_line(r)
    if len(lead) + 20 > width:  # a narrow terminal: the figures go under the test's name
        lines = [f"{plain} {r.name} {r.device} {r.duration_s:.2f} s"]
        lines += wrap(summary, width, first=" " * 10) if summary else []
    else:
        lines = wrap(summary, width, first=lead, rest=" " * 10)
    lines[0] = lines[0].replace(plain, s(plain, _COLOR.get(str(r.status), "dim"), "bold"), 1)
    if r.status != "passed":
        for extra in (r.error or "").splitlines()[1:6]:
            lines += [s(x, "dim") for x in wrap(extra, width, first=" " * 10)]
        for hint in r.hints:
            tried = wrap(hint, width, first=" " * 10 + "try: ", rest=" " * 15)
            tried[0] = tried[0].replace("try:", s("try:", "green"), 1)
            lines += tried
    return lines


def verdict_line(results: List[SmokeResult], color: bool = False) -> str:
    s = Style(color)
    bad = [r for r in results if r.failed]
    verdict = s("SMOKE PASSED", "green", "bold") if not bad else s("SMOKE FAILED", "red", "bold")
    return f"{verdict}: {len(results) - len(bad)} of {len(results)} tests passed"


def render_results(
    results: List[SmokeResult], color: bool = False, width: Optional[int] = None
) -> str:
    lines = [line for r in results for line in result_lines(r, color, width)]
    return "\n".join([*lines, verdict_line(results, color)]) + "\n"
