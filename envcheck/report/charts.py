"""The charts of the HTML pages, as inline SVG: bars per device or rank, and the all_reduce
busbw curve against the line its links allow. One palette, named by meaning."""

from __future__ import annotations

import math
from html import escape
from typing import Any, Dict, List, Optional, Sequence

from .._record import record
from .smoke_text import _size

# One palette, named by meaning: the screenshot test looks for these colours.
GREEN, RED, AMBER, GREY, VIOLET, BLUE = (
    "#1a7f37",
    "#cf222e",
    "#bf8700",
    "#8c959f",
    "#8250df",
    "#0969da",
)


def escape_html(value: Any) -> str:
    return escape(str(value), quote=True)


_e = escape_html  # short, as every chart line uses it


@record(frozen=True)
class Bar:
    label: str
    value: Optional[float]  # None: no figure (a rank that failed or never came)
    low: Optional[float] = None  # the spread of the repeats, drawn as a whisker
    high: Optional[float] = None
    color: str = BLUE
    note: str = ""  # written after the value: "SLOW", "MISSING"


def bar_chart(bars: Sequence[Bar], unit: str, label: str) -> str:
    """Horizontal bars, one row each, scaled to the largest value or whisker."""
    if not bars:
        return ""
    ends = [max(b.value or 0, b.high or 0) for b in bars]
    top = max(ends) or 1.0
    width, row, left = 720, 26, 150
    height = row * len(bars) + 30
    scale = (width - left - 200) / top
    out = [_svg_open(width, height, label)]
    for i, (b, end) in enumerate(zip(bars, ends)):
        y = 10 + i * row
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{_e(b.label)}</text>')
        if b.value is not None:
            out.append(
                f'<rect x="{left}" y="{y + 3}" width="{max(b.value * scale, 1):.1f}" height="16" '
                f'fill="{b.color}"/>'
            )
        if b.low is not None and b.high is not None:
            out.append(
                f'<line x1="{left + b.low * scale:.1f}" x2="{left + b.high * scale:.1f}" '
                f'y1="{y + 11}" y2="{y + 11}" stroke="#1f2328" stroke-width="2"/>'
            )
        text = f"{b.value:.3g}" if b.value is not None else "-"
        text += f" {b.note}" if b.note else ""
        out.append(f'<text x="{left + end * scale + 6:.1f}" y="{y + 15}">{_e(text)}</text>')
    out.append(f'<text x="{left}" y="{height - 6}">{_e(unit)}</text></svg>')
    return "".join(out)


def busbw_chart(figures: Dict[str, Any]) -> str:
    """busbw against message size (log scale) with the line the links allow, the SMK004
    threshold under it, or the reason no line can be drawn."""
    sizes = [
        s for s in figures.get("sizes") or [] if s.get("bytes") and s.get("busbw_gbps") is not None
    ]
    expected = figures.get("expected_busbw_gbps")
    if not sizes:
        return ""
    plot = _Plot.of(sizes, expected)
    out = [_svg_open(plot.width, plot.height, "all_reduce busbw by message size")]
    out += _busbw_axes(plot, sizes)
    if expected:
        out += _busbw_expected(plot, expected)
    out += _busbw_points(plot, sizes)
    out.append("</svg>")
    if expected:
        out.append(f'<p class="muted">expected: {_e(figures.get("expected_basis", ""))}</p>')
    else:
        why = figures.get("expected_unknown") or "envcheck was given no facts about the links"
        out.append(f'<p class="muted">expected busbw: not known ({_e(why)})</p>')
    return "".join(out)


@record(frozen=True)
class _Plot:
    """The busbw chart's frame: message size on a log scale across, GB/s up."""

    ymax: float
    lo: float
    span: float
    width: int = 720
    height: int = 300
    left: int = 60
    bottom: int = 40
    top_pad: int = 20

    @classmethod
    def of(cls, sizes: List[Dict[str, Any]], expected: Optional[float]) -> _Plot:
        ymax = max([s["busbw_gbps"] for s in sizes] + [expected or 0]) * 1.15 or 1.0
        lo, hi = math.log2(sizes[0]["bytes"]), math.log2(sizes[-1]["bytes"])
        return cls(ymax, lo, (hi - lo) or 1.0)

    def x(self, n: float) -> float:
        return self.left + (math.log2(n) - self.lo) / self.span * (self.width - self.left - 20)

    def y(self, v: float) -> float:
        return self.top_pad + (1 - v / self.ymax) * (self.height - self.top_pad - self.bottom)


def _busbw_axes(p: _Plot, sizes: List[Dict[str, Any]]) -> List[str]:
    left, width, height, y = p.left, p.width, p.height, p.y
    out = [
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - 20}" y2="{y(0):.1f}" stroke="#57606a"/>',
        f'<line x1="{left}" y1="{p.top_pad}" x2="{left}" y2="{y(0):.1f}" stroke="#57606a"/>',
    ]
    for frac in (0.5, 1.0):
        v = p.ymax / 1.15 * frac
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    step = max(1, len(sizes) // 8)
    for s in sizes[::step]:
        out.append(
            f'<text x="{p.x(s["bytes"]):.1f}" y="{height - p.bottom + 16}" text-anchor="middle">{_e(_size(s["bytes"]))}</text>'
        )
    out.append(f'<text x="{left}" y="{height - 6}">message size</text>')
    out.append('<text x="8" y="14">busbw GB/s</text>')
    return out


def _busbw_expected(p: _Plot, expected: float) -> List[str]:
    """The dashed line the links allow, and the SMK004 threshold under it."""
    from ..core.smoke import BUSBW_WARN_FRACTION

    left, width, y = p.left, p.width, p.y
    warn = expected * BUSBW_WARN_FRACTION
    return [
        f'<line x1="{left}" x2="{width - 20}" y1="{y(expected):.1f}" y2="{y(expected):.1f}" '
        f'stroke="{GREEN}" stroke-width="2" stroke-dasharray="8 4"/>'
        f'<text x="{width - 24}" y="{y(expected) - 6:.1f}" text-anchor="end" fill="{GREEN}">'
        f"expected {expected:g} GB/s</text>",
        f'<line x1="{left}" x2="{width - 20}" y1="{y(warn):.1f}" y2="{y(warn):.1f}" '
        f'stroke="{AMBER}" stroke-dasharray="2 4"/>'
        f'<text x="{width - 24}" y="{y(warn) - 6:.1f}" text-anchor="end" fill="{AMBER}">'
        f"SMK004 below {warn:g}</text>",
    ]


def _busbw_points(p: _Plot, sizes: List[Dict[str, Any]]) -> List[str]:
    points = " ".join(f"{p.x(s['bytes']):.1f},{p.y(s['busbw_gbps']):.1f}" for s in sizes)
    out = [f'<polyline points="{points}" fill="none" stroke="{BLUE}" stroke-width="2.5"/>']
    for s in sizes:
        out.append(
            f'<circle cx="{p.x(s["bytes"]):.1f}" cy="{p.y(s["busbw_gbps"]):.1f}" r="3.5" fill="{BLUE}">'
            f"<title>{_e(_size(s['bytes']))}: busbw {s['busbw_gbps']} GB/s, algbw "
            f"{_e(s.get('algbw_gbps'))} GB/s</title></circle>"
        )
    return out


def _svg_open(width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(label)}" '
        'font-family="system-ui,sans-serif" font-size="12">'
    )


__all__ = [
    "AMBER",
    "BLUE",
    "GREEN",
    "GREY",
    "RED",
    "VIOLET",
    "Bar",
    "bar_chart",
    "busbw_chart",
    "escape_html",
]
