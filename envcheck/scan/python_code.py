"""Uses of changed APIs in one Python file, read with ``ast``: never imported, never run.

A reference is judged by what it names once the file's imports are resolved (``import
torch as t; t.cuda.amp.autocast`` and ``from torch.cuda import amp; amp.autocast`` are both
``torch.cuda.amp.autocast``), so ``self.load(...)``, a comment or a string that merely
spells a name is not a use. Import aliases are the file's, wherever they stand (a function's
own ``import`` included): a file that binds the same short name to two modules is rare, and
the scan reads it as the last binding's.
"""

from __future__ import annotations

import ast
import bisect
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..tables.code_changes import Change, MatchKind

Hit = Tuple[Change, int, int]  # the change, line, column (1-based)


def parse(data: bytes) -> Tuple[Optional[ast.Module], Optional[str]]:
    """The module, or why it could not be read as Python 3. Bytes go to the parser as they
    are (it honours a coding cookie and a BOM); undecodable bytes and NULs are replaced."""
    try:
        return ast.parse(data), None
    except SyntaxError as exc:
        if "decode" not in str(exc.msg) and "null bytes" not in str(exc.msg):
            return None, f"not Python 3 (line {exc.lineno}: {exc.msg})"
    except ValueError:  # NUL bytes (Python < 3.12), an unknown coding cookie
        pass
    except (RecursionError, MemoryError):
        return None, "nested too deeply to parse"
    text = data.decode("utf-8", "replace").replace("\x00", "")
    try:
        return ast.parse(text), None
    except SyntaxError as exc:
        return None, f"not Python 3 (line {exc.lineno}: {exc.msg})"
    except (RecursionError, MemoryError, ValueError):
        return None, "nested too deeply to parse"


