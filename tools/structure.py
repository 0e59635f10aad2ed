"""Print the shape of the envcheck package against the limits the code keeps to.

    python tools/structure.py [--no-mypy]

Five figures, each with what makes it up, all expected to be 0 (CI runs this and fails on
any other figure):

- import circles: strongly connected groups of modules, counting every ``import`` of an
  envcheck module wherever it is written (at the top or inside a function: a lazy import
  is still a dependency); only imports under ``if TYPE_CHECKING:`` are left out, since they
  never run;
- upward imports: a module importing one of a higher layer (``LAYERS`` below is the
  pipeline of shared/DESIGN.md, from plain values up to the command line);
- modules over 500 lines;
- functions over 60 lines (from the ``def`` line to the last line of the body: decorators,
  such as a click command's options, do not count);
- ``mypy --strict`` errors over the package.

Exit status: 0 when every figure is 0, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "envcheck"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

# Lowest first. A module belongs to the layer of the longest prefix listed for it; it may
# import its own layer and those below, never one above.
LAYERS: List[Tuple[str, ...]] = [
    # values and plumbing that know nothing of envcheck's pipeline
    (
        "envcheck._version",
        "envcheck._record",
        "envcheck._patterns",
        "envcheck._plain_args",
        "envcheck.values",
        "envcheck._text",
        "envcheck._progress",
        "envcheck.exitcodes",
        "envcheck._proc",
        "envcheck._stdout",
        "envcheck._cwd",
        "envcheck._outfile",
        "envcheck._http",
        "envcheck._clock",
        "envcheck._toml",
        "envcheck._clickstyle",
        "envcheck._child",
        "envcheck.containers",
        "envcheck.nvml_errors",
        "envcheck.target",
        "envcheck.facts",
        "envcheck.facts_codec",
        "envcheck.findings",
        "envcheck.verdict",
    ),
    # knowledge: the tables, the rule catalogue, what builds exist
    ("envcheck.tables", "envcheck.rules", "envcheck.builds"),
    # questions asked of the tables
    (
        "envcheck.compat",
        "envcheck.tegra",
        "envcheck.driver_support",
        "envcheck.pins",
        "envcheck.cuda_needs",
        "envcheck.scan",
    ),
    # observing: the live machine and the smoke children
    ("envcheck.probes", "envcheck.smoke"),
    # deciding what to install
    ("envcheck.install",),
    # judging: checks may ask the resolver what to install
    ("envcheck.checks",),
    # the pipeline run once for every front end
    ("envcheck.core", "envcheck.requirements", "envcheck.requirement_values"),
    # front ends that consume a Report: pasted text, machines compared, formats, the
    # distributed launcher
    ("envcheck.diagnose", "envcheck.fleet", "envcheck.report", "envcheck.smoke.distributed"),
    # the command line and the package's public face
    (
        "envcheck.cli",
        "envcheck.commands",
        "envcheck.healthcheck",
        "envcheck._entry",
        "envcheck.__main__",
        "envcheck.smoke.__main__",
        "envcheck",
    ),
]


def modules(package: Path = PACKAGE) -> Dict[str, Path]:
    """Every module of ``package`` by its dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def layer(module: str) -> int:
    best, best_len = -1, -1
    for number, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = number, len(prefix)
    return best


def _type_checking_nodes(tree: ast.AST) -> Set[int]:
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def imports(module: str, path: Path, known: Dict[str, Path]) -> Set[str]:
    """The envcheck modules ``module`` imports (the deepest module each import names)."""

    def deepest(name: str) -> Optional[str]:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped = _type_checking_nodes(tree)
    found: Set[Optional[str]] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(deepest(a.name) for a in node.names if a.name.startswith("envcheck"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != "envcheck" and not source.startswith("envcheck."):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                found.add(full if full in known else deepest(source))
    found.discard(None)
    found.discard(module)
    return {name for name in found if name is not None}


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    groups: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def long_functions(path: Path) -> Iterator[Tuple[str, int, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node: ast.AST, prefix: str) -> Iterator[Tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    yield prefix + child.name, child.lineno, length
                yield from walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def mypy_errors() -> List[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "-p", "envcheck"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        return [f"mypy could not run: {(done.stderr or done.stdout).strip()[:300]}"]
    return [line for line in done.stdout.splitlines() if ": error:" in line]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-mypy", action="store_true", help="leave out the mypy figure")
    parser.add_argument("--package", type=Path, default=PACKAGE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    known = modules(args.package)
    base = args.package.parent
    graph = {name: imports(name, path, known) for name, path in known.items()}
    figures: List[Tuple[str, List[str]]] = []

    figures.append(("import circles", [" <-> ".join(group) for group in circles(graph)]))
    upward = []
    for name in sorted(graph):
        for other in sorted(graph[name]):
            if layer(other) > layer(name):
                upward.append(
                    f"{name} (layer {layer(name)}) imports {other} (layer {layer(other)})"
                )
    unplaced = [name for name in known if layer(name) < 0]
    figures.append(("upward imports", upward + [f"{name}: in no layer" for name in unplaced]))

    sizes = []
    for path in known.values():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            sizes.append(f"{path.relative_to(base)}: {lines} lines")
    figures.append((f"modules over {MAX_MODULE_LINES} lines", sizes))

    functions = []
    for path in known.values():
        for function, line, length in long_functions(path):
            functions.append(f"{path.relative_to(base)}:{line} {function}: {length} lines")
    figures.append((f"functions over {MAX_FUNCTION_LINES} lines", functions))

    if not args.no_mypy:
        figures.append(("mypy --strict errors", mypy_errors()))

    for title, items in figures:
        print(f"{title}: {len(items)}")
        for item in items:
            print(f"  {item}")
    return 0 if all(not items for _, items in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
