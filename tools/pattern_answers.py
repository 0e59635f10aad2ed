"""Work out ahead what diagnose asks of its patterns, into envcheck/diagnose/pattern_answers.json.

    python tools/pattern_answers.py          # write the file
    python tools/pattern_answers.py --check  # exit 1 when the file differs from the questions

Before searching a long paste, diagnose asks each pattern it searches what literals every
match holds or starts with, how far a match reaches, whether it needs the text's lines
(envcheck/diagnose/literals.py and scanning.py). The answers follow from the pattern alone,
but working them out reads the pattern with Python's own parser: about 30 ms of the first
read of a long paste. So they are worked out here, for every wording of the built-in message
catalogue and every pattern a diagnose module defines, and a run reads them from the file
(a pattern that is not in it, such as a wording of a catalogue given with ``--tables``, is
answered as it is asked). The test suite runs ``--check``: a changed wording, pattern or
question fails it until the file is written again.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import envcheck.diagnose
from envcheck._patterns import LazyPattern
from envcheck.diagnose import literals
from envcheck.tables import load_tables

# scanning's questions read a compiled pattern; the rest read any source and its flags
COMPILED_ONLY = {"leading_literals", "inner_literals", "_reach", "_at_line_starts"}


def module_patterns() -> Iterator[re.Pattern[str]]:
    """Every str pattern a diagnose module holds (compiled, or to be compiled on first use),
    alone or inside its tuples, lists and dicts (labelled's values, mentions' signs)."""
    for info in pkgutil.iter_modules(envcheck.diagnose.__path__):
        module = importlib.import_module(f"envcheck.diagnose.{info.name}")
        yield from _held(list(vars(module).values()))


def _held(values: List[Any]) -> Iterator[re.Pattern[str]]:
    for value in values:
        if isinstance(value, LazyPattern):  # compiled here, as a reader's first use does
            yield cast("re.Pattern[str]", value)
        elif isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from _held(list(value))
        elif isinstance(value, dict):
            yield from _held(list(value.values()))


def answers() -> Dict[str, Dict[str, Any]]:
    """Each pattern's key (literals.PerPattern.key), and the answer of every question asked
    ahead: the catalogue's wordings, as read and compiled, and the modules' patterns."""
    sources: List[Any] = []
    for rule in load_tables().messages:
        for wording in rule.patterns:
            sources += [wording, wording.compiled]
    sources += list(module_patterns())
    out: Dict[str, Dict[str, Any]] = {}
    for source in sources:
        key = literals.PerPattern.key(source)
        for name, question in sorted(literals.AHEAD.items()):
            if name in COMPILED_ONLY and not isinstance(source, (re.Pattern, LazyPattern)):
                continue
            answer = question.question(source)  # worked out, never read from the file
            out.setdefault(key, {})[name] = list(answer) if isinstance(answer, tuple) else answer
    return dict(sorted(out.items()))


def text() -> str:
    """The file: one pattern a line (a change to a pattern is a change to its line)."""
    lines = [
        json.dumps(key, ensure_ascii=False)
        + ": "
        + json.dumps(answer, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        for key, answer in answers().items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> int:
    wanted = text()
    if "--check" in sys.argv[1:]:
        have = literals.ANSWERS.read_text(encoding="utf-8") if literals.ANSWERS.exists() else ""
        if have != wanted:
            print(f"{literals.ANSWERS} differs from the questions: run tools/pattern_answers.py")
            return 1
        print(f"{literals.ANSWERS}: up to date")
        return 0
    literals.ANSWERS.write_text(wanted, encoding="utf-8")
    print(f"wrote {literals.ANSWERS} ({len(wanted)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
