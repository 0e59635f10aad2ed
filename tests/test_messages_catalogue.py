"""compat_tables/messages.json: every message is recognised in its real instances, as itself
(not hidden by a message that replaces it), carries the facts it says it does, and is sourced
from public threads or documents, none of them held out for evaluation. A message is a family
of wordings (other libraries, other versions, translated locales): each wording is a pattern
with a real example it matches and the public thread it was seen in."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from envcheck.diagnose import explain, match_messages
from envcheck.diagnose.reading import Reading
from envcheck.facts import Facts
from envcheck.rules import RULES
from envcheck.tables import load_tables
from envcheck.tables.message_records import Wording
from envcheck.values import Arch

TABLES = load_tables()  # the shipped catalogue, not the frozen test tables
CATALOGUE = Path(__file__).resolve().parents[1] / "compat_tables" / "messages.json"
RAW = json.loads(CATALOGUE.read_text(encoding="utf-8"))["messages"]  # the wordings as written

HELD_OUT = Path(__file__).resolve().parents[2] / "shared" / "reference" / "held-out-threads.txt"
THREAD = re.compile(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)$")


def test_catalogue_size_and_examples() -> None:
    assert len(TABLES.messages) >= 70
    assert all(m.examples for m in TABLES.messages), [
        m.id for m in TABLES.messages if not m.examples
    ]


@pytest.mark.parametrize("rule", TABLES.messages, ids=lambda m: m.id)
def test_each_example_is_recognised_as_its_message(rule) -> None:
    for example in rule.examples:
        found = explain(example, TABLES)
        assert found is not None, example
        names = [f.name for f in found.findings]
        by_id = {m.id: m for m in TABLES.messages}
        hidden_by = [n for n in names if rule.id in by_id[n].replaces]
        assert rule.id in names or hidden_by, (rule.id, names)


@pytest.mark.parametrize("raw", [m for m in RAW if m.get("wordings")], ids=lambda m: m["id"])
def test_each_wording_matches_its_example_and_cites_a_thread(raw) -> None:
    for wording in raw["wordings"]:
        pattern, example = re.compile(wording["pattern"]), wording["example"]
        assert pattern.search(example) or pattern.search(re.sub(r"\s+", " ", example)), example
        assert example in raw["examples"], example  # so it is recognised as this family, too
        assert THREAD.match(wording["source"]), wording["source"]
        assert wording["source"] in raw["sources"], wording["source"]


def test_a_family_carries_every_wording_and_its_languages() -> None:
    by_id = {m.id: m for m in TABLES.messages}
    for raw in RAW:
        rule = by_id[raw["id"]]
        written = [raw["pattern"], *(w["pattern"] for w in raw.get("wordings", []))]
        assert [p.pattern for p in rule.patterns] == list(dict.fromkeys(written))
        assert rule.pattern is rule.patterns[0]
        langs = [raw.get("lang", "en"), *(w["lang"] for w in raw.get("wordings", []))]
        assert rule.langs == tuple(dict.fromkeys(langs))
    assert {"zh", "ru"} <= {lang for m in TABLES.messages for lang in m.langs}


def test_each_built_in_wording_compiles_with_the_flags_read_from_its_source() -> None:
    """The built-in catalogue is compiled here, not when envcheck reads it (its wordings
    compile on first use: tables.message_records.Wording): each compiles, and the flags its
    literal tests read before that are the compiler's."""
    checked = 0
    for rule in load_tables().messages:
        for wording in rule.patterns:
            assert wording.flags == re.compile(wording.pattern).flags, (rule.id, wording)
            checked += 1
    assert checked > 200
    for source in ("x", "(?m)^x$", "(?i)(?s)a.b", "(?a)x", "(?ix)a b", "(?i:x)y", "(?L)x"):
        flags = re.compile(source.encode()).flags if "L" in source else re.compile(source).flags
        assert Wording(source).flags == flags, source


def test_a_paste_compiles_only_the_wordings_whose_literal_it_holds() -> None:
    tables = load_tables()  # its own catalogue: no wording of it compiled yet
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    found = explain(text, tables)
    assert found is not None and "no-kernel-image" in [f.name for f in found.findings]
    wordings = [w for m in tables.messages for w in m.patterns]
    compiled = [w for w in wordings if w._compiled is not None]
    assert any("no kernel image" in w.pattern for w in compiled)
    assert 0 < len(compiled) <= len(wordings) // 10, [w.pattern for w in compiled]


def test_a_translated_wording_is_the_same_family() -> None:
    english = (
        "ImportError: DLL load failed while importing _C: The specified module could not be found."
    )
    german = "ImportError: DLL load failed while importing _C: Das angegebene Modul wurde nicht gefunden."
    for text in (english, german):
        assert "windows-dll-load-failed" in [f.name for f in explain(text, TABLES).findings]


def test_a_wording_without_a_group_carries_no_fact() -> None:
    """A fact's group that only another wording has carries nothing (not its name as a
    literal value); a literal value is carried by every wording."""
    rule = dataclasses.replace(
        TABLES.messages[0],
        pattern=Wording(r"needs torch (?P<tv>\d\.\d)"),
        patterns=(Wording(r"needs torch (?P<tv>\d\.\d)"), Wording(r"braucht torch")),
        extracts={"torch_version": "tv", "os": "Linux"},
        replaces=(),
        cases=(),
    )
    tables = dataclasses.replace(TABLES, messages=(rule,))
    for text, version in (("needs torch 2.1", "2.1"), ("braucht torch", None)):
        reading = Reading(facts=Facts(source="message"))
        assert [f.name for f in match_messages(text, tables, reading)] == [rule.id]
        assert reading.facts.torch.version == version
        assert reading.facts.system.os == "Linux"


