"""Reading a command's usual command line without click, for the commands that run often.

Importing click costs a static check or a healthcheck a fifth of its run. So the console
script (envcheck._entry) reads the command lines people type nearly every time (a few
options, each once, each value plainly valid) with :func:`read`, and leaves every other one
to the command's click command, which reads it and says what is wrong: one parser decides
anything unusual. Each caller's tests hold that both read a plain command line alike.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's own: see envcheck._stdout
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

    # option -> (keyword, value): an option that takes no value
    Flags = Mapping[str, Tuple[str, Any]]
    # option -> (keyword, reader): the reader's value, or None when it is not plainly valid
    Values = Mapping[str, Tuple[str, Callable[[str], Any]]]


class UsageProblem(Exception):
    """What the user asked cannot be done as asked, found while running (a bad config, an
    override or interpreter that cannot be used, options that conflict): a usage error, exit
    2. The click command says it as click says any usage error; a plain command line hands
    it to click, which reads the line again and says it (nothing has been written then)."""


def read(
    args: Sequence[str],
    flags: Flags,
    values: Values,
    repeatable: Sequence[str] = (),
    argument: Optional[str] = None,
) -> Optional[Dict[str, Any]]:
    """The keywords ``args`` give, or None where click must read them: an option not in
    ``flags`` or ``values`` (``--help`` among them), a flag given a value, a value missing,
    starting with "-" or not plainly valid, a keyword given twice (click keeps the last;
    ``--deep --no-deep`` is one keyword twice), or an argument where none is taken. A keyword
    in ``repeatable`` collects its values in a tuple, as click's ``multiple=True`` does.
    ``argument``: the keyword of the command's one argument (``diagnose FILE|-``), which
    must then be there, once: a word that is no option, or "-" alone."""
    options: Dict[str, Any] = {}
    rest = list(args)
    while rest:
        word = rest.pop(0)
        if argument is not None and (word == "-" or not word.startswith("-")):
            if argument in options:
                return None
            options[argument] = word
            continue
        name, equals, inline = word.partition("=")
        if name in flags and not equals:
            key, value = flags[name]
        elif name in values:
            text = inline if equals else (rest.pop(0) if rest else "")
            key, reader = values[name]
            value = reader(text) if text and not text.startswith("-") else None
            if value is None:
                return None
        else:
            return None
        if key in repeatable:
            value = (*options.get(key, ()), value)
        elif key in options:
            return None
        options[key] = value
    if argument is not None and argument not in options:
        return None
    return options


def decimal(text: str) -> Optional[float]:
    """``text`` as a number when it is plainly one: ASCII digits, an optional fraction
    (``2``, ``2.5``, ``7.``). Exponents, signs, spaces, ``nan`` and other digits are left to
    click."""
    whole, _, fraction = text.partition(".")
    if not (text.isascii() and whole.isdigit()) or (fraction and not fraction.isdigit()):
        return None
    return float(text)


def whole(text: str) -> Optional[int]:
    """``text`` as a count when it is plainly one: ASCII digits only."""
    return int(text) if text.isascii() and text.isdigit() else None
