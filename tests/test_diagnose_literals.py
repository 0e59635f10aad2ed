"""The literal test before each catalogue wording (envcheck.diagnose.literals) never hides a
match: every example of every wording contains one of its required literals."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.diagnose.literals import required_literals
from envcheck.tables import load_tables

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def literal_search(monkeypatch):
    """The scanning module's own search for every text, however short: the texts below are
    short, and a text of at most scanning.DIRECT characters is searched by the engine whole."""
    from envcheck.diagnose import scanning

    monkeypatch.setattr(scanning, "DIRECT", 0)


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
                if not (pattern.compiled.search(example) or pattern.compiled.search(flat)):
                    continue
                literals = required_literals(pattern)
                if literals is None:
                    continue
                fold = bool(pattern.flags & re.IGNORECASE)
                hays = [h.lower() if fold else h for h in (example, flat)]
                assert any(x in h for x in literals for h in hays), (rule.id, literals, example)
                checked += 1
    assert checked > 200


def test_a_scan_from_the_leading_literals_finds_what_finditer_finds(literal_search) -> None:
    from envcheck.diagnose import mentions
    from envcheck.diagnose.scanning import first, leading_literals, scan

    gpu = mentions._GPU_MENTION
    starts = leading_literals(gpu)
    assert starts is not None and "rtx" in starts
    # a pattern that starts with its literal is the engine's own fast case: no help
    assert leading_literals(re.compile(r"No matching distribution")) is None
    assert leading_literals(re.compile(r"\b(?:ab|cd)ef|[12]x")) == ("1x", "2x", "abef", "cdef")
    assert leading_literals(re.compile(r"\d+ apples|pears")) is None  # \d+: anything
    # a group that ignores case: its starts are lower case, found in the lowered text
    scoped = re.compile(r"(?i:address already in use)|EADDRINUSE")
    assert leading_literals(scoped) == ("address ", "eaddrinu")
    mixed = "x ADDRESS Already In Use, EADDRINUSE, eaddrinuse, Address already in use\n" * 3
    assert [m.span() for m in scan(scoped, mixed)] == [m.span() for m in scoped.finditer(mixed)]
    text = (
        "2x RTX 4090, nvidia  geforce rtx 3060ti and an rtx3090; rtxa"
        " RTX 2080 Ti \u0131 Tesla V100\n" * 3
    )
    for t in (text, text.replace("\u0131", ""), text.upper(), text[:-7], "İ" + text):
        for end in (None, 40, len(t) - 3):
            want = [m.span() for m in gpu.finditer(t[:end] if end is not None else t)]
            assert [m.span() for m in scan(gpu, t, end)] == want
        found, searched = first(gpu, t), gpu.search(t)
        assert (found.span() if found else None) == (searched.span() if searched else None)


def test_a_scan_over_the_stretches_around_inner_literals_finds_what_finditer_finds(
    literal_search,
) -> None:
    from envcheck.diagnose import mentions
    from envcheck.diagnose.scanning import inner_literals, leading_literals, scan, search

    arch = mentions._ARCH_OF
    assert leading_literals(arch) is None
    assert inner_literals(arch) == ("aarch64", "arm64", "x86-64", "x86_64")
    assert inner_literals(re.compile(r"\d+ (ab|cd)")) is None  # too short to help
    text = (
        "an aarch64 machine, my ARM64 Server; a x86-64\nhost and the x86_64 cpus,"
        " this arm64\tlinux; an\narm64 board the aarch64 machine\u0131 " + "x" * 300 + "\n"
    ) * 40
    dense = "an arm64 box " * 9000  # literals closer than a stretch: the engine's own search
    for t in (text, text.replace("\u0131", ""), text.upper(), "İ" + text, dense):
        for end in (None, 45, len(t) - 3):
            want = [m.span() for m in arch.finditer(t[:end] if end is not None else t)]
            assert [m.span() for m in scan(arch, t, end)] == want
        found, searched = search(arch, t), arch.search(t)
        assert (found.span() if found else None) == (searched.span() if searched else None)


def test_every_label_alias_is_lower_case() -> None:
    """labelled.py finds the labels in a lower-cased line with the pattern case kept."""
    from envcheck.diagnose.labelled import FACTS

    for fact in FACTS:
        bare = re.sub(r"\\.", "", fact.aliases)  # \S, \W, \D would mean something else
        assert bare == bare.lower(), fact.key


def test_a_labels_group_number_names_its_fact() -> None:
    """labelled.py reads which fact a label is of from the match's last group (fact i's
    alias is group i + 1): no alias may capture."""
    from envcheck.diagnose.labelled import (
        _LABELS_LOWER,
        FACTS,
        _labelled_lines,
        _labels_ignoring_case,
    )

    assert _LABELS_LOWER.groups == _labels_ignoring_case().groups == len(FACTS)
    for i, fact in enumerate(FACTS):
        assert re.compile(fact.aliases).groups == 0, fact.key
        assert _LABELS_LOWER.groupindex[f"f{i}"] == i + 1
    for line, key in (
        ("Python: 3.10", "python.version"),
        ("torch 2.1.0", "torch.version"),
        ("Driver Version: 535.54", "nvidia.driver_version"),
    ):
        ((_, _, _, ((index, _, _),)),) = _labelled_lines(line)
        assert FACTS[index].key == key, line


def _accepts_line_break(items: object) -> bool:
    """Whether some part of a parsed pattern (the engine's own parser's items) may take a
    line break: a class, a negated character, any character under re.S."""
    from envcheck.diagnose.scanning import _sre

    nl = ord("\n")
    for op, av in items:  # type: ignore[attr-defined]
        if op is _sre.NOT_LITERAL and av != nl:
            return True
        if op is _sre.ANY:
            return True  # the labels are compiled without re.S: no alias uses "."
        if op is _sre.IN:
            probe = re.compile(_class_source(av))
            if probe.match("\n"):
                return True
        for inner in _bodies(op, av):
            if _accepts_line_break(inner):
                return True
    return False


def _bodies(op: object, av: object) -> list:  # type: ignore[type-arg]
    from envcheck.diagnose.scanning import _sre

    if op is _sre.SUBPATTERN:
        return [av[3]]  # type: ignore[index]
    if op is _sre.BRANCH:
        return list(av[1])  # type: ignore[index]
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
        return [av[2]]  # type: ignore[index]
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        return [av[1]]  # type: ignore[index]
    return []


def _class_source(items: object) -> str:
    """A parsed class written back as a pattern, to ask the engine what it takes."""
    from envcheck.diagnose.scanning import _sre

    parts, negate = [], ""
    categories = {
        _sre.CATEGORY_SPACE: r"\s",
        _sre.CATEGORY_NOT_SPACE: r"\S",
        _sre.CATEGORY_DIGIT: r"\d",
        _sre.CATEGORY_NOT_DIGIT: r"\D",
        _sre.CATEGORY_WORD: r"\w",
        _sre.CATEGORY_NOT_WORD: r"\W",
    }
    for op, av in items:  # type: ignore[attr-defined]
        if op is _sre.NEGATE:
            negate = "^"
        elif op is _sre.LITERAL:
            parts.append(re.escape(chr(av)))
        elif op is _sre.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        else:
            parts.append(categories[av])
    return f"[{negate}{''.join(parts)}]"


def test_no_label_reads_past_its_line() -> None:
    """labelled._labelled_lines searches the lines joined by line breaks: the labels of a
    line are the same as a search of that line alone only when no alias takes one."""
    from envcheck.diagnose.labelled import FACTS
    from envcheck.diagnose.scanning import _sre

    assert _accepts_line_break(_sre.parse(r"a\s?b")) and _accepts_line_break(_sre.parse("[^)]"))
    assert not _accepts_line_break(_sre.parse(r"a[^\S\n]?b(?: \([^)\n]{0,4}\))?\w"))
    for fact in FACTS:
        assert not _accepts_line_break(_sre.parse(fact.aliases)), fact.key


def test_the_labels_of_joined_lines_are_each_lines_own() -> None:
    """The labels _labelled_lines finds in the lines joined are those the pattern finds in
    each plain line alone, preceded by a line break (the start of a line leads a label)."""
    import random

    from envcheck.diagnose.labelled import (
        _LABELS_LOWER,
        _labelled_lines,
        _labels_ignoring_case,
        _plain,
    )

    words = ["Python", "torch", "PyTorch version", "CUDA", "driver", "GPU", "os", "OS:", "İ",
             "\u0131", "**", "`", "| x |", "==", "2.1.0", "3.11", "535.54", " ", ": ", "\t",
             "- ", "### ", "nvidia driver version", "x", "py ver", "how you installed pytorch (",
             ")", "\n", "  File \"", "显卡", "_"]  # fmt: skip
    rng = random.Random(7)
    for _ in range(400):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(1, 40)))
        lines = text.split("\n")
        got = {number: labels for number, _, _, labels in _labelled_lines(text)}
        for number, line in enumerate(lines):
            if number not in got:
                continue
            plain = "\n" + _plain(line)
            low = plain.lower()
            moved = len(low) != len(plain) or "\u0131" in text or "\u017f" in text
            pattern = _labels_ignoring_case() if moved or "İ" in text else _LABELS_LOWER
            want = [
                (int(m.lastindex or 0) - 1, m.start(), m.end() - 1)
                for m in pattern.finditer(plain if pattern is not _LABELS_LOWER else low)
            ]
            assert got[number] == want, (text, line)


def test_the_labels_are_tried_only_where_an_alias_may_start() -> None:
    from envcheck.diagnose.labelled import _STARTS
    from envcheck.diagnose.scanning import prefixes

    assert _STARTS is not None and "tor" in _STARTS and "py" in _STARTS
    assert prefixes(r"(?:py)?torch|cuda\s?ver|os", 3) == ("cud", "os", "py", "tor")
    assert prefixes(r"\d+ gpus|gpu", 3) is None


def test_the_lines_with_a_label_word_are_those_a_search_of_each_line_finds() -> None:
    """labelled._worded_lines searches the lowered text once: the same lines as a search
    of each line lowered with the words one after another, whatever the case and letters."""
    from envcheck.diagnose.labelled import _LABEL_WORDS, _worded_lines

    plain = re.compile("|".join(_LABEL_WORDS))
    texts = [
        "",
        "\n\n",
        "PYTHON: 3.11\nnothing here\nOS: Linux\nmacOS\nchaos\nos",  # upper case, "os" in a word
        "pyth\u0131on\nPYTHON\u0131\n\u017fystem\nSYSTEM\n\u0130nstall\nKernel driver",  # dotless i, long s
        "x" * 20 + "\ntorch" + "y" * 9000 + "\ncuda",  # a line past MAX_LINE
        "ends with cu",  # cut short
        "sys.version\nsysXversion\n显卡: 4090\n\tinstalled",
        "os\nos.path\n/os\nwhatos\n",
    ]
    for text in texts:
        want = [n for n, line in enumerate(text.split("\n")) if plain.search(line.lower())]
        assert list(_worded_lines(text)) == want, text


def test_conda_subdirs_are_found_as_with_platform_in_either_case() -> None:
    """installers._SUBDIR spells "(?i:platform)" as P or p and the rest ignoring case, so the
    engine skips ahead to its first letters: the same matches as the plain wording."""
    from envcheck.diagnose.installers import _SUBDIR

    plain = re.compile(
        r"(?:(?i:platform)\s*:\s*|feature:\|?@?/|::|/)"
        r"(linux-64|linux-aarch64|osx-64|osx-arm64|win-64|win-32)\b"
    )
    texts = [
        "platform : linux-64\nPLATFORM:osx-arm64\nPlAtFoRm:\n  win-64",
        "conda-forge/linux-64::torch\npytorch::win-32x\nfeature:|@/osx-64 /linux-aarch64",
        "pl\u0131tform: linux-64\n\u0130PLATFORM: win-64 platform: linux-6",  # dotless i, cut short
        "/linux-64/linux-64::linux-64",
    ]
    for text in texts:
        want = [(m.span(), m.group(1)) for m in plain.finditer(text)]
        assert [(m.span(), m.group(1)) for m in _SUBDIR.finditer(text)] == want, text


def test_the_alternatives_of_one_group_are_searched_around_their_own_literals(
    literal_search,
) -> None:
    """inner_literals reads each alternative of a pattern that is one alternation alone, and
    search() takes the stretches when that needs fewer passes than the places a match starts:
    the same first match as the engine's search, whatever the case and letters."""
    from envcheck.diagnose.scanning import inner_literals, leading_literals, search

    cpu = re.compile(
        r"(?i:\b(?:got|gets|pulls?|installs?|installed) (?:the |a )?cpu[- ]?(?:only )?"
        r"(?:version|build|wheel) of (?:py)?torch\b|\b(?:is|was) (?:the |a )?cpu[- ]?"
        r"(?:version|build|wheel)(?: of (?:py)?torch)? by default\b)"
    )
    starts, inner = leading_literals(cpu), inner_literals(cpu)
    assert starts is not None and inner is not None and len(inner) < len(starts)
    assert " by defa" in inner
    assert inner_literals(re.compile(r"\bab\d|\bcd\d")) is None  # too short to help
    texts = [
        "pip GOT THE CPU VERSION OF PYTORCH; it is a cpu-only build by default\n" * 3,
        "the version of torch: it was the CPU wheel of torch by default",
        "it \u0131s a cpu build by default, installs a cpu wheel of torch",  # dotless i
        "gets the cpu build of torch\u017f and pulls the cpu build of pytorch",  # long s
        "\u0130 installed the cpu build of torch",  # a dotted capital I
        "got a cpu build of tor",  # cut short
        "version of torch " * 50 + "was a cpu build by default",
    ]
    for text in texts:
        found, searched = search(cpu, text), cpu.search(text)
        assert (found.span() if found else None) == (searched.span() if searched else None)


