"""The literal test before each catalogue wording (envcheck.diagnose.literals) never hides a
match: every example of every wording contains one of its required literals."""

from __future__ import annotations

import re

from envcheck.diagnose.literals import required_literals
from envcheck.tables import load_tables


def test_the_literal_is_what_no_match_can_lack() -> None:
    assert required_literals(re.compile(r"No matching distribution found for (?P<r>\S+)")) == (
        "No matching distribution found for ",
    )
    # a group may be optional, a quantified character may be absent
    assert required_literals(re.compile(r"(?:CUDA )?errors? happened here")) == (" happened here",)
    # one literal per top-level alternative; none when an alternative has none
    assert required_literals(re.compile(r"DLL load failed|WinError 126")) == (
        "DLL load failed",
        "WinError 126",
    )
    assert required_literals(re.compile(r"DLL load failed|\d+")) is None
    assert required_literals(re.compile(r"Bus ERROR", re.IGNORECASE)) == ("bus error",)
    assert required_literals(re.compile(r"\(you have (\S+)\)")) == ("(you have ",)
    # a counted repeat's digits are not text: "\d{10,200}" holds no "10,200"
    assert required_literals(re.compile(r"ab\d{10,200}cd")) is None


def test_no_catalogue_example_lacks_its_wordings_literal() -> None:
    checked = 0
    for rule in load_tables().messages:
        for example in rule.examples:
            flat = re.sub(r"\s+", " ", example)
            for pattern in rule.patterns:
                if not (pattern.search(example) or pattern.search(flat)):
                    continue
                literals = required_literals(pattern)
                if literals is None:
                    continue
                fold = bool(pattern.flags & re.IGNORECASE)
                hays = [h.lower() if fold else h for h in (example, flat)]
                assert any(x in h for x in literals for h in hays), (rule.id, literals, example)
                checked += 1
    assert checked > 200
