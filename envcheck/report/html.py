"""A Report as one self-contained HTML page: viewable offline, attachable to a bug report.

Everything is inline (CSS and SVG; no script, no font, no image, no link to fetch), and
every text that came from the machine or a pasted report is escaped. Like every format it
renders and decides nothing: the verdict, the findings, the smoke figures with the busbw
the links allow, and the compatibility grid (``check(grid=True)``) are all in the Report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence

from .._version import __version__
from ..findings import Finding
from ..smoke.expected import ONE_RANK, measures_links
from ..smoke.runner import SmokeResult
from .facts_text import fact_sections, pcie_link, topology_cells
from .findings_text import machine_line
from .smoke_text import _size, summary_line
from .style import Style

if TYPE_CHECKING:
    from ..core import Report
    from ..install.grid import CompatGrid
    from ..smoke.launch import Launch

# One palette, named by meaning: the screenshot test looks for these colours.
GREEN, RED, AMBER, GREY, VIOLET, BLUE = (
    "#1a7f37",
    "#cf222e",
    "#bf8700",
    "#8c959f",
    "#8250df",
    "#0969da",
)
VERDICT = {"ready": GREEN, "not ready": RED, "not verified": AMBER}
SEVERITY = {"error": RED, "warning": AMBER, "info": BLUE}
GRID = {
    "fits": GREEN,
    "cpu_only": "#4ac26b",
    "driver": RED,
    "kernels": "#fb8500",
    "no_wheel": GREY,
    "unknown": VIOLET,
}
TOPOLOGY = {
    "NV": GREEN,
    "PIX": "#4ac26b",
    "PXB": "#4ac26b",
    "PHB": AMBER,
    "NODE": AMBER,
    "SYS": "#fb8500",
}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:0 20px 40px}
header.verdict{color:#fff;padding:18px 20px}
header.verdict h1{margin:0;font-size:26px} header.verdict p{margin:4px 0 0}
h2{border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:28px}
.finding{border-left:6px solid;padding:6px 12px;margin:10px 0;background:#f6f8fa}
.finding .follow{margin-left:24px} .code{font-weight:600;font-family:monospace}
.evidence{color:#57606a;margin:4px 0 4px 18px;padding:0}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:8px 0} th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} td.state{color:#fff;text-align:center;font-weight:600;white-space:nowrap}
td.none{color:#57606a;text-align:center}
.facts td:first-child{white-space:nowrap;color:#57606a}
.legend span{display:inline-block;padding:1px 8px;margin:0 6px 4px 0;color:#fff;border-radius:3px}
.muted{color:#57606a} svg{background:#fff;border:1px solid #d0d7de;margin:6px 0}
"""


def render_html(report: Report) -> str:
    facts = report.facts
    diagnosis = report.diagnosis or {}
    machine = machine_line(facts, diagnosis.get("observed"), diagnosis.get("unstated", ()))
    verdict = str(report.verdict)
    tone = "ready" if report.ready else "not ready"
    if report.ready and report.unverified:  # unknown is never plain "fine"
        tone, verdict = "not verified", f"{verdict}, not verified ({', '.join(report.unverified)})"
    title = f"envcheck {report.command}: {verdict}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f'<header class="verdict" id="verdict" style="background:{VERDICT[tone]}">',
        f"<h1>{_e(title)}</h1><p>{_e(report.counts_text())}</p><p>{_e(machine)}</p></header>",
        "<main>",
        _diagnosis(report),
        _findings(report),
        _install(report),
        _smoke(report.smoke),
        _topology(report),
        _grid(report.grid),
        _facts(report),
        _not_run(report),
        f'<p class="muted">envcheck {_e(__version__)} · tables as of {_e(report.tables_as_of)}'
        f" · {_e(facts.collected_at)}</p>",
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _section(ident: str, heading: str, body: Iterable[str]) -> str:
    return f'<section id="{ident}"><h2>{_e(heading)}</h2>\n' + "\n".join(body) + "\n</section>"


# ------------------------------------------------------------------------------ findings


def _diagnosis(report: Report) -> str:
    """A pasted report: what was read from it, and what it did not say (so which checks
    could not run, and why no install command is given)."""
    d = report.diagnosis
    if not d:
        return ""
    items = [f"<li>Read from the text: {_e(', '.join(d.get('read', [])))}</li>"]
    if d.get("missing"):
        items.append(
            f"<li>Not in the text: {_e(', '.join(d['missing']))}; checks not run: "
            f"{_e(', '.join(d.get('not_judged', [])))}</li>"
        )
    items += [f"<li>{_e(n)}</li>" for n in d.get("notes", [])]
    if d.get("command_needs"):
        items.append(
            "<li>No install command: it would be for a guessed machine; the text does not say "
            f"{_e(', '.join(d['command_needs']))}</li>"
        )
    return _section("diagnosis", "The pasted report", [f"<ul>{''.join(items)}</ul>"])