def test_the_lines_holding_a_word_are_those_a_test_of_each_line_finds() -> None:
    """reading.lines_holding finds the lines in one search of the (lowered) text: every line
    a test of each line finds, in order (every line where lowering moves letters)."""
    from envcheck.diagnose.reading import lines_holding

    texts = [
        "",
        "GPU 0: A100\n| 0 RTX |\nname, uuid\nNAME,Driver_Version\n\nLinux x 5.4 x86_64",
        "torch torch\ntriton\n\nTORCH\n|" + "x" * 9000 + "|\nends with tor",  # cut short
        "Windows 11\nW\u0130NDOWS 10\nmacos\nMACOS\nubuntu 22.04",  # a dotted capital I
        "\u0131 name\nNAME\n\u017f",  # dotless i, long s: every line
        "torchvision torch triton\ntorch\n\ntritontorch",  # several words, twice a line
    ]
    pieces = ["torch", "triton", "GPU", "|", "name", "NAME", "Linux ", "\n", " ", "x", "rtx"]
    rng = random.Random(7)
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    for text in texts:
        for words, lower in ((("|",), False), (("GPU", "Linux "), False), (("name",), True),
                             (("torch", "triton"), False), (("rtx", "windows", "macos"), True)):  # fmt: skip
            want = [
                n
                for n, line in enumerate(text.split("\n"))
                if any(w in (line.lower() if lower else line) for w in words)
            ]
            got = list(lines_holding(text, words, lower))
            assert set(want) <= set(got) and got == sorted(set(got)), (text, words)
            if "\u0131" not in text and "\u017f" not in text and "\u0130" not in text:
                assert got == want, (text, words)


