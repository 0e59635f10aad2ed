"""Regenerate every compatibility table from its sources, show what changed, publish them.

The one entry point of the tools that build compat_tables/ (see compat_tables/README.md,
"Refreshing and publishing the tables"). It starts from the repository's tables (every record
curated by hand after the first import is carried over as it is, with its sources), re-runs
each generator whose input is stored (or, with ``--fetch``, fetched), validates the result
with envcheck's own loader, and prints a semantic diff against compat_tables/: per table,
the releases, variants, arch lists, drivers, GPU names, messages added, removed or changed,
each with the step that produced it.

    python tools/refresh_tables.py [--sources DIR] [--tables DIR] [--out DIR] [--fetch]
    python tools/refresh_tables.py --check           # fails unless today's tables come back
    python tools/refresh_tables.py --publish OUT     # the bundle `envcheck tables update` reads

Exit status: 0 nothing changed; 1 the tables changed (a workflow opens a pull request);
2 a record has no source or a table does not load (the file and record are named).

Steps, in the order the tables were first built (a step whose input is missing is skipped,
said so, and the tables it would regenerate are carried over):

- ``reference``: tools/import_reference.py, torch_releases, cuda_driver and gpu_arches from
  the reference's torch_releases.json, cuda_driver.json, gpu_arches.json and
  cuda_arch_support.json, merged into the tables (what other tools added is kept).
- ``driver facts``: tools/add_driver_facts.py, the CUDA update releases, the 13.x branches,
  torch's bundled CUDA update and forward compatibility of cuda_driver, from the reference's
  cuda_driver.json and torch_releases.json.
- ``conda``: tools/conda_commands.py, conda_pytorch.json (and tests/conda_commands.json)
  from PyTorch's previous-versions page (``previous-versions.md`` in the sources folder).
- ``uv backends``: tools/uv_torch_backends.py, installers.json's uv values from uv itself
  (the uv the table names; any uv with ``--fetch``).
- ``python ranges``: tools/pypi_platform_python.py, python_by_platform and
  versions_by_platform from the index's file lists (``pypi_python.json``, the tool's
  ``--transcript``, or queried with ``--fetch``).

Where a table was corrected by hand after a generator ran, the generator would undo the
correction: each such place is listed in CURATED with its reason, the table's value is kept,
and the run prints it ("kept"). An entry that no longer differs is printed as stale.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
TABLES = ROOT / "compat_tables"
DEFAULT_SOURCES = ROOT.parent / "shared" / "reference"
for _p in (str(ROOT), str(TOOLS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import add_driver_facts  # noqa: E402
import conda_commands  # noqa: E402
import import_reference  # noqa: E402
import pypi_platform_python  # noqa: E402

from envcheck.tables.bundle import MANIFEST, make_manifest, table_files  # noqa: E402
from envcheck.tables.code_changes import load_changes  # noqa: E402
from envcheck.tables.load import load_package_builds, load_tables  # noqa: E402
from envcheck.tables.reader import BUNDLED_TABLES as TABLE_NAMES  # noqa: E402
from envcheck.tables.reader import SCHEMA_VERSION, TableError  # noqa: E402

EXIT_SAME, EXIT_CHANGED, EXIT_INVALID = 0, 1, 2

# Where each fetched input comes from: pinned revisions, so that a fetch reproduces the
# stored copy until someone moves the pin (the previous-versions page of the PyTorch Korea
# mirror, the one copy with the 2.4-2.5 conda blocks as source text; see conda_commands.py).
PAGE_URL = (
    "https://raw.githubusercontent.com/PyTorchKR/pytorch.kr/"
    "1c9bf4720e160b498f1aecd14e4567f787d4f4df/_get_started/previous-versions.md"
)
PAGE_KEY = "PV_KR_MIRROR"

# --------------------------------------------------------------------------- paths in a table

Token = Union[str, Tuple[Any, Any]]  # a key of an object, or (key field, value) of a record
Path_ = Tuple[Token, ...]

# The field that names a record in a list of records, tried in order; the first whose values
# are present and unique in both lists is used (torch_bundled_cuda needs two).
RECORD_KEYS: Tuple[Union[str, Tuple[str, ...]], ...] = (
    "minor",
    "name",
    "id",
    "jetpack",
    "package",
    "family",
    "version",
    "cuda",
    "branch",
    "capability",
    "cuda_major",
    "torch",
    "gt_per_s",
    "pattern",
    "names",
    "generation",
    ("torch", "variant"),
    ("torch", "platforms"),
)


def _key_value(record: Dict[str, Any], key: Union[str, Tuple[str, ...]]) -> Any:
    if isinstance(key, tuple):
        return tuple(json.dumps(record[k]) for k in key)
    return record[key]


def record_key(*lists: List[Any]) -> Optional[Union[str, Tuple[str, ...]]]:
    items = [x for lst in lists for x in lst]
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    for key in RECORD_KEYS:
        names = (key,) if isinstance(key, str) else key
        if not all(all(k in x for k in names) for x in items):
            continue
        if all(len({json.dumps(_key_value(x, key)) for x in lst}) == len(lst) for lst in lists):
            return key
    return None


def show(path: Path_) -> str:
    out = ""
    for token in path:
        if isinstance(token, tuple):
            value = token[1]
            out += f"[{', '.join(value) if isinstance(value, tuple) else value}]"
        else:
            out += f".{token}" if out else token
    return out


def _find(items: List[Any], token: Tuple[str, Any]) -> Optional[int]:
    key, value = token
    for i, item in enumerate(items):
        if isinstance(item, dict) and json.dumps(_key_value(item, key)) == json.dumps(value):
            return i
    return None


_MISSING = object()


def get(doc: Any, path: Path_) -> Any:
    for token in path:
        if isinstance(token, tuple):
            at = _find(doc, token) if isinstance(doc, list) else None
            if at is None:
                return _MISSING
            doc = doc[at]
        elif isinstance(doc, dict) and token in doc:
            doc = doc[token]
        else:
            return _MISSING
    return doc


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return json.dumps(a) == json.dumps(b)


def put(doc: Any, path: Path_, value: Any) -> None:
    """Set (or, with _MISSING, delete) the value at ``path``; its parent must exist."""
    parent = get(doc, path[:-1])
    last = path[-1]
    if isinstance(last, tuple):
        at = _find(parent, last)
        if value is _MISSING:
            if at is not None:
                del parent[at]
        elif at is None:
            parent.append(value)
        else:
            parent[at] = value
    elif value is _MISSING:
        parent.pop(last, None)
    else:
        parent[last] = value


# --------------------------------------------------------------------------- the semantic diff


@dataclass
class Change:
    table: str
    path: Path_
    kind: str  # added, removed, changed
    old: Any = None
    new: Any = None
    step: str = "carried over"

    def line(self, skip: int = 0) -> str:
        where = show(self.path[skip:])
        if self.kind == "changed" and isinstance(self.old, list) and isinstance(self.new, list):
            plus = [x for x in self.new if x not in self.old]
            minus = [x for x in self.old if x not in self.new]
            if all(not isinstance(x, (dict, list)) for x in self.old + self.new):
                parts = [f"+{x}" for x in plus] + [f"-{x}" for x in minus] or ["reordered"]
                return f"{where}: {' '.join(str(p) for p in parts)}"
        if self.kind == "changed":
            return f"{where}: {_short(self.old)} -> {_short(self.new)}"
        return f"{where} {self.kind}" + (f": {_short(self.new)}" if self.kind == "added" else "")


def _short(value: Any, width: int = 100) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def diff(table: str, old: Any, new: Any, path: Path_ = ()) -> List[Change]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: List[Change] = []
        for key in list(old) + [k for k in new if k not in old]:
            here = (*path, key)
            if key not in new:
                out.append(Change(table, here, "removed", old[key]))
            elif key not in old:
                out.append(Change(table, here, "added", None, new[key]))
            else:
                out += diff(table, old[key], new[key], here)
        return out
    if isinstance(old, list) and isinstance(new, list):
        key = record_key(old, new)
        if key is not None:
            out = []
            olds = {json.dumps(_key_value(r, key)): r for r in old}
            news = {json.dumps(_key_value(r, key)): r for r in new}
            for r in old:
                token = (key, _key_value(r, key))
                k = json.dumps(token[1])
                if k in news:
                    out += diff(table, r, news[k], (*path, token))
                else:
                    out.append(Change(table, (*path, token), "removed", r))
            for r in new:
                token = (key, _key_value(r, key))
                if json.dumps(token[1]) not in olds:
                    out.append(Change(table, (*path, token), "added", None, r))
            return out
    if old != new or type(old) is not type(new):
        return [Change(table, path, "changed", old, new)]
    return []


def align(old: Any, new: Any) -> Any:
    """``new`` with the objects' keys and the records of each list in ``old``'s order (a
    record ``new`` adds goes after the record it follows there): order is not a fact, and a
    regenerated table should differ from the repository's only where a fact differs."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [k for k in old if k in new] + [k for k in new if k not in old]
        return {k: align(old[k], new[k]) if k in old else new[k] for k in keys}
    if isinstance(old, list) and isinstance(new, list):
        key = record_key(old, new)
        if key is None:
            return new
        ids = [json.dumps(_key_value(r, key)) for r in new]
        by_id = dict(zip(ids, new))
        olds = {json.dumps(_key_value(r, key)): r for r in old}
        out_ids = [json.dumps(_key_value(r, key)) for r in old]
        out_ids = [i for i in out_ids if i in by_id]
        for n, i in enumerate(ids):
            if i in olds:
                continue
            before = ids[n - 1] if n else None
            at = out_ids.index(before) + 1 if before in out_ids else (0 if n == 0 else len(out_ids))
            out_ids.insert(at, i)
        return [align(olds[i], by_id[i]) if i in olds else by_id[i] for i in out_ids]
    return new