def _findings(report: Report) -> str:
    if not report.findings:
        return _section("findings", "Findings", ["<p>No findings.</p>"])
    body = []
    for root in report.roots:
        follows = "".join(
            f'<div class="follow">{_finding(f, f"follows from {root.code}")}</div>'
            for f in report.follow_ons(root)
        )
        body.append(_finding(root) + follows)
    return _section("findings", "Findings", body)


def _finding(f: Finding, lead: str = "") -> str:
    sev = f.severity.value
    out = [
        f'<div class="finding {sev}" style="border-color:{SEVERITY[sev]}">',
        f'<div>{_e(lead + ": ") if lead else ""}<strong style="color:{SEVERITY[sev]}">'
        f'{sev.upper()}</strong> <span class="code">{_e(f.code)}</span> {_e(f.title)}</div>',
    ]
    if f.evidence:
        out.append(
            '<ul class="evidence">' + "".join(f"<li>{_e(x)}</li>" for x in f.evidence) + "</ul>"
        )
    if f.fix:
        out.append(f"<div><strong>fix:</strong> {_e(f.fix)}</div>")
    if f.command:
        out.append(f"<pre>$ {_e(f.command)}</pre>")
    out.append("</div>")
    return "".join(out)


def _install(report: Report) -> str:
    advice = report.install
    if advice is None:
        return ""
    if advice.command:
        return _section("install", "Install", [f"<pre>$ {_e(advice.command)}</pre>"])
    items = [f"<li>{_e(c)}</li>" for c in advice.plan.conflicts]
    items += [f"<li>way out: {_e(w)}</li>" for w in advice.plan.ways_out]
    return _section(
        "install", "Install", ["<p>No torch fits this machine:</p><ul>", *items, "</ul>"]
    )


# ------------------------------------------------------------------------------ smoke


def _smoke(results: Sequence[SmokeResult]) -> str:
    if not results:
        return ""
    rows = ["<table><tr><th>test</th><th>device</th><th>result</th><th>s</th><th>figures</th></tr>"]
    for r in results:
        color = GREEN if str(r.status) == "passed" else AMBER if str(r.status) == "skipped" else RED
        rows.append(
            f"<tr><td>{_e(r.name)}</td><td>{_e(r.device)}</td>"
            f'<td class="state" style="background:{color}">{_e(str(r.status).replace("_", " "))}</td>'
            f"<td>{r.duration_s:.2f}</td><td>{_e(summary_line(r))}</td></tr>"
        )
    rows.append("</table>")
    body = ["".join(rows)]
    bars = _matmul_bars([r for r in results if r.name == "matmul" and r.status == "passed"])
    if bars:
        body += ["<h3>matmul per device (median, and the spread of the repeats)</h3>", bars]
    for r in results:
        if r.name == "all_reduce" and r.status == "passed" and r.figures.get("sizes"):
            if not measures_links(r.figures.get("world_size")):  # a flat line at 0 GB/s
                body.append(f'<p class="muted">all_reduce: no busbw chart ({_e(ONE_RANK)})</p>')
                continue
            body += [
                f"<h3>all_reduce busbw by message size ({_e(r.figures.get('world_size'))} ranks, "
                f"{_e(r.figures.get('backend'))})</h3>",
                busbw_chart(r.figures),
            ]
    return _section("smoke", "Smoke test", body)


def _matmul_bars(results: Sequence[SmokeResult]) -> str:
    bars: List[Bar] = []
    for r in results:
        for key, value in r.figures.items():
            if key.endswith("_tflops") and isinstance(value, (int, float)):
                dtype = key[: -len("_tflops")]
                low, high = r.figures.get(f"{key}_min"), r.figures.get(f"{key}_max")
                bars.append(Bar(f"{r.device} {dtype}", float(value), low, high))
    return bar_chart(bars, "TFLOP/s", "matmul TFLOP/s per device and dtype")


