"""Smoke results as terminal lines (the core turns them into findings: envcheck.core)."""

from __future__ import annotations

from typing import List

from ..smoke.runner import SmokeResult
from .style import Style

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


def result_lines(r: SmokeResult, color: bool = False) -> List[str]:
    s = Style(color)
    status = s(f"{str(r.status).replace('_', ' '):9}", _COLOR.get(str(r.status), "dim"), "bold")
    lines = [f"{status} {r.name + ' ' + r.device:22} {r.duration_s:6.2f} s  {summary_line(r)}"]
    if r.status != "passed":
        for extra in (r.error or "").splitlines()[1:6]:
            lines.append(f"          {s(extra, 'dim')}")
        for hint in r.hints:
            lines.append(f"          {s('try:', 'green')} {hint}")
    return lines


def verdict_line(results: List[SmokeResult], color: bool = False) -> str:
    s = Style(color)
    bad = [r for r in results if r.failed]
    verdict = s("SMOKE PASSED", "green", "bold") if not bad else s("SMOKE FAILED", "red", "bold")
    return f"{verdict}: {len(results) - len(bad)} of {len(results)} tests passed"


def render_results(results: List[SmokeResult], color: bool = False) -> str:
    lines = [line for r in results for line in result_lines(r, color)]
    return "\n".join([*lines, verdict_line(results, color)]) + "\n"