# --------------------------------------------------------------------------- curated places

# (step, table, path, reason): the table's value is kept where the step's output differs.
# Each is a correction made by hand (or by a tool that is not re-run) after the generator.
_WINDOWS_ARM64 = (
    "windows-arm64 was added by hand from test-infra's WINDOWS_ARM64 (CPU wheels on PyTorch's "
    "own index from 2.8); the reference's platforms list the PyPI wheels only"
)
_NOT_RESEARCHED = (
    "tools/import_arch_lists.py drops the reference's 'not researched' note of a release whose "
    "lists it added from PyTorch's build scripts (its research file is not stored)"
)
_GPU_NAMES = (
    "the GPU-name import (NVML names of g_nv_name_released.h, chips from pci.ids) corrected "
    "the reference: GM20x Quadro M parts are 5.2, GM107/GM108 parts 5.0"
)
CURATED: List[Tuple[str, str, Path_, str]] = [
    *[
        ("reference", "torch_releases", ("releases", ("minor", m), "platforms"), _WINDOWS_ARM64)
        for m in ("2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15")
    ],
    *[
        (
            "reference",
            "torch_releases",
            ("releases", ("minor", m), "notes", "arch_lists"),
            _NOT_RESEARCHED,
        )
        for m in (
            "1.8",
            "1.9",
            "1.10",
            "1.11",
            "1.12",
            "1.13",
            "2.0",
            "2.1",
            "2.2",
            "2.3",
            "2.4",
            "2.5",
            "2.6",
        )
    ],
    *[
        ("reference", "gpu_arches", ("gpus", ("name", n), "capability"), _GPU_NAMES)
        for n in ("Quadro M620", "Quadro M5000M", "Quadro M4000M", "Quadro M3000M")
    ],
    (
        "reference",
        "gpu_arches",
        ("gpus", ("name", "NVIDIA GB10 (DGX Spark)")),
        "renamed 'NVIDIA GB10', the name NVML reports (the record's notes.name says so)",
    ),
    (
        "reference",
        "gpu_arches",
        ("gpus", ("name", "GeForce GTX 16 series (e.g. GTX 1660 / 1650 family)")),
        "not a name a driver reports: the GPU-name import lists each GTX 16 card by its NVML "
        "name (GTX 1630, 1650, 1650 Ti, 1660, 1660 Ti, ...) instead",
    ),
    (
        "reference",
        "gpu_arches",
        ("description",),
        "extended by hand when AMD names (LLVM gfx targets) were added",
    ),
    (
        "reference",
        "cuda_driver",
        ("minor_version_compatibility", ("branch", 525), "windows"),
        "the table takes the later, higher floor of NVIDIA's release notes (528.33, the 12.0 "
        "Update 1 driver, as uv and light-the-torch do); the reference gives the 12.0 GA driver "
        "(the record's notes.windows_floor)",
    ),
]