# A pattern whose match may start with a repeated class (`[\w.-]{1,160}\.whl`) is tried for
# up to that many characters at every position of the text: 280 searches of a pasted 600 kB
# line took 5 s. A lookbehind that the start must follow (`(?<![\w.-])`) makes it linear.
_LEADING_REPEAT = re.compile(
    r"^(?:\(\?P<\w+>|\(\?:)*(?:\[(?:\\.|[^\]])+\]|\\[wWsSdD]|\.)(?:\{\d*,?\d+\}|[*+])"
)


@pytest.mark.parametrize("rule", TABLES.messages, ids=lambda m: m.id)
def test_no_pattern_starts_with_an_unanchored_repeat(rule) -> None:
    for pattern in rule.patterns:  # every wording of the family
        source = pattern.pattern
        for branch in top_level_branches(source) if not source.startswith("(?<") else []:
            assert not _LEADING_REPEAT.match(branch), (rule.id, branch[:60])


def top_level_branches(source: str) -> list:
    """The alternatives of a pattern's top level (a `|` inside a group or a class is not one)."""
    branches, depth, in_class, start, i = [], 0, False, 0, 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if source[i + 1 : i + 2] == "]":  # "[]...]": the first ] is a member
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            branches.append(source[start:i])
            start = i + 1
        i += 1
    return [*branches, source[start:]]


def test_the_repeat_check_sees_the_slow_shapes() -> None:
    assert _LEADING_REPEAT.match(r"(?P<wheel>[\w.+%-]{1,160}\.whl) is not")
    assert _LEADING_REPEAT.match(r"(?P<path>[^\s'\"]{0,200}/bin/nvcc)")
    assert _LEADING_REPEAT.match(r".{1,80}? GPU")
    assert not _LEADING_REPEAT.match(r"DataLoader worker \(pid[^)]{0,200}\)")
    assert top_level_branches(r"a(?:b|c)[|]d|\|e|f") == [r"a(?:b|c)[|]d", r"\|e", "f"]


@pytest.mark.parametrize("rule", TABLES.messages, ids=lambda m: m.id)
def test_follows_and_replaces_name_real_things(rule) -> None:
    ids = {m.id for m in TABLES.messages}
    assert set(rule.replaces) <= ids
    assert set(rule.follows) <= set(RULES)
    assert rule.id not in rule.replaces


def test_no_held_out_thread_is_a_source() -> None:
    if not HELD_OUT.is_file():
        pytest.skip("the held-out list is not beside this checkout")
    held = {line.strip() for line in HELD_OUT.read_text().splitlines() if "#" in line[1:]}
    cited = set()
    wordings = [w["source"] for m in RAW for w in m.get("wordings", [])]
    for source in [s for rule in TABLES.messages for s in rule.sources] + wordings:
        match = THREAD.match(source)
        if match:
            cited.add(f"{match.group(1)}#{match.group(2)}")
    assert cited, "no message cites a public thread"
    assert not cited & held, sorted(cited & held)


def test_a_specific_message_hides_the_generic_one() -> None:
    text = (
        "ImportError: /opt/venv/lib/python3.10/site-packages/torchvision/_C.so: "
        "undefined symbol: _ZN3c1017RegisterOperatorsD1Ev"
    )
    names = [f.name for f in explain(text, TABLES).findings]
    assert names == ["torchvision-undefined-symbol"]
    other = "ImportError: /x/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at5emptyEv"
    found = explain(other, TABLES)
    assert [f.name for f in found.findings] == ["extension-undefined-symbol"]


def test_messages_carry_their_facts() -> None:
    text = (
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 "
        "sm_70 sm_75 sm_80 sm_86 sm_90."
    )
    facts = explain(text, TABLES).facts
    assert facts.nvidia.gpus[0].name == "NVIDIA GeForce RTX 5090"
    assert facts.nvidia.gpus[0].compute_capability == "12.0"
    assert facts.torch_runtime.arch_list[-1] == Arch.parse("sm_90")
    mixed = explain(
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA "
        "versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8.",
        TABLES,
    ).facts
    assert mixed.torch.cuda == "11.7"
    xf = explain(
        "xFormers was built for:\n    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)",
        TABLES,
    ).facts
    assert xf.torch.version == "2.2.0+cpu"


@pytest.mark.parametrize(
    "text, meaning",
    [
        (
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
            "current PyTorch installation.",
            "Blackwell GPU",
        ),
        (
            "NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible with the "
            "current PyTorch installation.",
            "dropped this older GPU",
        ),
        (
            "OS: macOS 14.2.1 (arm64)\nPyTorch version: 2.2.0\n"
            "AssertionError: Torch not compiled with CUDA enabled",
            "device 'mps'",
        ),
        (
            "NVIDIA-SMI 470.141.03   Driver Version: 470.141.03   CUDA Version: 11.4\n"
            "CudaWarning: Found no NVIDIA driver on your system.",
            "cannot reach it",
        ),
    ],
)
def test_the_same_words_mean_another_cause_by_the_other_facts(text: str, meaning: str) -> None:
    from envcheck.diagnose import diagnose_text

    fixes = [f.fix for f in diagnose_text(text, TABLES).findings if f.code == "MSG001"]
    assert any(meaning in fix for fix in fixes), fixes


def test_without_the_other_facts_the_general_meaning_stands() -> None:
    found = explain("Found no NVIDIA driver on your system.", TABLES).findings[0]
    assert "no NVIDIA driver is loaded where it runs" in found.fix
