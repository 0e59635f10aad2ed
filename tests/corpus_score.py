"""How well `envcheck diagnose` reads the real-report corpus: the figures of issue 23.

For each report of tests/diagnose_corpus/real/reports.json: whether a root finding names the
cause its thread confirmed, whether its fix (or the install command) says the confirmed fix,
every labelled fact (read right, read with another value, or not read), and the errors the
thread does not support (false alarms).

    python -m tests.corpus_score            # the whole corpus
    python -m tests.corpus_score --set new  # only the reports collected for issue 23
    python -m tests.corpus_score --list     # and each report that misses something

It imports envcheck from wherever Python finds it, so the same script measures another
checkout of the code (``PYTHONPATH=/path/to/checkout``): that is how the figures before any
tuning were taken.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REAL = Path(__file__).parent / "diagnose_corpus" / "real"
NEW_SET = "issue 23"  # reports whose collected_by names this were collected for issue 23


def load_reports(folder: Path = REAL) -> List[Dict[str, Any]]:
    return list(json.loads((folder / "reports.json").read_text(encoding="utf-8")))


def in_new_set(entry: Dict[str, Any]) -> bool:
    return NEW_SET in entry.get("collected_by", "")


# --- reading a fact back out of a Report ------------------------------------------------


def _gpu0(report: Any) -> Any:
    gpus = report.facts.nvidia.gpus
    return [gpus[0].name, gpus[0].compute_capability] if gpus else None


def _gpu_name(report: Any) -> Optional[str]:
    gpus = report.facts.nvidia.gpus
    if gpus and gpus[0].name:
        return str(gpus[0].name)
    amd = getattr(report.facts, "amd", None)
    names = [g.name for g in getattr(amd, "gpus", []) if getattr(g, "name", None)]
    return str(names[0]) if names else None


def _gfx(report: Any) -> Optional[str]:
    amd = getattr(report.facts, "amd", None)
    found = [g.gfx for g in getattr(amd, "gpus", []) if getattr(g, "gfx", None)]
    return str(found[0]) if found else None


def _companion(name: str) -> Callable[[Any], Optional[str]]:
    want = _package_key(name)

    def read(report: Any) -> Optional[str]:
        for p in report.facts.torch.companions:
            if _package_key(p.name) == want:
                return str(p.version) if p.version else None
        return None

    return read


def _package_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def _os_name(report: Any) -> Optional[str]:
    s = report.facts.system
    if s.distro_name:
        return str(s.distro_name)
    if s.os_version and s.os:
        return f"{'macOS' if s.os == 'Darwin' else s.os} {s.os_version}"
    return None


def _stated(key: str) -> Callable[[Any], Any]:
    """A fact diagnose keeps in its diagnosis (those Facts has no field for)."""

    def read(report: Any) -> Any:
        return ((report.diagnosis or {}).get("stated") or {}).get(key)

    return read


def _cudnn(report: Any) -> Optional[str]:
    got = report.facts.torch_runtime.cudnn_version
    return str(got) if got else _stated("cudnn")(report)


ACCESSORS: Dict[str, Callable[[Any], Any]] = {
    "python.version": lambda r: r.facts.python.version or None,
    "torch.version": lambda r: r.facts.torch.version,
    "torch.cuda": lambda r: r.facts.torch.cuda,
    "nvidia.driver_version": lambda r: r.facts.nvidia.driver_version,
    "nvidia.cuda_driver_version": lambda r: r.facts.nvidia.cuda_driver_version,
    "toolkit.nvcc_version": lambda r: r.facts.toolkit.nvcc_version,
    "system.os": lambda r: r.facts.system.os or None,
    "system.machine": lambda r: r.facts.system.machine or None,
    "gpu0": _gpu0,
    "gpus": lambda r: len(r.facts.nvidia.gpus) or None,
    "gpu.name": _gpu_name,
    "gpu.gfx": _gfx,
    "os.name": _os_name,
    "cudnn": _cudnn,
    "nccl": lambda r: r.facts.torch_runtime.nccl_version,
    "package_manager": _stated("package_manager"),
}


def accessor(path: str) -> Callable[[Any], Any]:
    if path.startswith("companion."):
        return _companion(path.split(".", 1)[1])
    return ACCESSORS[path]


# --- comparing a read value with the labelled one ---------------------------------------

_MACHINES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


def _dotted(text: str) -> List[str]:
    return re.split(r"[.]", text.strip().lower())


def same_version(label: str, got: str) -> bool:
    """Equal, or one a dotted prefix of the other ("3.10" and "3.10.12"), with a local
    label compared only when both have one."""
    a, _, la = str(label).strip().lower().partition("+")
    b, _, lb = str(got).strip().lower().partition("+")
    if la and lb and la != lb:
        return False
    pa, pb = _dotted(a), _dotted(b)
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def _cudnn_parts(text: str) -> Tuple[int, ...]:
    text = str(text).strip()
    if text.isdigit():  # 8902 (8.9.2) or 90100 (9.1.0): torch's cudnn.version()
        n = int(text)
        if n >= 90000:
            return (n // 10000, n // 100 % 100, n % 100)
        return (n // 1000, n // 100 % 10, n % 100)
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def _words(text: str) -> List[str]:
    return [w for w in re.findall(r"[a-z]+|\d+(?:\.\d+)*", str(text).lower()) if w]


_OS_WORDS = {
    "osx": "macos",
    "mac": "macos",
    "darwin": "macos",
    "window": "windows",
    "win": "windows",
}


def _os_words(text: str) -> List[str]:
    """An OS's words in one spelling: "osx 14.5" and "macOS 14.5", "window10" and "Windows 10"."""
    spaced = re.sub(r"(?<=[a-z])(?=\d)", " ", str(text).lower()).replace("mac os", "macos")
    return [_OS_WORDS.get(w, w) for w in _words(spaced)]


