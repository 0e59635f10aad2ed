"""The reports `envcheck compare` reads: files of `probe --json` or `check --json`, folders of
them, and JSON documents one per line on standard input.

Each input becomes a Machine (its name, its Facts, and the findings a `check --json` report
already carries) or an Unreadable (its name and why, in one line): one bad file never stops
the others from being compared, and never becomes a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Dict, Iterable, List, Optional, Tuple

from .._record import field, record
from ..facts import Facts, FactsError
from ..findings import Finding
from ..values import Severity

# A report bigger than this is not a Facts document (one is a few tens of KiB): reading it
# whole would make memory follow whatever file was named.
MAX_REPORT_BYTES = 16 << 20


@record(frozen=True)
class Machine:
    name: str  # its host name when the report carries one, else the file's name
    source: str  # the file (or "stdin:N") it was read from
    facts: Facts
    findings: Tuple[Finding, ...] = ()  # a check --json report's own findings
    checked: bool = False  # the report was check --json: its findings are the machine's


@record(frozen=True)
class Unreadable:
    source: str
    why: str


@record
class Inputs:
    machines: List[Machine] = field(default_factory=list)
    unreadable: List[Unreadable] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)  # files skipped, names taken twice
    sources: Dict[str, str] = field(default_factory=dict)  # each machine's name: its source


def read_inputs(paths: Iterable[str], stdin: Optional[IO[str]] = None) -> Inputs:
    """Every report named: a file, each ``*.json`` of a folder (sorted), or ``-`` (stdin)."""
    out = Inputs()
    for path in paths:
        if path == "-":
            if stdin is not None:
                _read_stdin(out, stdin)
            continue
        p = Path(path)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file())
            others = [f.name for f in files if f.suffix != ".json"]
            if others:
                out.notes.append(f"{path}: skipped {len(others)} file(s) not named *.json")
            for f in files:
                if f.suffix == ".json":
                    _add_file(out, f)
        elif p.is_file():
            _add_file(out, p)
        else:
            out.unreadable.append(Unreadable(path, "no such file or folder"))
    return out


def _read_stdin(out: Inputs, stdin: IO[str]) -> None:
    """One report per line; a line longer than a report can be is skipped whole, never held."""
    number = 0
    while True:
        line = stdin.readline(MAX_REPORT_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_REPORT_BYTES:
            while line and not line.endswith("\n"):  # the rest of it, a piece at a time
                line = stdin.readline(1 << 20)
            out.unreadable.append(Unreadable(f"stdin:{number}", "over 16 MiB: not a report"))
        elif line.strip():
            _add(out, f"stdin:{number}", line, f"stdin-{number}")


def _add_file(out: Inputs, path: Path) -> None:
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            out.unreadable.append(Unreadable(str(path), "over 16 MiB: not an envcheck report"))
            return
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.unreadable.append(Unreadable(str(path), f"cannot be read: {exc}"))
        return
    _add(out, str(path), text, path.stem)


def _add(out: Inputs, source: str, text: str, fallback_name: str) -> None:
    try:
        machine = _machine(source, text, fallback_name)
    except FactsError as exc:
        out.unreadable.append(Unreadable(source, str(exc)))
        return
    if machine.name in out.sources:
        out.notes.append(
            f"{machine.name} is reported twice ({out.sources[machine.name]} and {source}): "
            "the first is compared"
        )
        return
    out.sources[machine.name] = source
    out.machines.append(machine)


def _machine(source: str, text: str, fallback_name: str) -> Machine:
    """A Facts document (probe --json) or a report carrying one (check --json)."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FactsError(
            f"not JSON ({exc.msg} at line {exc.lineno}): cut short, or not a report"
        ) from None
    if not isinstance(data, dict):
        raise FactsError("not an envcheck report (probe --json or check --json makes one)")
    checked = "facts" in data and "findings" in data
    if checked:
        facts_data = data["facts"]
    elif "system" in data or "torch" in data:
        facts_data = data
    else:
        raise FactsError("not an envcheck report (no facts: use probe --json or check --json)")
    facts = Facts.from_dict(facts_data)
    findings = tuple(_findings(data.get("findings"))) if checked else ()
    name = facts.system.hostname or fallback_name
    return Machine(name, source, facts, findings, checked)


def _findings(raw: Any) -> Iterable[Finding]:
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict) and isinstance(item.get("code"), str):
            try:
                yield Finding(
                    code=item["code"],
                    name=str(item.get("name", "")),
                    severity=Severity.parse(str(item.get("severity", "info"))),
                    title=str(item.get("title", "")),
                    evidence=tuple(str(e) for e in item.get("evidence") or ()),
                    fix=item.get("fix") if isinstance(item.get("fix"), str) else None,
                    command=item.get("command") if isinstance(item.get("command"), str) else None,
                )
            except ValueError:
                continue  # a severity this envcheck does not know: not one of its findings


__all__ = ["MAX_REPORT_BYTES", "Inputs", "Machine", "Unreadable", "read_inputs"]