def test_a_line_is_made_plain_as_the_markup_pattern_makes_it() -> None:
    """labelled._plain leaves the markup pattern out only where it cannot match: the same
    line as a substitution of every line."""
    from envcheck.diagnose.labelled import _MARKUP, _TABLE_ROW, _plain

    lines = [
        "plain text: 3.10", "**Python**: 3.10", "  - torch: 2.1", "+ item", "### Heading",
        "> quoted", ">>> torch.__version__", "In [3]: torch.__version__", "Intel CPU",
        "\u2003- em space bullet", "__init__", "`code`", "a_b c-d", "", "   ", "|a|b|",
        "| Python | 3.10 |", "\u0130n [1]: x",
    ]  # fmt: skip
    for line in lines:
        row = _TABLE_ROW.match(line)
        whole = f"{row.group(1).strip()}: {row.group(2).strip()}" if row else line
        assert _plain(line) == _MARKUP.sub("", whole).strip(), line


def test_a_pattern_at_line_starts_is_searched_as_the_engine_searches(literal_search) -> None:
    """scanning.search tries a pattern that starts with ^ only at the start of a text of one
    line (the flat text): the same match as the engine's search, with or without (?m)."""
    from envcheck.diagnose.scanning import search

    patterns = [
        re.compile(r"(?m)^\s*-\s(?:pytorch|torchvision)==[\d.]{1,12}=\w{6,40}\s*$"),
        re.compile(r"^\s*-\s(?:pytorch|torchvision)==[\d.]{1,12}"),
        re.compile(r"(?mi)^\s*TORCH\s"),
    ]
    texts = [
        "  - pytorch==2.1.0=py3.10_cuda11.8_cudnn8.7.0_0",
        "x - pytorch==2.1.0=py3.10_cuda11.8_cudnn8.7.0_0",  # not at the start
        "deps:\n  - torchvision==0.16.0=py310_cu118 \n",
        "torch \u0131 - pytorch==2.1",  # dotless i
        "",
        "  - pytorch==2.",  # cut short
    ]
    for pattern in patterns:
        for text in texts:
            found, searched = search(pattern, text), pattern.search(text)
            assert (found.span() if found else None) == (searched.span() if searched else None)


