"""Text that fits the terminal: one place decides the width, one wraps prose, one wraps
commands, for every text renderer (report, probe, install plan, smoke, explain, tables).

Prose breaks only at spaces: a word, a version or a path is never split, so a token
longer than the width stands alone on its line. A shell command longer than the width is
continued with `` \\`` at a token boundary, so it can still be copied and pasted as is
(tests/test_text_width.py runs the wrapped command through bash and compares argv).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import textwrap
from typing import List, Mapping, Optional

MIN_WIDTH = 30  # below this nothing reads well; lines may then run over
MAX_WIDTH = 100  # prose wider than this is harder to read, however wide the terminal


def terminal_width(environ: Optional[Mapping[str, str]] = None) -> int:
    """``COLUMNS`` when set to a number, else the terminal's width, else 100; kept within
    30 to 100 columns."""
    env = os.environ if environ is None else environ
    raw = env.get("COLUMNS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        columns = int(raw)
    else:
        columns = shutil.get_terminal_size((MAX_WIDTH, 24)).columns
    return max(MIN_WIDTH, min(MAX_WIDTH, columns))


def command_width(width: int, environ: Optional[Mapping[str, str]] = None) -> int:
    """The width to continue commands at: ``width`` on a terminal or when COLUMNS is set,
    else unbounded, so that a script reading the output (``envcheck install | tail -n 1``)
    gets each command on one line."""
    env = os.environ if environ is None else environ
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    return width if tty or env.get("COLUMNS", "").strip().isdigit() else 10**9


def wrap(text: str, width: int, first: str = "", rest: Optional[str] = None) -> List[str]:
    """``text`` in lines of at most ``width`` columns, broken at spaces only. The first line
    starts with ``first``, the others with ``rest`` (default: as many spaces as ``first``);
    the text's own line breaks are kept."""
    rest = " " * len(first) if rest is None else rest
    lines: List[str] = []
    for i, paragraph in enumerate(text.splitlines() or [""]):
        lead = first if i == 0 else rest
        lines += textwrap.wrap(
            paragraph,
            width=max(width, len(lead) + 1),
            initial_indent=lead,
            subsequent_indent=rest,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [lead.rstrip()]
    return lines


def _is_shell(line: str) -> bool:
    """A line of a shell command, not of a file snippet (requirements.txt, TOML): only a
    shell command may be continued with a backslash."""
    head = line.split(None, 1)[0] if line.strip() else ""
    if not head or head.startswith(("-", "[", "#")) or " = " in line:
        return False
    return head in ("pip", "pip3", "uv", "conda", "mamba", "micromamba") or os.path.basename(
        head.strip("'\"")
    ).startswith(("python", ".venv"))


def command_lines(command: str, width: int, first: str = "$ ", rest: str = "  ") -> List[str]:
    """A command as printed under a finding or a plan: each line of it that is longer than
    ``width`` and is a shell command goes on over several lines, broken between arguments
    and ended with `` \\``; pasted into a POSIX shell, it runs as the one-line command would."""
    out: List[str] = []
    for n, line in enumerate(command.splitlines() or [""]):
        lead = first if n == 0 else rest
        if len(lead) + len(line) <= width or not _is_shell(line):
            out.append(lead + line)
            continue
        lexer = shlex.shlex(line, posix=False)
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
        current, empty = lead, True
        for token in tokens:
            if not empty and len(current) + 1 + len(token) + 2 > width:
                out.append(current + " \\")
                current = rest + "  " + token
            else:
                current = current + ("" if empty else " ") + token
            empty = False
        out.append(current)
    return out


def join_fitting(parts: List[str], width: int, sep: str, rest: str = "  ") -> List[str]:
    """``parts`` joined by ``sep`` on as few lines of at most ``width`` columns as they fit,
    never breaking inside a part (a header's "torch 2.13.0+cpu", "driver 550.54.14")."""
    lines: List[str] = []
    current = ""
    for part in parts:
        if not current:
            current = part
        elif len(current) + len(sep) + len(part) <= width:
            current += sep + part
        else:
            lines.append(current)
            current = rest + part
    if current:
        lines.append(current)
    return lines


def heading(title: str, parts: List[str], width: int) -> List[str]:
    """``title  part · part · ...`` on as few lines as fit: the title, two spaces, then the
    parts joined by `` · ``, continued on indented lines, never breaking inside a part."""
    if not parts:
        return [title]
    first = f"{title}  {parts[0]}"
    if len(first) <= width:
        return join_fitting([first, *parts[1:]], width, " · ")
    return [title, *join_fitting(["  " + parts[0], *parts[1:]], width, " · ")]
