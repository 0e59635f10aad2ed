"""The code scan's formats: text, JSON, markdown, GitHub annotations and SARIF.

They render a ScanResult and judge nothing: which uses break, what the table cannot say and
the exit code are the result's. Text and markdown group the uses by change (one fix, many
places), oldest release first; the machine formats list every use with its file and line.

SARIF is there for code-scanning pages (GitHub's "upload-sarif"): they keep an alert open
across runs and pull requests until the line changes, where an annotation is one run's log.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional

from .._version import __version__
from ..scan.result import ScanResult, Use
from .ci import _escape, _escape_property
from .style import Style

SCAN_SCHEMA_VERSION = 1
SHOWN_PER_CHANGE = 10  # text and markdown list this many places per change, then a count
_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _header(result: ScanResult) -> List[str]:
    files = ", ".join(f"{n} {kind}" for kind, n in result.files.items() if n)
    lines = [
        f"envcheck scan of {result.root}: {files or 'no Python, C++/CUDA or script files'}",
        f"judged against torch {result.torch} ({result.torch_from}); "
        f"{len(result.checked)} known changes apply"
        + (f" after torch {result.since}" if result.since else ""),
    ]
    if result.unknown:
        lines.append(f"not known: {result.unknown}")
    return lines


def render_text(result: ScanResult, color: bool = False) -> str:
    s = Style(color)
    lines = [*_header(result), ""]
    for change, uses in result.by_change():
        mark = s("breaks", "bold", "red") if change.breaks else s("warns", "yellow")
        lines.append(f"{change.release} {change.kind.value} {change.match.describe()}  [{mark}]")
        lines.append(f"  {change.what}")
        lines.append(f"  fix: {change.fix}")
        for use in uses[:SHOWN_PER_CHANGE]:
            lines.append(f"  {s(f'{use.file}:{use.line}', 'cyan')}  {use.text}")
        if len(uses) > SHOWN_PER_CHANGE:
            lines.append(f"  ... and {len(uses) - SHOWN_PER_CHANGE} more (--format json lists all)")
        lines.append("")
    lines += [f"skipped {k.relative}: {k.why}" for k in result.skipped]
    if result.truncated:
        lines.append("more uses than listed: the scan stopped listing at 10,000")
    lines.append(("" if not result.skipped else "\n") + _closing(result, s))
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"


def _closing(result: ScanResult, s: Style) -> str:
    text = result.summary()
    if result.breaking:
        return s(text, "bold", "red")
    return s(text, "yellow") if result.uses or result.unknown else s(text, "green")


def render_markdown(result: ScanResult) -> str:
    lines = ["### envcheck scan", "", *(f"- {line}" for line in _header(result)), ""]
    if result.uses:
        lines += ["| release | change | uses | fix |", "|---|---|---|---|"]
        for change, uses in result.by_change():
            places = ", ".join(f"`{u.file}:{u.line}`" for u in uses[:SHOWN_PER_CHANGE])
            if len(uses) > SHOWN_PER_CHANGE:
                places += f" and {len(uses) - SHOWN_PER_CHANGE} more"
            what = f"**{'breaks' if change.breaks else 'warns'}**: {change.what}"
            lines.append(f"| {change.release} | {_cell(what)} | {places} | {_cell(change.fix)} |")
        lines.append("")
    lines.append(f"**{result.summary()}**")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def upgrade_notes(result: ScanResult) -> List[str]:
    """What an install's upgrade changes for the project's code (install's text, under the
    command): one line per change the code uses, with a few places and the fix."""
    if not result.uses and not result.unknown:
        return []
    lines = [
        f"the code in {result.root}, torch {result.since} -> {result.torch} "
        f"(envcheck scan --since {result.since} --torch {result.torch} lists every place):"
    ]
    for change, uses in result.by_change():
        places = ", ".join(f"{u.file}:{u.line}" for u in uses[:3])
        more = f" and {len(uses) - 3} more" if len(uses) > 3 else ""
        verb = "breaks" if change.breaks else "warns"
        lines.append(
            f"  {change.release} {change.kind.value} {change.match.describe()} ({verb}): "
            f"{len(uses)} use{'s' if len(uses) != 1 else ''} ({places}{more}); {change.fix}"
        )
    if result.unknown:
        lines.append(f"  not known: {result.unknown}")
    return lines


def github_annotations(result: ScanResult) -> str:
    """One ::error (breaks) or ::warning (deprecated) per use, at its file and line."""
    lines = []
    for use in result.uses:
        change = use.change
        where = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", _path(result, use)),
                ("line", use.line),
                ("col", use.column),
                ("title", f"envcheck scan: {change.release} {change.kind.value}"),
            )
        )
        message = f"{change.what}\nfix: {change.fix}"
        lines.append(f"::{'error' if change.breaks else 'warning'} {where}::{_escape(message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _path(result: ScanResult, use: Use) -> str:
    """The file as the repository names it: relative to the folder the scan was run on."""
    import os

    if os.path.isfile(result.root):
        return result.root
    base = os.path.relpath(result.root)
    return use.file if base == "." else f"{base}/{use.file}".replace(os.sep, "/")


def scan_dict(result: ScanResult) -> Dict[str, Any]:
    table = result.table
    return {
        "schema_version": SCAN_SCHEMA_VERSION,
        "envcheck_version": __version__,
        "root": result.root,
        "torch": str(result.torch),
        "torch_from": result.torch_from,
        "since": str(result.since) if result.since else None,
        "table": {"path": table.path, "as_of": table.as_of, "covers": str(table.covers)},
        "unknown": result.unknown,
        "files": dict(result.files),
        "changes_checked": len(result.checked),
        "summary": result.summary(),
        "exit_code": result.exit_code(),
        "changes": [_change_dict(result, c, len(u)) for c, u in result.by_change()],
        "uses": [
            {
                "change": u.change.id,
                "file": u.file,
                "line": u.line,
                "column": u.column,
                "text": u.text,
            }
            for u in result.uses
        ],
        "truncated": result.truncated,
        "skipped": [{"path": k.relative, "why": k.why} for k in result.skipped],
    }


def _change_dict(result: ScanResult, change: Any, count: int) -> Dict[str, Any]:
    return {
        "id": change.id,
        "release": change.release,
        "torch": str(change.torch),
        "kind": change.kind.value,
        "breaks": change.breaks,
        "matches": change.match.describe(),
        "what": change.what,
        "fix": change.fix,
        "sources": [result.table.source_text(k) for k in change.provenance.sources],
        "uses": count,
    }


def render_json(result: ScanResult) -> str:
    return json.dumps(scan_dict(result), indent=2) + "\n"


def render_sarif(result: ScanResult) -> str:
    """SARIF 2.1.0: one rule per change used, one result per use."""
    used = result.by_change()
    rules = [
        {
            "id": change.id,
            "shortDescription": {
                "text": f"{change.release} {change.kind.value} {change.match.describe()}"
            },
            "fullDescription": {"text": change.what},
            "help": {"text": f"fix: {change.fix}"},
            "helpUri": _uri(result, change),
            "defaultConfiguration": {"level": "error" if change.breaks else "warning"},
        }
        for change, _ in used
    ]
    index = {change.id: i for i, (change, _) in enumerate(used)}
    results = [
        {
            "ruleId": u.change.id,
            "ruleIndex": index[u.change.id],
            "level": "error" if u.change.breaks else "warning",
            "message": {"text": f"{u.change.what} fix: {u.change.fix}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _path(result, u)},
                        "region": {"startLine": u.line, "startColumn": u.column},
                    }
                }
            ],
        }
        for u in result.uses
    ]
    driver = {"name": "envcheck", "version": __version__, "rules": rules}
    doc = {
        "version": "2.1.0",
        "$schema": _SARIF_SCHEMA,
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return json.dumps(doc, indent=2) + "\n"


def _uri(result: ScanResult, change: Any) -> Optional[str]:
    for key in change.provenance.sources:
        text = result.table.source_text(key)
        for word in text.split():
            if word.startswith("https://"):
                return word.rstrip(").,;")
    return None


SCAN_FORMATS: Dict[str, Callable[[ScanResult, bool], str]] = {
    "text": render_text,
    "json": lambda r, color: render_json(r),
    "markdown": lambda r, color: render_markdown(r),
    "github": lambda r, color: github_annotations(r),
    "sarif": lambda r, color: render_sarif(r),
}

__all__ = [
    "SCAN_FORMATS",
    "SCAN_SCHEMA_VERSION",
    "render_text",
    "scan_dict",
    "upgrade_notes",
]