def matches(path: str, label: Any, got: Any) -> bool:
    if got is None:
        return False
    if path == "gpus":
        return str(label) == str(got)
    if path == "gpu0":
        return bool(label == got)
    if path == "cudnn":
        a, b = _cudnn_parts(label), _cudnn_parts(got)
        n = min(len(a), len(b))
        return n > 0 and a[:n] == b[:n]
    if path == "gpu.name":
        a = " ".join(w for w in _words(label) if w not in ("nvidia", "geforce"))
        b = " ".join(w for w in _words(got) if w not in ("nvidia", "geforce"))
        return bool(a) and (a in b or b in a)
    if path == "os.name":
        a, b = set(_os_words(label)), set(_os_words(got))
        return bool(a) and (a <= b or b <= a)
    if path in ("system.os", "package_manager"):
        return str(label).lower() == str(got).lower()
    if path == "system.machine":
        a, b = str(label).lower(), str(got).lower()
        return _MACHINES.get(a, a) == _MACHINES.get(b, b)
    return same_version(str(label), str(got))


# --- judging one report -----------------------------------------------------------------


@dataclass
class Judged:
    thread: str
    cause: bool
    fix: bool
    false: List[str]
    right: List[str] = field(default_factory=list)
    wrong: List[Tuple[str, Any, Any]] = field(default_factory=list)  # path, label, read
    unread: List[str] = field(default_factory=list)
    read: bool = True


def judge(entry: Dict[str, Any], report: Any) -> Judged:
    roots = [f for f in report.findings if f.caused_by is None and f.severity.value != "info"]
    named = [f for f in roots if f.code in entry["cause"] or f.name in entry["cause"]]
    advice = report.install.command if report.install and report.install.command else ""
    under = [f for f in report.findings if f.caused_by in {n.code for n in named}]
    said = " ".join((f.fix or "") + " " + (f.command or "") for f in named + under) + " " + advice
    allowed = set(entry["cause"]) | set(entry.get("also", []))
    false = [
        f"{f.code} {f.name}"
        for f in roots
        if f.severity.value == "error" and f.code not in allowed and f.name not in allowed
    ]
    command_ok = entry.get("command") is None or all(s in advice for s in entry["command"])
    got = Judged(
        thread=entry["thread"],
        cause=bool(named),
        fix=bool(named) and any(s in said for s in entry["fix"]) and command_ok,
        false=false,
        read=bool((report.diagnosis or {}).get("read")),
    )
    for path, label in entry.get("facts", {}).items():
        try:
            value = accessor(path)(report)
        except (KeyError, AttributeError, IndexError):
            value = None
        if label is None:  # the text says there is none (a CPU build's CUDA)
            if value is None:
                got.right.append(path)
            else:
                got.wrong.append((path, label, value))
        elif value is None:
            got.unread.append(path)
        elif matches(path, label, value):
            got.right.append(path)
        else:
            got.wrong.append((path, label, value))
    return got


def run(entries: Sequence[Dict[str, Any]], folder: Path = REAL) -> List[Judged]:
    from envcheck.diagnose import diagnose_text
    from envcheck.tables import load_tables

    tables = load_tables()
    out = []
    for entry in entries:
        text = (folder / entry["file"]).read_text(encoding="utf-8")
        out.append(judge(entry, diagnose_text(text, tables)))
    return out


@dataclass
class Figures:
    reports: int
    cause: int
    fix: int
    facts: int
    facts_right: int
    facts_wrong: int
    false_alarms: int

    def lines(self) -> List[str]:
        n, f = self.reports, max(self.facts, 1)
        return [
            f"reports: {n}",
            f"right cause: {self.cause}/{n} ({100 * self.cause / max(n, 1):.0f}%)",
            f"right cause and fix: {self.fix}/{n} ({100 * self.fix / max(n, 1):.0f}%)",
            f"labelled facts read right: {self.facts_right}/{self.facts} "
            f"({100 * self.facts_right / f:.0f}%), with another value: {self.facts_wrong}",
            f"reports with a false alarm: {self.false_alarms}",
        ]


def figures(judged: Sequence[Judged]) -> Figures:
    return Figures(
        reports=len(judged),
        cause=sum(j.cause for j in judged),
        fix=sum(j.fix for j in judged),
        facts=sum(len(j.right) + len(j.wrong) + len(j.unread) for j in judged),
        facts_right=sum(len(j.right) for j in judged),
        facts_wrong=sum(len(j.wrong) for j in judged),
        false_alarms=sum(bool(j.false) for j in judged),
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("all", "new", "old"), default="all")
    parser.add_argument("--list", action="store_true", help="each report that misses something")
    parser.add_argument("--folder", type=Path, default=REAL)
    args = parser.parse_args(argv)
    entries = load_reports(args.folder)
    if args.set != "all":
        entries = [e for e in entries if in_new_set(e) == (args.set == "new")]
    judged = run(entries, args.folder)
    print("\n".join(figures(judged).lines()))
    if args.list:
        for j in judged:
            if not (j.cause and j.fix) or j.wrong or j.unread or j.false:
                print(
                    f"{j.thread}: cause={j.cause} fix={j.fix} false={j.false} "
                    f"wrong={j.wrong} unread={j.unread}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