@dataclass(frozen=True)
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
    from ..core import BUSBW_WARN_FRACTION

    sizes = [
        s for s in figures.get("sizes") or [] if s.get("bytes") and s.get("busbw_gbps") is not None
    ]
    expected = figures.get("expected_busbw_gbps")
    width, height, left, bottom, top_pad = 720, 300, 60, 40, 20
    if not sizes:
        return ""
    ymax = max([s["busbw_gbps"] for s in sizes] + [expected or 0]) * 1.15 or 1.0
    lo, hi = math.log2(sizes[0]["bytes"]), math.log2(sizes[-1]["bytes"])
    span = (hi - lo) or 1.0

    def x(n: float) -> float:
        return left + (math.log2(n) - lo) / span * (width - left - 20)

    def y(v: float) -> float:
        return top_pad + (1 - v / ymax) * (height - top_pad - bottom)

    out = [_svg_open(width, height, "all_reduce busbw by message size")]
    out.append(
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - 20}" y2="{y(0):.1f}" stroke="#57606a"/>'
    )
    out.append(f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{y(0):.1f}" stroke="#57606a"/>')
    for frac in (0.5, 1.0):
        v = ymax / 1.15 * frac
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    step = max(1, len(sizes) // 8)
    for s in sizes[::step]:
        out.append(
            f'<text x="{x(s["bytes"]):.1f}" y="{height - bottom + 16}" text-anchor="middle">{_e(_size(s["bytes"]))}</text>'
        )
    out.append(f'<text x="{left}" y="{height - 6}">message size</text>')
    out.append('<text x="8" y="14">busbw GB/s</text>')
    if expected:
        out.append(
            f'<line x1="{left}" x2="{width - 20}" y1="{y(expected):.1f}" y2="{y(expected):.1f}" '
            f'stroke="{GREEN}" stroke-width="2" stroke-dasharray="8 4"/>'
            f'<text x="{width - 24}" y="{y(expected) - 6:.1f}" text-anchor="end" fill="{GREEN}">'
            f"expected {expected:g} GB/s</text>"
        )
        warn = expected * BUSBW_WARN_FRACTION
        out.append(
            f'<line x1="{left}" x2="{width - 20}" y1="{y(warn):.1f}" y2="{y(warn):.1f}" '
            f'stroke="{AMBER}" stroke-dasharray="2 4"/>'
            f'<text x="{width - 24}" y="{y(warn) - 6:.1f}" text-anchor="end" fill="{AMBER}">'
            f"SMK004 below {warn:g}</text>"
        )
    points = " ".join(f"{x(s['bytes']):.1f},{y(s['busbw_gbps']):.1f}" for s in sizes)
    out.append(f'<polyline points="{points}" fill="none" stroke="{BLUE}" stroke-width="2.5"/>')
    for s in sizes:
        out.append(
            f'<circle cx="{x(s["bytes"]):.1f}" cy="{y(s["busbw_gbps"]):.1f}" r="3.5" fill="{BLUE}">'
            f"<title>{_e(_size(s['bytes']))}: busbw {s['busbw_gbps']} GB/s, algbw "
            f"{_e(s.get('algbw_gbps'))} GB/s</title></circle>"
        )
    out.append("</svg>")
    if expected:
        out.append(f'<p class="muted">expected: {_e(figures.get("expected_basis", ""))}</p>')
    else:
        why = figures.get("expected_unknown") or "envcheck was given no facts about the links"
        out.append(f'<p class="muted">expected busbw: not known ({_e(why)})</p>')
    return "".join(out)


def _svg_open(width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(label)}" '
        'font-family="system-ui,sans-serif" font-size="12">'
    )


# ------------------------------------------------------------------------------ topology


def _topology(report: Report) -> str:
    nv = report.facts.nvidia
    if len(nv.gpus) < 2:
        return ""
    cells = topology_cells(nv)
    ids = [g.index for g in nv.gpus]
    rows = [
        "<table><tr><th></th>"
        + "".join(f"<th>GPU{i}</th>" for i in ids)
        + "<th>link</th><th>NUMA</th></tr>"
    ]
    for gpu in nv.gpus:
        tds = []
        for j in ids:
            if j == gpu.index:
                tds.append('<td class="none">X</td>')
                continue
            word = cells.get((gpu.index, j), "?")
            color = RED if word.endswith("!") else TOPOLOGY.get(word.rstrip("0123456789"), GREY)
            tds.append(f'<td class="state" style="background:{color}">{_e(word)}</td>')
        link = (
            pcie_link(gpu.pcie.speed_current, gpu.pcie.width_current, report.links)
            if gpu.pcie
            else None
        )
        numa = gpu.pcie.numa_node if gpu.pcie else None
        rows.append(
            f"<tr><th>GPU{gpu.index}</th>{''.join(tds)}<td>{_e(link or '?')}</td>"
            f"<td>{_e(numa if numa is not None else '?')}</td></tr>"
        )
    rows.append("</table>")
    legend = (
        "NV# = NVLink (# links); PIX/PXB = PCIe switch; PHB = host bridge; NODE = within a NUMA "
        "node; SYS = across NUMA nodes; ! = no peer-to-peer (LNK004); ? = not reported by NVML"
    )
    return _section(
        "topology", "GPU topology", ["".join(rows), f'<p class="muted">{_e(legend)}</p>']
    )


# ------------------------------------------------------------------------------ grid


def _grid(grid: Optional[CompatGrid]) -> str:
    if grid is None:
        return ""
    from ..install.grid import LABELS

    head = f"for {grid.platform or 'this platform'}, Python {grid.python or '(not known)'}"
    if not grid.torches:
        return _section("grid", "Compatibility grid", [f"<p>{_e('; '.join(grid.notes))}</p>"])
    rows = [
        "<table><tr><th>torch</th>" + "".join(f"<th>{_e(v)}</th>" for v in grid.variants) + "</tr>"
    ]
    for torch in grid.torches:
        tds = []
        for variant in grid.variants:
            cell = grid.cell(torch, variant)
            color = GRID.get(cell.state, VIOLET)
            tds.append(
                f'<td class="state" style="background:{color}" title="{_e(cell.why)}">{_e(cell.label)}</td>'
            )
        rows.append(f"<tr><th>{_e(torch)}</th>{''.join(tds)}</tr>")
    rows.append("</table>")
    legend = (
        '<p class="legend">'
        + "".join(f'<span style="background:{GRID[s]}">{_e(LABELS[s])}</span>' for s in GRID)
        + "</p>"
    )
    notes = "".join(f'<p class="muted">{_e(n)}</p>' for n in grid.notes)
    hint = (
        '<p class="muted">Hover a cell for the reason; '
        "<code>envcheck install --torch X.Y --variant V</code> gives the command.</p>"
    )
    return _section("grid", f"Compatibility grid ({head})", [legend, "".join(rows), notes, hint])


# ------------------------------------------------------------------------------ facts


def _facts(report: Report) -> str:
    body = []
    for section, rows in fact_sections(
        report.facts, Style(False), report.links, report.torch_label
    ):
        cells = "".join(
            f"<tr><td>{_e(label)}</td><td><pre>{_e(value)}</pre></td></tr>"
            if "\n" in value
            else f"<tr><td>{_e(label)}</td><td>{_e(value)}</td></tr>"
            for label, value in rows
        )
        body.append(f'<h3>{_e(section)}</h3><table class="facts">{cells}</table>')
    return _section("facts", "Facts", body)


def _not_run(report: Report) -> str:
    if not report.not_run:
        return ""
    items = "".join(
        f'<li><span class="code">{_e(n.code)}</span>: {_e(n.why)}</li>' for n in report.not_run
    )
    return _section("not-run", "Not judged", [f"<ul>{items}</ul>"])


# ------------------------------------------------------------------------------ ranks


# judge_ranks' verdict kinds; failed, missing and shared are red
RANK_COLORS = {"ok": BLUE, "slow": AMBER, "slow_link": AMBER, "not_run": GREY}


def render_ranks_html(
    records: List[Dict[str, Any]], launch: Optional[Launch] = None, missing: Sequence[int] = ()
) -> str:
    """`smoke --distributed --html FILE`: the rank table, a bar per rank for matmul, busbw
    and the link to the next rank (slow in amber, failed, missing or sharing a GPU in red, not
    run because the job did not start in grey), and the busbw
    curve rank 0 measured. The verdicts are judge_ranks', as in the text table."""
    from ..smoke.distributed import judge_ranks, render_table

    j = judge_ranks(records, launch, list(missing))
    by_rank = {r["rank"]: r for r in records}
    tone = GREEN if j.ok else RED
    title = f"envcheck smoke --distributed: {'all ranks ok' if j.ok else 'problems'}"

    def bars(key: str) -> List[Bar]:
        out = []
        for rank in range(j.world):
            r, verdict = by_rank.get(rank, {}), j.verdicts[rank]
            color = RANK_COLORS.get(verdict.kind, RED)
            note = "" if verdict.kind == "ok" else verdict.short
            value = r.get(key)
            out.append(Bar(f"rank {rank} {r.get('host', '?')}"[:24], value, color=color, note=note))
        return out

    body = [
        f"<pre>{_e(render_table(records, launch, list(missing)))}</pre>",
        "<h3>matmul per rank</h3>",
        bar_chart(bars("tflops"), "TFLOP/s", "matmul TFLOP/s per rank"),
        "<h3>all_reduce peak busbw per rank</h3>",
        bar_chart(bars("busbw_gbps"), "GB/s", "all_reduce busbw per rank"),
        "<h3>send to the next rank (ring)</h3>",
        bar_chart(bars("link_gbps"), "GB/s", "link GB/s per rank"),
    ]
    first = by_rank.get(0, {})
    if first.get("sizes"):
        body += [
            "<h3>all_reduce busbw by message size (rank 0)</h3>",
            busbw_chart({"sizes": first["sizes"]}),
        ]
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
                f'<header class="verdict" id="verdict" style="background:{tone}">',
                f"<h1>{_e(title)}</h1><p>{_e('; '.join(j.problems) or 'no slow, failed or missing rank')}</p>",
                "</header><main>",
                _section("ranks", f"{j.world} ranks on {j.hosts} host(s), {j.nodes} node(s)", body),
                f'<p class="muted">envcheck {_e(__version__)}</p></main></body></html>',
            ]
        )
        + "\n"
    )