# --------------------------------------------------------------------------- steps


@dataclass
class Context:
    sources: Path
    fetch: bool
    scratch: Path
    log: List[str] = field(default_factory=list)
    side: Dict[str, bytes] = field(default_factory=dict)  # repository path -> regenerated bytes


@dataclass
class Step:
    name: str
    tool: str
    tables: Tuple[str, ...]
    run: Callable[[Dict[str, Any], Context], Optional[str]]  # returns a skip reason or None


def _need(ctx: Context, *names: str) -> Optional[str]:
    missing = [n for n in names if not (ctx.sources / n).is_file()]
    return f"not stored in {ctx.sources}: {', '.join(missing)}" if missing else None


@contextlib.contextmanager
def _quiet() -> Iterator[io.StringIO]:
    """The generators print as they go; their lines go to the log, not the diff."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        yield out


def step_reference(docs: Dict[str, Any], ctx: Context) -> Optional[str]:
    names = ("torch_releases.json", "cuda_driver.json", "gpu_arches.json", "cuda_arch_support.json")
    missing = _need(ctx, *names)
    if missing:
        return missing
    for name, build in (
        ("torch_releases", import_reference.torch_releases),
        ("cuda_driver", import_reference.cuda_driver),
        ("gpu_arches", import_reference.gpu_arches),
    ):
        with _quiet():
            table = build(ctx.sources)
            import_reference.REPLACED.clear()
            docs[name] = import_reference.merge(docs[name], table, "", name)
    return None


def step_driver_facts(docs: Dict[str, Any], ctx: Context) -> Optional[str]:
    missing = _need(ctx, "cuda_driver.json", "torch_releases.json")
    if missing:
        return missing
    path = ctx.scratch / "cuda_driver.json"
    path.write_text(json.dumps(docs["cuda_driver"], indent=1, ensure_ascii=False) + "\n")
    saved = add_driver_facts.REF, add_driver_facts.REF_RELEASES
    add_driver_facts.REF = ctx.sources / "cuda_driver.json"
    add_driver_facts.REF_RELEASES = ctx.sources / "torch_releases.json"
    try:
        with _quiet() as said:
            add_driver_facts.main(path)
        ctx.log += [f"  driver facts: {line}" for line in said.getvalue().splitlines()]
    finally:
        add_driver_facts.REF, add_driver_facts.REF_RELEASES = saved
    docs["cuda_driver"] = json.loads(path.read_text())
    return None


def step_conda(docs: Dict[str, Any], ctx: Context) -> Optional[str]:
    page = ctx.sources / "previous-versions.md"
    if not page.is_file() and ctx.fetch:
        page = ctx.scratch / "previous-versions.md"
        with urllib.request.urlopen(PAGE_URL, timeout=60) as answer:
            page.write_bytes(answer.read())
    if not page.is_file():
        return f"not stored in {ctx.sources}: previous-versions.md ({PAGE_URL}; or --fetch)"
    # conda_commands.py reads torch_releases.json and writes both files below its ROOT.
    root = ctx.scratch / "conda"
    (root / "compat_tables").mkdir(parents=True, exist_ok=True)
    (root / "tests").mkdir(exist_ok=True)
    (root / "compat_tables" / "torch_releases.json").write_text(
        json.dumps(docs["torch_releases"], indent=1, ensure_ascii=False) + "\n"
    )
    saved = conda_commands.ROOT
    conda_commands.ROOT = root
    try:
        with _quiet() as said:
            conda_commands.main([str(page), PAGE_KEY])
        ctx.log += [f"  conda: {line}" for line in said.getvalue().splitlines()]
    finally:
        conda_commands.ROOT = saved
    docs["conda_pytorch"] = json.loads((root / "compat_tables" / "conda_pytorch.json").read_text())
    ctx.side["tests/conda_commands.json"] = (root / "tests" / "conda_commands.json").read_bytes()
    return None


def _uv_binary() -> Optional[str]:
    here = Path(sys.executable).parent / ("uv.exe" if os.name == "nt" else "uv")
    return str(here) if here.is_file() else shutil.which("uv")


def step_uv(docs: Dict[str, Any], ctx: Context) -> Optional[str]:
    uv = _uv_binary()
    if uv is None:
        return "no uv here"
    backends = docs["installers"]["uv_torch_backends"]
    recorded = backends["sources"][0].split(" --torch-backend", 1)[0]  # "uv 0.13.9"
    answer = subprocess.run(
        [sys.executable, str(TOOLS / "uv_torch_backends.py"), uv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if answer.returncode != 0:
        return (
            f"tools/uv_torch_backends.py failed: {answer.stderr.strip() or answer.stdout.strip()}"
        )
    got = json.loads(answer.stdout)
    version = " ".join(got["uv"].split()[:2])  # "uv 0.13.9 (x86_64-...)" -> "uv 0.13.9"
    if version != recorded and not ctx.fetch:
        return f"{version} here, the table records {recorded} (--fetch takes this uv's list)"
    if got["values"] != backends["values"]:
        backends["values"] = got["values"]
        backends["sources"][0] = (
            f"{version} --torch-backend possible values, read from the CLI by "
            "tools/uv_torch_backends.py"
        )
        ctx.log.append(f"  uv backends: {version} lists other values; review the notes")
    return None


def step_python_ranges(docs: Dict[str, Any], ctx: Context) -> Optional[str]:
    stored = ctx.sources / "pypi_python.json"
    if stored.is_file():
        answers = json.loads(stored.read_text())
    elif ctx.fetch:
        answers = {
            p: {py: pypi_platform_python.available(p, py) for py in pypi_platform_python.PYTHONS}
            for p in pypi_platform_python.PLATFORM_TAGS
        }
        (ctx.scratch / "pypi_python.json").write_text(json.dumps(answers, indent=1))
    else:
        return (
            f"not stored in {ctx.sources}: pypi_python.json (the tool's --transcript; or --fetch)"
        )
    pythons = pypi_platform_python.PYTHONS
    for release in docs["torch_releases"]["releases"]:
        versions = release["versions"]
        old_ranges = release.get("python_by_platform") or {}
        old_lacking = release.get("versions_by_platform") or {}
        ranges, lacking = dict(old_ranges), dict(old_lacking)
        for platform, by_python in answers.items():
            have_py = [py for py in pythons if any(v in by_python.get(py, []) for v in versions)]
            if not have_py:
                continue  # no wheel on the default index: the table's own record stands
            ranges[platform] = {"min": have_py[0], "max": have_py[-1]}
            have = sorted({v for py in have_py for v in by_python[py] if v in versions})
            if have != sorted(versions):
                lacking[platform] = have
            else:
                lacking.pop(platform, None)
        if ranges == old_ranges and lacking == old_lacking:
            continue
        release["python_by_platform"] = ranges
        release["versions_by_platform"] = lacking or None
        if "PYPI_INDEX_PLATFORMS" not in release["sources"]:
            release["sources"].append("PYPI_INDEX_PLATFORMS")
    return None


STEPS = (
    Step(
        "reference",
        "tools/import_reference.py",
        ("torch_releases", "cuda_driver", "gpu_arches"),
        step_reference,
    ),
    Step("driver facts", "tools/add_driver_facts.py", ("cuda_driver",), step_driver_facts),
    Step("conda", "tools/conda_commands.py", ("conda_pytorch",), step_conda),
    Step("uv backends", "tools/uv_torch_backends.py", ("installers",), step_uv),
    Step("python ranges", "tools/pypi_platform_python.py", ("torch_releases",), step_python_ranges),
)


# --------------------------------------------------------------------------- the pipeline


def style_of(raw: bytes) -> Optional[Tuple[int, bool]]:
    """(indent, ensure_ascii) that reproduce a file byte for byte; None: written by hand."""
    text = raw.decode("utf-8")
    data = json.loads(text)
    for indent in (1, 2):
        for ascii_only in (False, True):
            if json.dumps(data, indent=indent, ensure_ascii=ascii_only) + "\n" == text:
                return indent, ascii_only
    return None


def serialise(doc: Any, base: bytes) -> bytes:
    """The file's own bytes when nothing changed (jetpack.json and links.json are laid out by
    hand); else JSON in the file's style (indent 1, UTF-8 as is, for a hand-laid file)."""
    if json.loads(base.decode("utf-8")) == doc and type(doc) is dict:
        return base
    indent, ascii_only = style_of(base) or (1, False)
    return (json.dumps(doc, indent=indent, ensure_ascii=ascii_only) + "\n").encode("utf-8")