def test_a_short_text_is_searched_by_the_engine_without_reading_the_pattern() -> None:
    """Below scanning.DIRECT characters (a pasted report, most often) the engine searches
    the text whole: the same matches, and the pattern is never parsed for its literals."""
    from envcheck.diagnose import scanning

    pattern = re.compile(r"(?<![\w-])(?:rtx|gtx) ?\d{4}(?: ti)?(?![\w-])", re.IGNORECASE)
    text = "2x RTX 4090 and an rtx 3060 ti; gtx1080\n" * 20
    assert len(text) <= scanning.DIRECT
    assert [m.span() for m in scanning.scan(pattern, text)] == [
        m.span() for m in pattern.finditer(text)
    ]
    found = scanning.search(pattern, text)
    assert found is not None and found.span() == pattern.search(text).span()
    assert scanning._parsed.key(pattern) not in scanning._parsed.answers
    long = text * (scanning.DIRECT // len(text) + 1)  # past it: read for its literals
    assert [m.span() for m in scanning.scan(pattern, long)] == [
        m.span() for m in pattern.finditer(long)
    ]
    assert scanning._parsed.key(pattern) in scanning._parsed.answers


def test_a_text_is_cleaned_line_by_line() -> None:
    """reading.clean takes out what each line's own test finds: a fence line (a quoted one is
    kept: its fence is read after the quote marker is gone), one quote marker at a line's
    start, the white space a line ends with (a quote marker alone leaves an empty line)."""
    from envcheck.diagnose.reading import clean

    def by_line(text: str) -> str:
        lines = []
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            if re.match(r"^\s*(```|~~~)[\w-]*\s*$", line):
                continue
            lines.append((line[2:] if line.startswith("> ") else line).rstrip())
        return "\n".join(lines)

    texts = [
        "", "```", "a\n```", "```python\nx \n```\n", "> \n> x\n> > y", "> ```\n```  \n~~~sh",
        "a\x0c\nb\u2003\n\tc\t", "x\r\ny\rz", "`a` ~b~\n  ```  \n> q  ",
    ]  # fmt: skip
    pieces = ["```", "~~~", "> ", ">", "\n", " ", "\t", "`", "~", "x", "py", "\u2003"]
    rng = random.Random(3)
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(2000)]
    for text in texts:
        assert clean.__wrapped__(text) == by_line(text), repr(text)


