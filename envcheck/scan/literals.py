"""Uses of changed APIs in C/C++/CUDA sources and launch scripts: literals outside comments.

C++ has no parser here (an extension's headers need the compiler's include paths); what
breaks an old extension is spelled literally (``#include <THC/THC.h>``, ``AT_CHECK(``,
``.data<float>()``), so a literal, optionally narrowed by a pattern on its line, is the
use. Comments are blanked first, keeping every offset, so a line number is the file's.
"""

from __future__ import annotations

import bisect
import re
from typing import List, Sequence

from ..tables.code_changes import Change
from .python_code import Hit

# A C comment to its end, or to the end of the file when it is never closed (one attempt
# from each start: linear); a line comment to the end of its line.
_C_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*", re.S)
_SHELL_COMMENT = re.compile(r"^[ \t]*#[^\n]*", re.M)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def without_comments(text: str, cpp: bool) -> str:
    """``text`` with its comments turned into spaces (newlines kept): same offsets."""
    return (_C_COMMENT if cpp else _SHELL_COMMENT).sub(_blank, text)


def scan_text(text: str, changes: Sequence[Change], cpp: bool) -> List[Hit]:
    """Every use of ``changes`` (literal matches) in ``text``, comments left out."""
    if not changes:
        return []
    clean = without_comments(text, cpp)
    starts = [0] + [m.end() for m in re.finditer("\n", clean)]
    hits: List[Hit] = []
    for change in changes:
        match = change.match
        for found in re.finditer(match.needle_regex, clean):
            index = bisect.bisect_right(starts, found.start()) - 1
            if match.pattern is not None:
                end = clean.find("\n", starts[index])
                line = clean[starts[index] : end if end >= 0 else len(clean)]
                if match.pattern.search(line) is None:
                    continue
            hits.append((change, index + 1, found.start() - starts[index] + 1))
    return hits


__all__ = ["scan_text", "without_comments"]
