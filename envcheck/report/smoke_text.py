"""Smoke results as terminal lines (the core turns them into findings: envcheck.core)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ..smoke.expected import ONE_RANK, measures_links
from ..smoke.runner import SmokeResult
from ..values import SmokeStatus
from .style import Style
from .wrap import terminal_width, wrap

if TYPE_CHECKING:
    from ..core import SmokeTargets

_COLOR = {"passed": "green", "failed": "red", "timed_out": "red", "skipped": "yellow"}


def summary_line(r: SmokeResult) -> str:
    f = r.figures
    if r.status != SmokeStatus.PASSED:
        return (r.error or "").splitlines()[0] if r.error else ""
    if r.name == "matmul":
        return _matmul_line(f)
    if r.name == "amp":
        return ", ".join(
            f"{dtype} loss {v['first_loss']:.3g} -> {v['last_loss']:.3g}, {v['skipped_steps']} skipped steps"
            for dtype, v in f.items()
        )
    if r.name == "all_reduce":
        return _all_reduce_line(f)
    return ", ".join(f"{k} {v}" for k, v in f.items())


def _matmul_line(f: Dict[str, Any]) -> str:
    """Median TFLOP/s per dtype with its spread over the window's repeats: the spread says
    how far to trust the median on this machine (a shared CPU moves it)."""
    parts = []
    for key, value in f.items():
        if not key.endswith("_tflops"):
            continue
        dtype = key[: -len("_tflops")]
        text = f"{dtype} {value:.3f} TFLOP/s"
        low, high = f.get(f"{dtype}_tflops_min"), f.get(f"{dtype}_tflops_max")
        if low is not None and high is not None:
            text += f" (median of {f.get(f'{dtype}_repeats', '?')}, {low:.3f}-{high:.3f})"
        share = f.get(f"{dtype}_cpu_share")
        if share is not None and share < 0.9:
            text += f" on {share:.0%} of {f.get('threads')} threads (a busy CPU)"
        text += f", error {f.get(dtype + '_rel_error', 0):.1e}"
        parts.append(text)
    tf32 = f.get("tf32_matmul")
    if tf32 is not None:
        parts.append(f"TF32 {'on' if tf32 else 'off'}")
    if f.get("threads"):
        load = f.get("load_avg_1m")
        parts.append(f"{f['threads']} threads" + (f", load {load:g}" if load is not None else ""))
    return "; ".join(parts)


def _all_reduce_line(f: Dict[str, Any]) -> str:
    """Peak busbw and the size it was reached at, then what the links allow, or why that is
    not known (unknown is said, never left out as if it were fine)."""
    sizes = f.get("sizes") or []
    if not sizes:
        return f"{f.get('world_size')} ranks over {f.get('backend')}, verified"
    peak = max(sizes, key=lambda s: s["busbw_gbps"])
    ranks = f"{f['world_size']} rank{'s' if f['world_size'] != 1 else ''}"
    text = (
        f"{ranks} over {f['backend']}, verified at {len(sizes)} sizes "
        f"({_size(sizes[0]['bytes'])}-{_size(sizes[-1]['bytes'])})"
    )
    if not measures_links(f["world_size"]):  # a busbw of 0.000 GB/s read as a dead link
        text += f"; no busbw ({ONE_RANK})"
    else:
        text += f"; peak busbw {peak['busbw_gbps']:.3f} GB/s at {_size(peak['bytes'])}"
        if f.get("expected_busbw_gbps"):
            text += f"; expected {f['expected_busbw_gbps']:g} GB/s ({f.get('expected_basis', '')})"
        elif f.get("expected_unknown"):
            text += f"; expected: not known ({f['expected_unknown']})"
    if f.get("truncated"):
        text += f"; {f['truncated']}"
    return text


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


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
    if r.status != SmokeStatus.PASSED:
        for extra in (r.error or "").splitlines()[1:6]:
            lines += [s(x, "dim") for x in wrap(extra, width, first=" " * 10)]
        for hint in r.hints:
            tried = wrap(hint, width, first=" " * 10 + "try: ", rest=" " * 15)
            tried[0] = tried[0].replace("try:", s("try:", "green"), 1)
            lines += tried
    return lines


def note_lines(
    targets: Optional[SmokeTargets], color: bool = False, width: Optional[int] = None
) -> List[str]:
    """The GPUs the tests did not use, and why (core.smoke_targets), as a note."""
    if targets is None or not targets.gpus_not_exercised:
        return []
    width = terminal_width() if width is None else width
    lines = wrap(targets.gpus_not_exercised, width, first="note: ", rest="  ")
    lines[0] = lines[0].replace("note:", Style(color)("note:", "yellow"), 1)
    return lines


def verdict_line(
    results: List[SmokeResult],
    color: bool = False,
    targets: Optional[SmokeTargets] = None,
    strict: bool = False,
) -> str:
    """The verdict the core decided (SmokeTargets.passed): a pass that left a GPU out says
    so, and fails under --strict."""
    s = Style(color)
    bad = [r for r in results if r.failed]
    passed = targets.passed(results, strict) if targets is not None else not bad
    verdict = s("SMOKE PASSED", "green", "bold") if passed else s("SMOKE FAILED", "red", "bold")
    line = f"{verdict}: {len(results) - len(bad)} of {len(results)} tests passed"
    if targets is not None and targets.gpus_not_exercised:
        line += ", but the GPU was not exercised" + (" (--strict)" if strict else "")
    return line


def render_results(
    results: List[SmokeResult],
    color: bool = False,
    width: Optional[int] = None,
    targets: Optional[SmokeTargets] = None,
    strict: bool = False,
) -> str:
    lines = [line for r in results for line in result_lines(r, color, width)]
    lines += note_lines(targets, color, width)
    return "\n".join([*lines, verdict_line(results, color, targets, strict)]) + "\n"