def test_a_diagnosis_keeps_no_form_of_the_text_it_read() -> None:
    """The forms of a text its readers share (cleaned, lowered, cut into lines) are dropped
    when its diagnosis is done: a long paste diagnosed in a notebook is not held several
    times over for the life of the process."""
    from envcheck.diagnose import diagnose_text, reading

    text = "PyTorch version: 2.1.0+cu121\nIs CUDA available: True\n" + "x y z\n" * 5000
    diagnose_text(text, load_tables())
    for derived in (reading.clean, reading.lowered, reading.same_places_lowered, reading._lines):
        assert derived.cache_info().currsize == 0, derived


def test_the_answers_worked_out_ahead_are_the_questions_answers() -> None:
    """envcheck/diagnose/pattern_answers.json holds, for every catalogue wording and every
    pattern of a diagnose module, what each question asked ahead answers now: a changed
    wording, pattern or question fails here until tools/pattern_answers.py writes it again."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pattern_answers.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_question_answered_ahead_is_read_not_worked_out(monkeypatch, tmp_path) -> None:
    """A pattern in the file is answered from it (its parse never made); one that is not
    (a wording of a catalogue given with --tables) is worked out; with the file missing or
    broken, or the pattern's entry not one, every pattern is worked out, with the same
    answers. A wording shares its compiled pattern's key (the flags as a number)."""
    from envcheck.diagnose import literals, scanning

    wording = next(w.compiled for r in load_tables().messages for w in r.patterns)
    other = re.compile(r"(?<![\w-])nvidia-smi: not found in [a-z]{1,9}")
    asked: list = []
    for name, question in literals.AHEAD.items():
        monkeypatch.setattr(question, "answers", {})
        work = question.question
        monkeypatch.setattr(
            question, "question", lambda p, w=work, n=name: asked.append((n, p.pattern)) or w(p)
        )
    source = next(w for r in load_tables().messages for w in r.patterns)
    assert literals.PerPattern.key(source) == literals.PerPattern.key(wording)
    stored = {n: q(wording) for n, q in literals.AHEAD.items()}
    assert not asked  # all of them read
    assert scanning.leading_literals(other) == scanning._leading(other) is not None
    assert asked == [("leading_literals", other.pattern)]
    key = json.dumps(literals.PerPattern.key(wording))
    for broken in ("", "{not json", "[1, 2]", f"{{{key}: 5}}", f"{{{key}: {{}}}}"):
        (tmp_path / "answers.json").write_text(broken)
        monkeypatch.setattr(literals, "ANSWERS", tmp_path / "answers.json")
        literals._stored.cache_clear()
        for name, question in literals.AHEAD.items():
            question.answers.clear()
            assert question(wording) == stored[name], (broken, name)
    literals._stored.cache_clear()