class _Imports:
    """The file's import bindings: local name -> dotted name, and star-imported modules."""

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}
        self.stars: List[str] = []
        self.statements: List[Tuple[str, int, int]] = []  # (dotted name imported, line, col)

    def add(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    self.names[top] = top
                self.statements.append((alias.name, node.lineno, node.col_offset + 1))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    self.stars.append(node.module)
                    self.statements.append((node.module, node.lineno, node.col_offset + 1))
                    continue
                full = f"{node.module}.{alias.name}"
                self.names[alias.asname or alias.name] = full
                self.statements.append((full, node.lineno, node.col_offset + 1))

    def resolve(self, node: ast.expr) -> Optional[str]:
        """The dotted name an attribute chain or a name refers to, or None when its root
        is not an imported name (a local variable, ``self``, a call's result)."""
        parts: List[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.names.get(node.id)
        if root is None:
            return None
        parts.append(root)
        return ".".join(reversed(parts))

    def star_names(self, name: str) -> List[str]:
        return [f"{module}.{name}" for module in self.stars]


def _under(name: str, target: str) -> bool:
    return name == target or name.startswith(target + ".")


def scan_tree(
    tree: ast.Module,
    changes: Sequence[Change],
    lines_of: Optional[Callable[[Iterable[str]], List[int]]] = None,
) -> List[Hit]:
    """Every use in ``tree`` of the Python ``changes`` (those the prefilter kept).
    ``lines_of(words)``: the sorted numbers of the lines holding a change's word or one of
    ``words`` (the names the imports bind to a changed API); only the statements over them
    are walked in full. None walks everything."""
    imports = _Imports()
    _gather(tree.body, None, imports, None)
    lines = None
    if lines_of is not None:
        lines = lines_of(
            alias
            for alias, full in imports.names.items()
            if any(_under(full, c.match.target.removesuffix(".*")) for c in changes)
        )
    nodes: List[ast.AST] = []
    _gather(tree.body, lines, None, nodes)
    refs: List[ast.expr] = []
    calls: List[ast.Call] = []
    needles = {c.match.needle for c in changes}
    for node in nodes:
        kind = type(node)
        if kind is ast.Attribute:
            if node.attr in needles:  # type: ignore[attr-defined]
                refs.append(node)  # type: ignore[arg-type]
        elif kind is ast.Name:
            if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                refs.append(node)  # type: ignore[arg-type]  # not `autocast = None`
        elif kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
    hits: List[Hit] = []
    by_kind: Dict[MatchKind, List[Change]] = {}
    for change in changes:
        by_kind.setdefault(change.match.kind, []).append(change)
    hits += _imported(imports, by_kind.get(MatchKind.MODULE, []))
    hits += _referenced(imports, refs, by_kind.get(MatchKind.MODULE, []), modules=True)
    names = by_kind.get(MatchKind.NAME, [])
    used = _referenced(imports, refs, names, modules=False)
    hits += used + _unused_imports(imports, names, {id(c) for c, _, _ in used})
    hits += _calls(imports, calls, by_kind)
    return hits


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # fields that hold statements


def _gather(
    statements: Sequence[ast.AST],
    lines: Optional[Sequence[int]],
    imports: Optional[_Imports],
    nodes: Optional[List[ast.AST]],
) -> None:
    """Read every import into ``imports``, or walk into ``nodes`` the expressions of the
    statements over ``lines`` (all of them when None)."""
    for stmt in statements:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if imports is not None:
                imports.add(stmt)
            continue
        if nodes is not None and (lines is None or _holds(lines, stmt)):
            for name, value in ast.iter_fields(stmt):
                if name in _BODIES:
                    continue
                for child in value if isinstance(value, list) else (value,):
                    if isinstance(child, ast.AST):
                        nodes.extend(ast.walk(child))
        for name in _BODIES:
            body = getattr(stmt, name, None)
            if body:
                _gather(body, lines, imports, nodes)


def _holds(lines: Sequence[int], node: ast.AST) -> bool:
    """Whether one of ``lines`` falls in the node's lines (its decorators' included)."""
    start = getattr(node, "lineno", None)
    if start is None:  # a match_case: its pattern and guard are read
        return True
    for decorator in getattr(node, "decorator_list", ()):
        start = min(start, decorator.lineno)
    end = getattr(node, "end_lineno", None) or start
    index = bisect.bisect_left(lines, start)
    return index < len(lines) and lines[index] <= end


def _imported(imports: _Imports, changes: Iterable[Change]) -> List[Hit]:
    """Import statements of a removed or moved module (or of anything under it)."""
    return [
        (change, line, col)
        for change in changes
        for name, line, col in imports.statements
        if _under(name, change.match.target)
    ]


def _referenced(
    imports: _Imports, refs: Iterable[ast.expr], changes: Sequence[Change], modules: bool
) -> List[Hit]:
    """Names and attribute chains that resolve to a change's dotted name (or under it). For
    a module, only chains through a parent module count (``torch._six.inf``): a name bound
    by importing from the module fails at its import, already reported."""
    if not changes:
        return []
    hits: List[Hit] = []
    for node in refs:
        if isinstance(node, ast.Name):
            if modules or node.id not in imports.names:
                full = None if modules else _star(imports, node.id, changes)
                if full is None:
                    continue
            else:
                full = imports.names[node.id]
        else:
            full = imports.resolve(node)
            if full is None:
                continue
        for change in changes:
            if _under(full, change.match.target):
                hits.append((change, node.lineno, node.col_offset + 1))
    return hits


def _star(imports: _Imports, name: str, changes: Sequence[Change]) -> Optional[str]:
    for full in imports.star_names(name):
        if any(_under(full, c.match.target) for c in changes):
            return full
    return None


def _unused_imports(imports: _Imports, changes: Iterable[Change], used: Set[int]) -> List[Hit]:
    """A name imported from where it was moved, in a file that never uses it otherwise (a
    re-export): the import is the use. Where it is used, its uses are reported instead."""
    return _imported(imports, [c for c in changes if id(c) not in used])


def _calls(
    imports: _Imports, calls: Iterable[ast.Call], by_kind: Dict[MatchKind, List[Change]]
) -> List[Hit]:
    hits: List[Hit] = []
    targeted = by_kind.get(MatchKind.CALL, [])
    methods = by_kind.get(MatchKind.METHOD, [])
    options = by_kind.get(MatchKind.ARGPARSE, [])
    for call in calls:
        func = call.func
        where = (call.lineno, call.col_offset + 1)
        if targeted:
            full = imports.resolve(func)
            for change in targeted:
                if change.match.calls(full) and _keyword_matches(call, change):
                    hits.append((change, *where))
        if isinstance(func, ast.Attribute):
            if methods and not _on_module(imports, func.value):
                hits += [(c, *where) for c in methods if func.attr == c.match.target]
            if options and func.attr == "add_argument":
                hits += [(c, *where) for c in options if _option_matches(call, c)]
    return hits


def _keyword_matches(call: ast.Call, change: Change) -> bool:
    match = change.match
    given = {k.arg: k.value for k in call.keywords}
    if not match.present:  # "without": a **kwargs may carry it, so that call is not judged
        return match.keyword not in given and None not in given
    if match.keyword not in given:
        return False
    if not match.has_value:
        return True
    value = given[match.keyword]  # a value the scan cannot read is not judged
    return (
        isinstance(value, ast.Constant)
        and type(value.value) is type(match.value)
        and value.value == match.value
    )


def _on_module(imports: _Imports, receiver: ast.expr) -> bool:
    """A method match is a method of an object (a tensor): a function of an imported module
    (``torch.symeig``, a name entry's business, or ``np.symeig``) is not one."""
    return imports.resolve(receiver) is not None


def _option_matches(call: ast.Call, change: Change) -> bool:
    options = {a.value for a in call.args if isinstance(a, ast.Constant)}
    return change.match.target in options and change.match.unless not in options


__all__ = ["Hit", "parse", "scan_tree"]
