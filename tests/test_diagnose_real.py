"""envcheck diagnose on real reports, as users pasted them into public issue trackers.

tests/diagnose_corpus/real/ holds the machine output of each report (prose replaced by a
"# reporter:" line) and reports.json the thread, the cause and fix that the thread
confirmed, and the facts a careful reader takes from the text. Threads kept for an
independent evaluation (../shared/reference/held-out-threads.txt) are not among them.

For every report: the facts are read, a root finding names the confirmed cause, its fix (or
the install command) says the confirmed fix, and no error is raised that the thread does not
support (a false alarm). The summary test prints the corpus figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from envcheck.diagnose import diagnose_text
from envcheck.tables import load_tables

REAL = Path(__file__).parent / "diagnose_corpus" / "real"
REPORTS: List[Dict[str, Any]] = json.loads((REAL / "reports.json").read_text(encoding="utf-8"))
TABLES = load_tables()  # the shipped tables and message catalogue
HELD_OUT = Path(__file__).resolve().parents[2] / "shared" / "reference" / "held-out-threads.txt"


def fact(facts, path: str):
    if path == "gpu0":
        g = facts.nvidia.gpus[0] if facts.nvidia.gpus else None
        return [g.name, g.compute_capability] if g else None
    if path == "gpus":
        return len(facts.nvidia.gpus)
    section, name = path.split(".")
    return getattr(getattr(facts, section), name)


def judge(entry: Dict[str, Any]) -> Dict[str, Any]:
    """What envcheck made of one report, against what its thread confirmed."""
    text = (REAL / entry["file"]).read_text(encoding="utf-8")
    report = diagnose_text(text, TABLES)
    roots = [f for f in report.findings if f.caused_by is None and f.severity.value != "info"]
    named = [f for f in roots if f.code in entry["cause"] or f.name in entry["cause"]]
    advice = report.install.command if report.install and report.install.command else ""
    # what the reader sees under the cause: its fix, its command, and the messages shown under it
    under = [f for f in report.findings if f.caused_by in {n.code for n in named}]
    said = " ".join((f.fix or "") + " " + (f.command or "") for f in named + under) + " " + advice
    allowed = set(entry["cause"]) | set(entry.get("also", []))
    false = [
        f"{f.code} {f.name}"
        for f in roots
        if f.severity.value == "error" and f.code not in allowed and f.name not in allowed
    ]
    facts = {p: fact(report.facts, p) for p in entry.get("facts", {})}
    command = entry.get("command")
    return {
        "report": report,
        "cause": bool(named),
        "fix": bool(named) and any(s in said for s in entry["fix"]),
        "false": false,
        "facts": facts,
        "command_ok": command is None or all(s in advice for s in command),
        "read": bool((report.diagnosis or {}).get("read")),
    }


def test_the_corpus_is_real_and_big_enough() -> None:
    files = {p.name for p in REAL.glob("*.txt")}
    assert files == {e["file"] for e in REPORTS}
    assert len(REPORTS) >= 30
    for e in REPORTS:
        owner_repo, number = e["thread"].split("#")
        assert e["url"] == f"https://github.com/{owner_repo}/issues/{number}"
        assert e["cause"] and e["fix"] and e["confirmed"]
    if HELD_OUT.is_file():
        held = {x.strip() for x in HELD_OUT.read_text().splitlines()}
        assert not held & {e["thread"] for e in REPORTS}


def _case(entry: Dict[str, Any]) -> Any:
    """A report envcheck is known to get wrong is an expected failure (strict: fixing it fails
    the test until the mark goes), and counts as wrong in the figures."""
    gap = entry.get("known_gap")
    marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
    return pytest.param(entry, id=entry["thread"], marks=marks)


@pytest.mark.parametrize("entry", [_case(e) for e in REPORTS])
def test_real_report(entry: Dict[str, Any]) -> None:
    got = judge(entry)
    names = [(f.code, f.name) for f in got["report"].findings]
    assert got["read"], "nothing read"
    assert got["facts"] == entry.get("facts", {}), names
    assert got["cause"], f"cause {entry['cause']} not among the root findings {names}"
    assert got["fix"], f"the fix does not say {entry['fix']}"
    assert got["command_ok"], (entry.get("command"), got["report"].install)
    assert not got["false"], f"false alarms: {got['false']}"


def corpus_figures(reports: List[Dict[str, Any]] = REPORTS) -> Tuple[int, int, int, int, int]:
    results = [judge(e) for e in reports]
    cause = sum(r["cause"] for r in results)
    fix = sum(r["cause"] and r["fix"] and r["command_ok"] for r in results)
    facts = sum(r["facts"] == e.get("facts", {}) for r, e in zip(results, reports))
    false = sum(bool(r["false"]) for r in results)
    return len(results), cause, fix, facts, false


def test_corpus_figures() -> None:
    n, cause, fix, facts, false = corpus_figures()
    print(
        f"\ncorpus: {n} reports; cause {cause}/{n}; cause and fix {fix}/{n}; "
        f"facts {facts}/{n}; reports with a false error {false}"
    )
    assert fix >= 0.9 * n
    assert false == 0
    late = [e for e in REPORTS if e.get("collected_by")]  # collected after the readers
    m, cause, fix, facts, false = corpus_figures(late)
    print(
        f"of them collected after the readers were written: {m}; cause {cause}/{m}; "
        f"cause and fix {fix}/{m}; facts {facts}/{m}"
    )