def test_a_readers_pattern_is_compiled_on_first_use_and_answers_as_compiled() -> None:
    """diagnose's readers compile their patterns on first use (envcheck._patterns): importing
    them compiles none, and a pattern then answers every question as re.compile's does, its
    methods held as its own once compiled (no lookup through __getattr__ on a hot path)."""
    from envcheck._patterns import LazyPattern, compile_on_use

    code = (
        "import gc, envcheck.diagnose\n"
        "from envcheck._patterns import LazyPattern\n"
        "made = [o for o in gc.get_objects() if isinstance(o, LazyPattern)]\n"
        "print(len(made), sum(o._compiled is not None for o in made))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    made, compiled = map(int, run.stdout.split())
    assert made >= 100 and compiled == 0, run.stdout + run.stderr
    source, flags = r"(?P<name>torch|python)\s*(\d+\.\d+)", re.IGNORECASE
    lazy, eager = compile_on_use(source, flags), re.compile(source, flags)
    assert isinstance(lazy, LazyPattern) and lazy.pattern == source
    assert "match" not in vars(lazy)  # nothing compiled yet
    text = "Torch 2.1 and python 3.11; TORCH  1.13"
    assert lazy.search(text).span() == eager.search(text).span()  # type: ignore[union-attr]
    assert "match" in vars(lazy) and "finditer" in vars(lazy)
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in eager.finditer(text)]
    assert lazy.sub("x", text) == eager.sub("x", text)
    assert (lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        eager.flags,
        eager.groups,
        dict(eager.groupindex),
    )
    assert lazy.scanner(text).search().span() == eager.scanner(text).search().span()
    # the flags read from the source, before compiling, are the compiled pattern's: the key
    # of the answers worked out ahead is the same before and after
    sys.path.insert(0, str(ROOT / "tools"))
    from pattern_answers import module_patterns

    for made in module_patterns():
        assert made.flags == re.compile(made.pattern, made.flags).flags, made.pattern
