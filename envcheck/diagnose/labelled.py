"""Facts as reporters type them: ``<label> <separator> <value>`` wherever it stands.

Issue templates (``### Python version`` with the value on the next line), ``Label: value``,
``label = value``, ``label value``, ``label is value``, table cells, markdown emphasis,
JSON and dict keys (``pip inspect``'s ``"python_full_version": "3.11.4"``), REPL and IPython
echoes (``>>> torch.__version__`` then ``'2.1.0+cu121'``), ``pip show`` blocks.

One alias list and one value grammar per fact (``FACTS``). This reader runs after the
format-specific readers and never overrides a fact they read: a different value is said as
a conflict. Values it finds for one fact that disagree (``torch 1.13`` in one sentence,
``torch 2.0.1`` in the next) are said, and the fact stays unknown: the reader never
chooses. A requirement (``torch==2.1.0``, ``torch>=2``) is what someone asked for, not what
is installed, and is never read as a fact. Linear in the input: each line (shorter than
``LONGEST`` characters) is scanned once for every label.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from .._patterns import compile_on_use
from .._record import record
from .gpu_names import gpu_name
from .into_facts import NAMES, compatible, os_family, put
from .reading import Reading, keeps_places, lines_matching, lines_of, lowered
from .scanning import prefixes

WHERE = "labelled facts"
MAX_FINDS = 20  # values kept per fact: a text that repeats one label a thousand times


@record(frozen=True)
class Fact:
    """A fact reporters state: the words that label it, and the grammar of its value."""

    key: str
    aliases: str  # a regular expression of the label's wordings (matched case-insensitively)
    value: str  # the value's grammar: group 1 is the value


_V3 = r"(\d{1,3}(?:\.\d{1,4}){1,3})"
_TORCH_V = r"(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?(?:(?:a|b|rc|\.dev|\.post)\d{0,8})?(?:\+[a-z0-9]{1,12}(?:\.[a-z0-9]{1,12}){0,3})?)"
COMPANIONS = (
    "torchvision",
    "torchaudio",
    "torchtext",
    "xformers",
    "flash[-_]attn",
    "triton",
    "mmcv(?:-full)?",
    "mmdet",
    "detectron2",
    "torch[-_]geometric",
    "torch[-_]scatter",
    "torch[-_]sparse",
    "torch[-_]cluster",
    "apex",
    "bitsandbytes",
    "deepspeed",
    "vllm",
)
FACTS: Tuple[Fact, ...] = (
    Fact(
        "python.version",
        r"python(?:[ _](?:full[ _])?versions?| env(?:ironment)?| venv)?|python_full_version"
        r"|py(?:thon)?[^\S\n]?ver(?:sion)?|sys\.version|platform\.python_version\(\)",
        r"\(?(?:python\s?)?(3\.\d{1,2}(?:\.\d{1,2}(?:rc\d|a\d|b\d)?)?|2\.7(?:\.\d{1,2})?)(?!\d|\.\d)",
    ),
    # before torch.version: "PyTorch has CUDA version 10.1" is torch's CUDA, and the
    # alternation takes the first label that matches where one starts
    Fact(
        "torch.cuda",
        r"cuda used to build pytorch|torch\.version\.cuda"
        r"|pytorch cuda(?: version)?|torch cuda(?: version)?|cudatoolkit|pytorch-cuda"
        r"|pytorch has cuda(?: version)?",
        r"(?:cuda\s?)?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)(?!\d|\.\d)",
    ),
    Fact(  # "Torch without CUDA version 2.1.2": a CPU-only build (into_facts adds its +cpu)
        "torch.cpu",
        r"(?:py)?torch without cuda(?: version)?|cpu(?:-only)? (?:version|build) of (?:py)?torch",
        r"(?:torch\s?|pytorch\s?)?" + _TORCH_V + r"(?!\d|\.\d)",
    ),
    Fact(
        "torch.version",
        r"(?:py)?torch(?:[ _]version)?|torch\.__version__|pytorch[^\S\n]?ver(?:sion)?",
        r"(?:torch\s?|pytorch\s?)?" + _TORCH_V + r"(?!\d|\.\d)",
    ),
    Fact(
        "companion",
        "|".join(COMPANIONS),
        r"(?:v)?" + _TORCH_V + r"(?!\d|\.\d)",
    ),
    Fact(
        "nvidia.driver_version",
        r"(?:nvidia[ -])?(?:gpu )?driver(?: version)?|nvidia[ -]driver(?:[ -]version)?",
        r"(\d{3}\.\d{1,3}(?:\.\d{1,3})?)(?!\d|\.\d)",
    ),
    Fact(
        "nvidia.cuda_driver_version",
        r"cuda driver(?: api)?(?: version)?|driver supports cuda|max(?:imum)? cuda(?: version)?",
        r"(?:cuda\s?)?(\d{1,2}\.\d{1,2})(?!\d|\.\d)",
    ),
    Fact(
        "toolkit.nvcc_version",
        r"nvcc(?: version)?|cuda toolkit(?: version)?|cuda compiler(?: version)?",
        r"(?:release\s?|v)?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)(?!\d|\.\d)",
    ),
    Fact(
        "cudnn",
        r"cudnn(?: version)?|torch\.backends\.cudnn\.version\(\)",
        r"(?:v)?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?|\d{4,6})(?!\d|\.\d)",
    ),
    Fact(  # "CUDA/cuDNN version: 10.0.130 / 7.3.1"
        "cudnn",
        r"cuda[^\S\n]?/[^\S\n]?cudnn(?: versions?)?",
        r"v?\d{1,2}\.\d{1,2}(?:\.\d{1,3})?\s?/\s?v?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)(?!\d|\.\d)",
    ),
    Fact(
        "nccl",
        r"nccl(?: version)?|torch\.cuda\.nccl\.version\(\)",
        r"\(?(\d\s?[.,]\s?\d{1,2}\s?[.,]\s?\d{1,2})\)?(?!\d|\.\d)",
    ),
    Fact(
        "gpu",
        r"gpus?(?: models?(?: and configuration)?| name| type| model)?|graphics card|video card"
        r"|device(?: name)?|gpu_name|torch\.cuda\.get_device_name\(\d?\)|显卡",
        r"((?:\d{1,2}\s?x\s?)?(?:nvidia |amd )?(?:[A-Za-z][\w -]{1,60}?|\d{4}\s?(?:ti|super)?))"
        r"(?=\s*(?:$|[,;(|]| with | and ))",
    ),
    Fact(
        "system.os",
        r"os|operating system|platform|system(?: info(?:rmation)?)?|os version|platform_system"
        r"|sys_platform|distro",
        r"((?:ubuntu|debian|centos|rocky|fedora|arch linux|rhel|red hat[\w ]{0,20}|opensuse"
        r"|linux mint|pop!_os|almalinux|amazon linux|wsl2?|windows|win(?:32|64|10|11)|macos"
        r"|mac os x|osx|darwin|linux)[\w .()/-]{0,40}?)(?=\s*(?:$|[,;|]| with | and | on ))",
    ),
    Fact(
        "system.machine",
        r"arch(?:itecture)?|platform_machine|machine|cpu architecture",
        r"(x86_64|x86-64|amd64|x64|aarch64|arm64|i686|i386)\b",
    ),
    Fact(
        "package_manager",
        r"(?:install(?:ed)?(?: only| just| all)? (?:via|with|using|by|through)|installed"
        r"|package manager|installer|how you installed pytorch(?: \([^)\n]{0,40}\))?"
        r"|how (?:you|did you) (?:tried to )?install(?:ed)?(?: [\w ]{1,60}?)? \([^)\n]{0,40}\))",
        r"(?:via |with |using |by )?(pip|uv|(?:ana|mini)?conda|mamba|micromamba|poetry|pipenv|pdm)\b",
    ),
)
_SEP = (
    r"(?:\s{0,3}\([^)\n]{0,30}\))?"  # "PyTorch version (GPU?)"
    r"(?:\s{0,3}(?:version|ver\.?))?"
    r"(?:\s(?:in|inside|on) (?:the|my|this|our) [\w-]{1,20}(?= is | was ))?"  # "... in the image is"
    r"['\"`*_]{0,3}\s{0,3}"
    r"(?:(?::=|->|=>|[:=|](?!=)|\bis\b|\bwas\b|\bof\b)\s{0,3})?"
    r"(?:version\s?[:=]\s?)?"  # sdnext's "Python: version=3.11.9"
    r"['\"`*_]{0,3}\s{0,2}"
)


def _by_first_letter(words: Sequence[str]) -> str:
    """The alternation of the words (each a pattern that starts with a literal letter) with
    those that share a first letter grouped under it: where a letter stands, the engine
    then tries only the words that start with it (a third faster over a long text)."""
    groups: Dict[str, List[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    return "|".join(
        letter + (rests[0] if len(rests) == 1 else f"(?:{'|'.join(rests)})")
        for letter, rests in groups.items()
    )


_ALIASES = "|".join(fact.aliases for fact in FACTS)
# what a label starts with: the engine tries the aliases only where one may start (most words
# start otherwise), else where a letter (or 显卡) does
_STARTS = prefixes(_ALIASES, 3)
_LABEL_START = (
    _by_first_letter([re.escape(start) for start in _STARTS])  # each starts with a letter
    if _STARTS and all(start[0].isalpha() for start in _STARTS)
    else r"[a-z\u663e]"
)
# A label starts a word (显卡 included): after a character no word goes on from, which the
# pattern takes too. Starting with that class, the engine skips to the few characters that
# may stand before a label; a lookbehind first has it try every character (a fifth slower).
# No alias reads past a line's end: the lines are searched joined (_labelled_lines).
_LABEL_LEAD = r"[^\w./=<>~!-]"
_LABELS_SOURCE = (
    rf"{_LABEL_LEAD}(?={_LABEL_START})(?:"
    + "|".join(f"(?P<f{i}>{fact.aliases})" for i, fact in enumerate(FACTS))
    + r")(?:(?![\w-]|\.[A-Za-z_])|(?<=python)(?=[23]\.\d))"  # "python3.7" too
)
# the labels in lower-cased lines, case kept: the engine ignoring case is the slower by half
# (every alias is written in lower case, as tests/test_diagnose_literals.py checks)
_LABELS_LOWER = compile_on_use(_LABELS_SOURCE)
_VALUES = [compile_on_use(_SEP + fact.value, re.IGNORECASE) for fact in FACTS]
# fact i's label is group i + 1 (the aliases capture nothing, as a test checks):
# match.lastindex names the fact
# what may stand before a value on the line after its label: IPython's Out[n], a REPL echo,
# pip show's "Version:", a bullet
_VALUE_LINE = compile_on_use(r"^\s*(?:[-*]\s+)?(?:Out\[\d{1,4}\]:\s*|version\s*:\s*)?", re.I)
_MARKUP = compile_on_use(r"\*\*|__|`|^\s*(?:[-*+]\s+|#{1,6}\s+|>{1,3}\s*|In \[\d{1,4}\]:\s*)")
# what a line with markup holds: one of _MARKUP's marks, or what its first mark after the
# white space starts with (the engine tries _MARKUP at every character: a line without these,
# most lines, needs no search)
_MARKUP_LEADS = ("-", "+", "#", ">", "I")
_TABLE_ROW = compile_on_use(r"^\s*\|([^|]{1,80})\|([^|]{1,120})\|\s*$")
_YOU_HAVE = compile_on_use(r"[^()\n]{0,60}\(you have ([^)\n]{1,40})\)")
# a word every label has: a line with none of them holds no label (a cheap test before the
# labels' pattern, which is the reader's cost). Every word starts with its first letter, not
# an assertion ("os" as a word is os\b(?<!\wos), not \bos\b): the engine then skips to a
# place where one of those letters stands instead of trying every word at every character.
_LABEL_WORDS = (
    "python", "torch", "cuda", "driver", "nvcc", "cudnn", "nccl", "gpu", "graphics", "video",
    "device", r"os\b(?<!\wos)", "operating", "platform", "system", "distro", "arch", "machine",
    "install", r"sys\.version", "显卡", "xformers", "flash", "triton", "mmcv", "mmdet",
    "detectron", "apex", "bitsandbytes", "deepspeed", "vllm",
)  # fmt: skip


_WORDS = compile_on_use(_by_first_letter(_LABEL_WORDS))
# lines that hold no label: a traceback's "File" line, pip's removals (what it takes away is
# not what is installed); and lines too long to be a label and its value
_SKIP = compile_on_use(
    r"\s*(?:File \"|Found existing installation|Uninstalling|Successfully uninstalled)"
)
LONGEST = 400  # characters: a longer line holds no label and its value
_REQUIREMENT = compile_on_use(r"\s{0,2}(?:[=<>~!]=|[<>])")
# "I have installed ... torch==2.1.1+cu118", "the version torch==2.4.0": a pin the reporter
# says is installed (a command's "pip install torch==2.1.1" is only asked for)
_INSTALLED_PIN = compile_on_use(
    r"(?:\b(?:I|I've|we|have|had)\b[^.;\n]{0,40}\b(?:re)?installed\b(?:[^.;\n]|\.\w){0,80}"
    r"|\b(?:the|my) versions?(?: is| are)?:?\s{0,2})$",
    re.I,
)
_EXACT_PIN = compile_on_use(r"\s{0,2}==\s{0,2}")
# what stands before a label whose value is not this machine's: "the torch which works for
# flash_attn is 2.6.0" (the value is the subject's), "if I go back to python 3.10" (another
# setup, not this one)
_NOT_THIS = compile_on_use(
    r"(?:\b(?:which|that)\s(?:only\s)?(?:works?|worked|is compatible|is built|was built)"
    r"\s(?:for|with)\b[^.,;\n]{0,20}"
    r"|\bif (?:I|you|we)\s(?:go back to|switch(?: back)? to|downgrade to|upgrade to|use|try)\s)$",
    re.I,
)
# a value replaced in the same sentence: "Python 3.8 is on a legacy build cycle, so I just
# installed 3.11" (the later one is what the machine has)
_REPLACED = compile_on_use(
    r"[^.;\n]{0,60}?\b(?:so|and|then)\s(?:I\s)?(?:just\s|then\s)?"
    r"(?:installed|switched to|upgraded to|downgraded to|moved to)\s",
    re.I,
)
# a second manager named with the first ("installed with pip and one with conda")
_ALSO = compile_on_use(
    r"[^.;\n]{0,25}?\b(?:and|or)\b[^.;\n]{0,12}?\b(pip|uv|conda|mamba|poetry)\b", re.I
)


# the facts collect_env always answers, "None" or "Could not collect" included
COLLECT_ENV_SAYS = frozenset(
    {"torch.version", "torch.cuda", "python.version", "nvidia.driver_version", "gpu", "cudnn"}
)


@record
class Found:
    value: str
    label: str
    line: int


def read_labelled(text: str, reading: Reading) -> None:
    """Every labelled fact of the text, into the reading where no other reader put one."""
    found: Dict[str, List[Found]] = {}
    raw = lines_of(text)
    for number, line, low, labels in _labelled_lines(text):
        for key, value, label in _facts_in(line, low, labels, raw, number):
            kept = found.setdefault(key, [])
            if len(kept) < MAX_FINDS:
                kept.append(Found(value, label, number))
    taken = False
    for key, finds in found.items():
        if "collect_env" in reading.pieces and key in COLLECT_ENV_SAYS:
            continue  # its "None" and "Could not collect" are answers too
        agreed = _one_value(key, finds, reading)
        if agreed is not None and put(key, agreed, reading):
            taken = True
            reading.where.setdefault(_where_key(key), f"{WHERE} ({finds[0].label!r})")
    if taken and WHERE not in reading.pieces:
        reading.pieces.append(WHERE)


Label = Tuple[int, int, int]  # the fact's index in FACTS, where its label starts and ends


def _labelled_lines(text: str) -> Iterator[Tuple[int, str, Optional[str], List[Label]]]:
    """Each line with a label: its number, the line made plain (``_plain``), that line in
    lower case (None where lowering would move a letter: reading.keeps_places), and its labels.

    The lines that may hold one (a word of _WORDS, shorter than LONGEST, not a traceback's
    or pip's removal line) are made plain and joined, and the engine finds the labels of
    all of them in one pass: a search of each line costs a third more, in Python's calls."""
    raw = lines_of(text)
    numbers = [n for n in _worded_lines(text) if len(raw[n]) < LONGEST and not _SKIP.match(raw[n])]
    plain = "\n" + "\n".join([_plain(raw[n]) for n in numbers])  # each line after its lead
    lowered_plain = plain.lower()
    low = lowered_plain if keeps_places(plain, lowered_plain) else None  # else ignoring case
    labels = _LABELS_LOWER.finditer(low) if low else _labels_ignoring_case().finditer(plain)
    index, start, end = -1, 0, 0  # the line numbers[index] spans plain[start:end]
    held: List[Label] = []
    for match in labels:
        at = match.start() + 1  # the label, after the character before it
        if at > end:  # a later line
            if held:
                yield numbers[index], plain[start:end], low[start:end] if low else None, held
                held = []
            index += plain.count("\n", end, at)
            start = plain.rfind("\n", 0, at) + 1
            end = plain.find("\n", at)
            end = len(plain) if end == -1 else end
        held.append((int(match.lastindex or 0) - 1, at - start, match.end() - start))
    if held:
        yield numbers[index], plain[start:end], low[start:end] if low else None, held


def _worded_lines(text: str) -> Iterator[int]:
    """The numbers of the lines that hold a word of _WORDS in lower case (lines without one
    hold no label), found in the lowered text: it has the text's line breaks (lowering makes
    none and takes none away), and each of its lines is that line lowered."""
    return lines_matching(lowered(text), _WORDS)


def _plain(line: str) -> str:
    """The line without markdown emphasis, code marks, bullets and heading marks; a
    two-cell table row as ``label: value``."""
    row = _TABLE_ROW.match(line) if "|" in line else None  # most lines are no row
    if row:
        line = f"{row.group(1).strip()}: {row.group(2).strip()}"
    if "*" in line or "__" in line or "`" in line or line.lstrip()[:1] in _MARKUP_LEADS:
        line = _MARKUP.sub("", line)
    return line.strip()


def _next_value_line(lines: Sequence[str], number: int) -> Optional[str]:
    """The first non-empty line after ``number`` (an issue form's value under its heading,
    a REPL's answer under the expression), without its Out[n]: or Version: prefix."""
    for line in lines[number + 1 : number + 4]:
        if line.strip():
            return _VALUE_LINE.sub("", _plain(line), count=1)
    return None


def _facts_in(
    line: str, low: Optional[str], labels: Sequence[Label], lines: Sequence[str], number: int
) -> List[Tuple[str, str, str]]:
    """(fact key, value, label) for each label of line ``number`` of the lines (``line``, made
    plain; ``low``, it lowered, or None) with a value after it, or (when the label ends the
    line) on the line below."""
    out = []
    pins = "==" in line  # what an exact pin holds: most lines have none to look for
    # the words _NOT_THIS starts with: most lines have none, and need no search for it
    others = low is None or "which" in low or "that" in low or "if " in low
    for index, start, end in labels:
        pin = _EXACT_PIN.match(line, end) if pins else None
        value = _VALUES[index].match(line, pin.end() if pin else end)
        if value is None and line[end:].strip(" :)\"'`*=|.?"):
            continue  # words after the label, and no value: most labels end here, so first
        fact, label = FACTS[index], line[start:end]
        if others and _NOT_THIS.search(line, max(0, start - 60), start):
            continue  # "the torch which works for flash_attn is ...": not the label's value
        if _REQUIREMENT.match(line, end) and not (pin and _INSTALLED_PIN.search(line, 0, start)):
            continue  # torch==2.1.0: asked for, not installed
        if value is None:  # the label ends the line: its value may stand on the next
            under = _next_value_line(lines, number)
            value = _VALUES[index].match(under) if under is not None else None
        if value is None:
            continue
        key = f"companion.{_package(label)}" if fact.key == "companion" else fact.key
        found = _later(line, value, index)
        if found is not None:
            out.append((key, found, label))
        if fact.key == "package_manager" and value.string is line:
            also = _ALSO.match(line, value.end())
            if also:  # two managers named: both are said, and none is taken
                out.append((key, also.group(1), label))
    return out


@functools.cache
def _labels_ignoring_case() -> re.Pattern[str]:
    """The labels' pattern ignoring case, for the few lines lowering would move (compiled
    the first time one is read: 6 ms of a run that reads none)."""
    return re.compile(_LABELS_SOURCE, re.IGNORECASE)


def _later(line: str, value: re.Match[str], index: int) -> Optional[str]:
    """The value the line ends with for this label: the one matched, or what replaced it
    ("built for X (you have Y)", "X ..., so I installed Y"); None when the replacement
    is not a value of this fact."""
    if value.string is not line:
        return value.group(1).strip()
    have = _YOU_HAVE.match(line, value.end())  # xFormers: "built for X (you have Y)"
    if have:
        mine = _VALUES[index].match(have.group(1))
        return mine.group(1) if mine else None
    then = _REPLACED.match(line, value.end())
    if then:
        mine = _VALUES[index].match(line, then.end())
        return mine.group(1) if mine else None
    return value.group(1).strip()


def _package(label: str) -> str:
    return re.sub(r"[-_]+", "-", label.strip().lower())


def _one_value(key: str, finds: Sequence[Found], reading: Reading) -> Optional[str]:
    """The value the finds agree on (the most precise of compatible values), or None with a
    note when they disagree."""
    values: List[str] = []
    same = _same_os if key == "system.os" else compatible
    for find in finds:
        norm = _normal(key, find.value)
        if norm is None:
            continue
        for i, had in enumerate(values):
            if same(had, norm):
                values[i] = max(had, norm, key=len)
                break
        else:
            values.append(norm)
    if len(values) > 1:
        shown = ", ".join(values[:4])
        reading.notes.append(
            f"the text gives different values for {NAMES.get(key, key)} ({shown}): none was taken"
        )
        return None
    return values[0] if values else None


def _same_os(a: str, b: str) -> bool:
    """Two wordings of one OS: the same family, and the same release where both give one
    ("macOS 14.2.1 (arm64)" and "macOS-14.2.1-arm64-arm-64bit")."""
    if os_family(a.lower()) != os_family(b.lower()):
        return False
    if a.lower().startswith("linux") or b.lower().startswith("linux"):
        return True  # platform.platform()'s "Linux-6.8.0-...": a kernel, not a release
    ra = re.search(r"\d{1,2}(?:\.\d{1,2}){0,2}", a)
    rb = re.search(r"\d{1,2}(?:\.\d{1,2}){0,2}", b)
    return ra is None or rb is None or compatible(ra.group(0), rb.group(0))


def _normal(key: str, raw: str) -> Optional[str]:
    """A found value in its one form, or None when it is not a value of that fact after all
    (a GPU the tables do not know, a word after "OS" that names none)."""
    raw = raw.strip().strip("'\"`*").strip()
    if key == "nccl":
        return ".".join(re.findall(r"\d+", raw)) or None
    if key == "gpu":
        return gpu_name(raw)
    if key == "package_manager":  # "installed by anaconda": conda is its package manager
        return re.sub(r"^(?:ana|mini)conda$", "conda", raw.lower())
    if key == "system.machine":
        return {"x86-64": "x86_64", "x64": "x86_64", "amd64": "AMD64"}.get(raw.lower(), raw)
    return raw or None


def _where_key(key: str) -> str:
    return {"gpu": "nvidia.gpus", "torch.cpu": "torch.version"}.get(key, key)