def unsourced(doc: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Records (objects with ``sources`` as a list or ``inferred``) that name no source."""
    if isinstance(doc, dict):
        has = doc.get("sources")
        if (isinstance(has, list) and not has) or ("inferred" in doc and "sources" not in doc):
            yield path
        for key, value in doc.items():
            yield from unsourced(value, (*path, key))
    elif isinstance(doc, list):
        key = record_key(doc)
        for i, value in enumerate(doc):
            token: Token = (key, _key_value(value, key)) if key else f"[{i}]"
            yield from unsourced(value, (*path, token))


@dataclass
class Result:
    changes: List[Change]
    kept: List[str]
    stale: List[str]
    skipped: List[str]
    ran: List[str]
    files: Dict[str, bytes]
    bytes_only: List[str]
    side_changes: List[str]
    log: List[str]
    side: Dict[str, bytes]


def regenerate(tables: Path, against: Path, sources: Path, fetch: bool) -> Result:
    base_raw = {n: (tables / f"{n}.json").read_bytes() for n in TABLE_NAMES}
    docs = {n: json.loads(raw.decode("utf-8")) for n, raw in base_raw.items()}
    carried = copy.deepcopy(docs)
    touched: Dict[Tuple[str, str], str] = {}  # (table, path) -> the last step that changed it
    kept: List[str] = []
    stale: List[str] = []
    skipped: List[str] = []
    ran: List[str] = []
    with tempfile.TemporaryDirectory(prefix="refresh-tables-") as scratch:
        ctx = Context(sources, fetch, Path(scratch))
        for step in STEPS:
            before = copy.deepcopy(docs)
            why = step.run(docs, ctx)
            if why:
                skipped.append(
                    f"{step.name} ({step.tool}): skipped, {why}; carried over: "
                    + ", ".join(f"{t}.json" for t in step.tables)
                )
                docs = before
                continue
            ran.append(
                f"{step.name} ({step.tool}): regenerated "
                + ", ".join(f"{t}.json" for t in step.tables)
            )
            for name in step.tables:
                for c_step, table, path, reason in CURATED:
                    if c_step != step.name or table != name:
                        continue
                    was, now = get(carried[name], path), get(docs[name], path)
                    if _same(was, now):
                        stale.append(
                            f"{table}.json: {show(path)}: {step.name} gives the table's value now: "
                            "the CURATED entry can go"
                        )
                        continue
                    put(docs[name], path, was if was is _MISSING else copy.deepcopy(was))
                    done = "not added" if was is _MISSING else "kept"
                    offered = _short(None if now is _MISSING else now, 60)
                    kept.append(
                        f"{table}.json: {show(path)}: {done} ({step.name} gives {offered}): {reason}"
                    )
                # a step never moves a table's date back: as_of is the newest fact's date
                docs[name]["as_of"] = max(before[name]["as_of"], docs[name]["as_of"])
                docs[name] = align(before[name], docs[name])
                for change in diff(name, before[name], docs[name]):
                    touched[(name, show(change.path))] = step.name
    changes: List[Change] = []
    files: Dict[str, bytes] = {}
    bytes_only: List[str] = []
    for name in TABLE_NAMES:
        files[name] = serialise(docs[name], base_raw[name])
        theirs_raw = (against / f"{name}.json").read_bytes()
        theirs = json.loads(theirs_raw.decode("utf-8"))
        found = diff(name, theirs, docs[name])
        for change in found:
            where = show(change.path)
            steps = [
                s
                for (t, p), s in touched.items()
                if t == name and (p == where or where.startswith(p) or p.startswith(where))
            ]
            change.step = (
                steps[-1]
                if steps
                else (
                    "carried over from " + str(tables)
                    if tables.resolve() != against.resolve()
                    else "carried over"
                )
            )
        changes += found
        if not found and files[name] != theirs_raw:
            bytes_only.append(
                f"{name}.json: the same facts, other bytes (layout, key order or escaping)"
            )
    side_changes = []
    for rel, data in ctx.side.items():
        current = ROOT / rel
        if not current.is_file() or current.read_bytes() != data:
            side_changes.append(rel)
    return Result(
        changes, kept, stale, skipped, ran, files, bytes_only, side_changes, ctx.log, ctx.side
    )


CATEGORY = (
    ("torch_releases", "releases", "torch releases"),
    ("cuda_driver", "toolkits", "CUDA toolkits and drivers"),
    ("cuda_driver", "torch_bundled_cuda", "bundled CUDA"),
    ("cuda_driver", "", "drivers"),
    ("gpu_arches", "gpus", "GPU names"),
    ("gpu_arches", "", "GPU architectures"),
    ("messages", "messages", "messages"),
    ("conda_pytorch", "releases", "conda releases"),
    ("installers", "", "installers"),
)


def category(change: Change) -> str:
    top = change.path[0] if change.path else ""
    for table, head, label in CATEGORY:
        if change.table == table and (not head or top == head):
            return label
    return change.table


def describe(change: Change) -> str:
    """One line a reviewer reads: what kind of fact, where, and what happened to it."""
    p = change.path
    if change.table == "torch_releases" and len(p) >= 2 and p[0] == "releases":
        minor = p[1][1] if isinstance(p[1], tuple) else p[1]
        if len(p) == 2:
            return f"release {minor} {change.kind}"
        field_ = show(p[2:])
        what = (
            "variants"
            if field_.startswith(("variants", "variants_windows"))
            else "arch list"
            if field_.startswith(("arch_lists", "gfx_lists"))
            else "Python range"
            if field_.startswith(("python", "versions_by_platform"))
            else "field"
        )
        return f"release {minor}: {what} {change.line(2)}"
    if change.table == "gpu_arches" and len(p) == 2 and p[0] == "gpus":
        return f"GPU name {p[1][1]!r} {change.kind}" + (
            f" (capability {change.new.get('capability')}, gfx {change.new.get('gfx')})"
            if change.kind == "added" and isinstance(change.new, dict)
            else ""
        )
    if change.table == "messages" and len(p) == 2 and p[0] == "messages":
        return f"message {p[1][1]!r} {change.kind}"
    return change.line()


def report(result: Result) -> List[str]:
    lines = ["steps:"] + [f"  {s}" for s in result.ran + result.skipped]
    lines += [
        "carried over as they are (curated by hand, no generator): "
        + ", ".join(
            f"{n}.json"
            for n in TABLE_NAMES
            if not any(
                n in s.tables for s in STEPS if any(r.startswith(s.name + " ") for r in result.ran)
            )
        )
    ]
    if result.kept:
        lines.append(f"kept by hand over a generator ({len(result.kept)}):")
        lines += [f"  {k}" for k in result.kept]
    if result.stale:
        lines.append("curated entries no longer needed:")
        lines += [f"  {s}" for s in result.stale]
    if result.log:
        lines.append("generator output:")
        lines += result.log
    if not result.changes and not result.bytes_only and not result.side_changes:
        lines.append("no change: every table reproduced byte for byte")
        return lines
    lines.append("changes against compat_tables/:")
    by_table: Dict[str, List[Change]] = {}
    for change in result.changes:
        by_table.setdefault(change.table, []).append(change)
    for table, changes in by_table.items():
        lines.append(f"  {table}.json ({len(changes)}):")
        for change in changes:
            lines.append(f"    [{category(change)}] {describe(change)}  <- {change.step}")
    lines += [f"  {b}" for b in result.bytes_only]
    lines += [f"  {rel}: regenerated with other contents" for rel in result.side_changes]
    return lines


def validate(folder: Path) -> List[str]:
    """Problems that make the tables unusable: the loader's refusal, or a record without a source."""
    problems = []
    try:
        load_tables(folder)
        load_package_builds(str(folder))
        load_changes(str(folder))
    except TableError as exc:
        problems.append(str(exc))
    for name in TABLE_NAMES:
        doc = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        for path in unsourced(doc):
            problems.append(
                f"{name}.json: {show(path) or '(top)'}: a record needs at least one source"
            )
    return problems


# --------------------------------------------------------------------------- publishing


def _no_links(path: Path) -> None:
    for part in [path, *path.parents]:
        if part.is_symlink():
            raise SystemExit(
                f"refresh_tables.py: {part} is a symbolic link; refusing to publish through it"
            )


def _write_new(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def publish(tables: Path, out: Path) -> Path:
    """OUT/v<schema>/: the nine tables byte for byte and manifest.json (their sha256, size,
    as_of), as `envcheck tables update` reads them."""
    problems = validate(tables)
    if problems:
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)
    target = out / f"v{SCHEMA_VERSION}"
    _no_links(target)
    target.mkdir(parents=True, exist_ok=True)
    _no_links(target)
    for name in table_files():
        _no_links(target / name)
        _write_new(target / name, (tables / name).read_bytes())
    manifest = make_manifest(target)
    _no_links(target / MANIFEST)
    _write_new(target / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return target


# --------------------------------------------------------------------------- entry point


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sources",
        type=Path,
        default=DEFAULT_SOURCES,
        help="folder of stored inputs (default: ../shared/reference)",
    )
    parser.add_argument(
        "--tables", type=Path, default=TABLES, help="tables to start from (default: compat_tables/)"
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=TABLES,
        help="tables to diff against (default: compat_tables/)",
    )
    parser.add_argument("--out", type=Path, help="write the regenerated tables here")
    parser.add_argument("--fetch", action="store_true", help="fetch inputs that are not stored")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 unless the tables come back byte for byte"
    )
    parser.add_argument(
        "--publish",
        type=Path,
        metavar="OUT",
        help="write the tables and manifest.json to OUT/v<schema>/",
    )
    args = parser.parse_args(argv)
    if args.publish:
        target = publish(args.tables, args.publish)
        print(f"published {len(table_files())} tables and {MANIFEST} to {target}")
        return EXIT_SAME
    result = regenerate(args.tables, args.against, args.sources, args.fetch)
    with tempfile.TemporaryDirectory(prefix="refresh-tables-out-") as built:
        for name, data in result.files.items():
            (Path(built) / f"{name}.json").write_bytes(data)
        problems = [p.replace(str(Path(built)) + os.sep, "") for p in validate(Path(built))]
        print("\n".join(report(result)))
        if problems:
            for p in problems:
                print(f"error: {p}")
            return EXIT_INVALID
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            for name, data in result.files.items():
                (args.out / f"{name}.json").write_bytes(data)
            if args.out.resolve() == TABLES.resolve():  # the repository: its test data too
                for rel in result.side_changes:
                    (ROOT / rel).write_bytes(result.side[rel])
            print(f"wrote {len(result.files)} tables to {args.out}")
    changed = bool(result.changes or result.bytes_only or result.side_changes)
    if args.check and changed:
        print("check failed: the regenerated tables differ from compat_tables/ (see above)")
    return EXIT_CHANGED if changed else EXIT_SAME


if __name__ == "__main__":
    sys.exit(main())
