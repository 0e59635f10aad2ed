"""A Report as one self-contained HTML page: viewable offline, attachable to a bug report.

Everything is inline (CSS and SVG; no script, no font, no image, no link to fetch), and
every text that came from the machine or a pasted report is escaped. Like every format it
renders and decides nothing: the verdict, the findings, the smoke figures with the busbw
the links allow, and the compatibility grid (``check(grid=True)``) are all in the Report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .._version import __version__
from ..findings import Finding
from ..smoke.expected import ONE_RANK, measures_links
from ..smoke.ranks import judge_ranks
from ..smoke.runner import SmokeResult
from ..values import SmokeStatus
from .charts import AMBER, BLUE, GREEN, GREY, RED, VIOLET, Bar, bar_chart, busbw_chart
from .charts import escape_html as _e
from .facts_text import fact_sections, pcie_link, topology_cells
from .findings_text import machine_line
from .ranks_text import render_table
from .smoke_text import summary_line
from .style import Style

if TYPE_CHECKING:
    from ..compat import TorchLabel
    from ..core import Report
    from ..facts import Facts
    from ..install.grid import CompatGrid
    from ..smoke.launch import Launch
    from ..tables.model import LinkTable

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


def verdict_heading(report: Report) -> Tuple[str, str, str]:
    """(colour, title, machine line) of the verdict banner: the page's and the notebook's.
    READY beside findings that say what is not known is "not verified", never plain fine."""
    diagnosis = report.diagnosis or {}
    machine = machine_line(report.facts, diagnosis.get("observed"), diagnosis.get("unstated", ()))
    verdict = str(report.verdict)
    tone = "ready" if report.ready else "not ready"
    if report.ready and report.unverified:
        tone, verdict = "not verified", f"{verdict}, not verified ({', '.join(report.unverified)})"
    return VERDICT[tone], f"envcheck {report.command}: {verdict}", machine


def shell_prompt(command: str) -> str:
    """A command as the page shows it: after a shell prompt."""
    return f"$ {command}"


def render_html(report: Report) -> str:
    facts = report.facts
    colour, title, machine = verdict_heading(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f'<header class="verdict" id="verdict" style="background:{colour}">',
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
    return _section("findings", "Findings", findings_html(report, shell_prompt))


def findings_html(report: Report, shown: Callable[[str], str]) -> List[str]:
    """Each root finding with the findings that follow from it; ``shown`` writes a command
    (after a prompt on the page, as a notebook magic in a notebook)."""
    body = []
    for root in report.roots:
        follows = "".join(
            f'<div class="follow">{finding_html(f, shown, f"follows from {root.code}")}</div>'
            for f in report.follow_ons(root)
        )
        body.append(finding_html(root, shown) + follows)
    return body


def finding_html(f: Finding, shown: Callable[[str], str] = shell_prompt, lead: str = "") -> str:
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
        out.append(f"<pre>{_e(shown(f.command))}</pre>")
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
    bars = _matmul_bars(
        [r for r in results if r.name == "matmul" and r.status == SmokeStatus.PASSED]
    )
    if bars:
        body += ["<h3>matmul per device (median, and the spread of the repeats)</h3>", bars]
    for r in results:
        if r.name == "all_reduce" and r.status == SmokeStatus.PASSED and r.figures.get("sizes"):
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
    return _section("facts", "Facts", facts_html(report.facts, report.links, report.torch_label))


def facts_html(
    facts: Facts, links: Optional[LinkTable] = None, label: Optional[TorchLabel] = None
) -> List[str]:
    """The facts, one table per section."""
    body = []
    for section, rows in fact_sections(facts, Style(False), links, label):
        cells = "".join(
            f"<tr><td>{_e(label)}</td><td><pre>{_e(value)}</pre></td></tr>"
            if "\n" in value
            else f"<tr><td>{_e(label)}</td><td>{_e(value)}</td></tr>"
            for label, value in rows
        )
        body.append(f'<h3>{_e(section)}</h3><table class="facts">{cells}</table>')
    return body


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
