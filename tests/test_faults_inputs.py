"""Bad input gets a one-line error or a finding: never a traceback, a hang, or unbounded time.

Pasted reports (`diagnose`), project config ([tool.envcheck]), compatibility tables and
ENVCHECK_* overrides, each fed nonsense: long and padded lines, deep JSON, wrong types at
every field, non-UTF-8 files, negative and non-finite numbers. Most of it is fuzzed with
hypothesis; every example must finish in EXAMPLE_SECONDS and raise nothing but the documented
error class (ConfigError, TableError, OverrideError; diagnose raises nothing at all).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from envcheck.core import check
from envcheck.diagnose import MAX_INPUT, diagnose_text
from envcheck.diagnose.reading import MAX_GPUS
from envcheck.facts import Facts
from envcheck.probes.overrides import (
    SECTIONS,
    SIGNED,
    OverrideError,
    apply_overrides,
    parse_overrides,
    parse_size,
)
from envcheck.requirements import (
    ConfigError,
    Requirements,
    find_config,
    load_requirements,
    parse_requirements,
)
from envcheck.tables import TableError, builtin_dir, load_tables
from envcheck.tables.groups import GROUPS, read_group
from tests.fixtures import profile
from tests.runner import envcheck

CORPUS = Path(__file__).parent / "diagnose_corpus"
CORPUS_TEXTS = {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.txt"))}
CORPUS_LINES = sorted({line for text in CORPUS_TEXTS.values() for line in text.splitlines()})
# The shipped tables: their message patterns are the ones diagnose runs in the field (the
# frozen fixture tables keep older patterns, which are not what this suite measures).
TABLES = load_tables()
EXAMPLE_SECONDS = 5.0


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,  # timed by hand against EXAMPLE_SECONDS: a slow CI machine is no failure
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


def size_event(text: str) -> None:
    """The input's size class, for --hypothesis-show-statistics."""
    size = len(text)
    event("input under 1k" if size < 1000 else "input 1k-100k" if size < 10**5 else "input 100k+")


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` and bound the CPU time it takes in this process: other processes' load on
    the cores does not count (wall time did: a busy machine failed the suite)."""
    started = time.process_time()
    try:
        return fn(*args, **kwargs)
    finally:
        used = time.process_time() - started
        assert used < EXAMPLE_SECONDS, f"{fn.__name__} took {used:.1f} s of CPU"


def no_traceback(out: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in out.stderr and "failed unexpectedly" not in out.stderr, out.stderr


# =========================================================================== diagnose

PAD = 64_000  # the padded-line tests: quadratic parsing took 1-10 s per case here


def padded(case: str, n: int) -> str:
    pad = " " * n
    head = "NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4\n"
    return {
        "key line": "a" + pad + "b",
        "collect_env GPU line": f"PyTorch version: 2.5.0\nGPU models and configuration:\nGPU 0: x{pad}y\n",
        "nvidia-smi GPU row": f"{head}| 0 x{pad}y\n",
        "nvidia-smi stats row": f"{head}|   0  A100   On  | 00000000:01:00.0 Off | 0 |\n| N/A 30C{pad}y\n",
        "nvidia-smi -L": f"GPU 0: x{pad}y",
        "collect_env OS": f"PyTorch version: 2.5.0\nOS: Ubuntu{pad}y\n",
        "message: ProcessGroupNCCL": "ProcessGroupNCCL" * (n // 16),
        "message: libnccl": "libnccl" * (n // 7),
        "message: DataLoader": "DataLoader worker (pid" * (n * 5 // 22),  # a smaller constant
        # the readers of paths, tables and dumps (envcheck.diagnose.dumps)
        "path of slashes": "/a" * (n // 2),
        "site-packages path": "/lib/python3.10/site-packages/" * (n // 30),
        "detectron2 row": "PyTorch" + pad + "1.9.0",
        "bullet": "- PyTorch version (GPU?):" + pad + "2.1.0",
        "pip version list": "(from versions: " + "1.0, " * (n // 5),
        "undefined symbol path": "x/_C.so" * (n // 7) + ": undefined symbol: _ZN",
    }[case]


PADDED_CASES = [
    "key line",
    "collect_env GPU line",
    "nvidia-smi GPU row",
    "nvidia-smi stats row",
    "nvidia-smi -L",
    "collect_env OS",
    "message: ProcessGroupNCCL",
    "message: libnccl",
    "message: DataLoader",
    "path of slashes",
    "site-packages path",
    "detectron2 row",
    "bullet",
    "pip version list",
    "undefined symbol path",
]


@pytest.mark.parametrize("case", PADDED_CASES)
def test_a_padded_line_is_read_in_linear_time(case: str) -> None:
    """Each of these backtracked: 64k characters took seconds, a megabyte hours. CPU time of
    this process, not wall time: others' load on the cores must not fail it."""
    started = time.process_time()
    diagnose_text(padded(case, PAD), TABLES)
    assert time.process_time() - started < 1.0


def test_nested_json_and_huge_numbers_are_not_json_reports() -> None:
    for text in (
        '{"torch": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"system": ' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}",
        '{"system": {"cpus_logical": ' + "1" * 5000 + "}}",
    ):
        report = timed(diagnose_text, text, TABLES)
        assert report.diagnosis["read"] == []


def test_odd_tables_and_lists_do_not_break_the_parsers() -> None:
    head = "NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4\n"
    # An ECC cell that str.isdigit() accepts and int() refuses; a CSV cell past csv's limit.
    report = diagnose_text(head + "|   0  NVIDIA H100   On  | 00000000:18:00.0 Off | ² |\n", TABLES)
    assert report.facts.nvidia.gpus[0].ecc_uncorrected_volatile is None
    report = diagnose_text('name, uuid\n"' + "a" * 200_000 + '", x\n', TABLES)
    assert report.diagnosis["read"] == []


def test_a_listing_of_thousands_of_gpus_reads_the_first_64_and_says_so() -> None:
    listing = "".join(f"GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-{i:x})\n" for i in range(20_000))
    report = timed(diagnose_text, listing, TABLES)
    assert len(report.facts.nvidia.gpus) == MAX_GPUS
    assert any("more than 64 GPUs" in note for note in report.diagnosis["notes"])


# Hypothesis: random text, then real report lines mixed, padded, cut and repeated.

# hypothesis favours small numbers: name the long lengths so that they are tried often
lengths = st.sampled_from([1, 100, 10_000, 100_000, 200_000]) | st.integers(1, 200_000)
line_edits = st.sampled_from(["keep", "pad", "cut", "repeat", "crlf", "fence", "quote", "ansi"])


@st.composite
def mangled_reports(draw) -> str:
    lines = draw(st.lists(st.sampled_from(CORPUS_LINES), min_size=1, max_size=80))
    out = []
    for line in lines:
        edit = draw(line_edits)
        if edit == "pad":
            at = draw(st.integers(0, len(line)))
            fill = draw(st.sampled_from([" ", "\t", "-", "|", "0", "a", "("]))
            line = line[:at] + fill * draw(lengths) + line[at:]
        elif edit == "cut":
            line = line[: draw(st.integers(0, len(line)))]
        elif edit == "repeat":
            line = line * draw(st.integers(2, 2000))
        elif edit == "crlf":
            line += "\r"
        elif edit == "fence":
            line = "```\n" + line
        elif edit == "quote":
            line = "> " + line
        elif edit == "ansi":
            line = "\x1b[1;31m" + line + "\x1b[0m"
        out.append(line)
    return "\n".join(out)


def json_values(max_leaves: int = 10) -> st.SearchStrategy:
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text(max_size=20)
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


def facts_documents() -> st.SearchStrategy:
    """envcheck JSON with a real section name and values of any type, at any depth."""
    sections = st.sampled_from(["system", "nvidia", "torch", "python", "toolkit", "torch_runtime"])
    fields = st.sampled_from(
        [
            "os",
            "gpus",
            "driver_version",
            "version",
            "cuda",
            "memory_total",
            "name",
            "index",
            "installed",
        ]
    )
    section = st.dictionaries(fields, json_values(), max_size=5)
    return st.dictionaries(sections, section | json_values(), min_size=1, max_size=4).map(
        lambda d: json.dumps(d, allow_nan=True)
    )


def nested(depth: int, array: bool, inside: bool) -> str:
    """JSON nested ``depth`` deep, closed, so that a parser has to go all the way down."""
    body = "[" * depth + "]" * depth if array else '{"a":' * depth + "1" + "}" * depth
    return '{"torch": ' + body + "}" if inside else body


def deep_json() -> st.SearchStrategy:
    depths = st.sampled_from([10, 1000, 5000, 100_000]) | st.integers(1, 200_000)
    return st.builds(nested, depths, st.booleans(), st.booleans())


random_texts = st.text(max_size=3000) | st.binary(max_size=3000).map(
    lambda b: b.decode("utf-8", "replace")
)
# Pieces of the formats diagnose reads, for random text to be built from (a fuzzing
# dictionary): alone, random text seldom reaches past the first check of any parser.
FRAGMENTS = [
    "\n",
    "a",
    "GPU 0: ",
    "GPU models and configuration:\n",
    "PyTorch version: 2.5.0\n",
    "OS: Ubuntu",
    "(x86_64)",
    "NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4\n",
    "|   0  ",
    "  On  |   00000000:18:00.0 Off |",
    "| N/A   31C    P0   70W /  700W |  1MiB /  81559MiB |",
    " (UUID: GPU-1)",
    "name, memory.total [MiB], compute_cap\n",
    '"',
    ",",
    '{"torch": ',
    '{"nvidia": {"gpus": [',
    "{",
    "}",
    "[",
    "]",
    "ProcessGroupNCCL",
    "libcudnn",
    "DataLoader worker (pid",
    "found version ",
    "²",
    "9" * 5000,
]
paddings = st.builds(
    lambda fill, n: fill * n, st.sampled_from([" ", "\t", "|", "(", "a", "0"]), lengths
)


@fuzz(400)
@given(st.lists(random_texts | st.sampled_from(FRAGMENTS) | paddings, max_size=8))
def test_fuzz_diagnose_random_text(parts: List[str]) -> None:
    text = "".join(parts)
    size_event(text)
    report = timed(diagnose_text, text, TABLES)
    assert report.diagnosis is not None


@fuzz(150)
@given(mangled_reports())
def test_fuzz_diagnose_mangled_reports(text: str) -> None:
    size_event(text)
    report = timed(diagnose_text, text, TABLES)
    assert len(report.facts.nvidia.gpus) <= MAX_GPUS


@fuzz(60)
@given(deep_json() | facts_documents())
def test_fuzz_diagnose_json(text: str) -> None:
    size_event(text)
    timed(diagnose_text, text, TABLES)


# The command line: documented exit codes, one line on stderr, never a traceback.


def test_cli_diagnose_unreadable_input_is_not_judged(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    out = envcheck("diagnose", "--json", str(garbage), timeout=60)
    no_traceback(out)
    assert out.returncode == 2  # a usage error: an input file with nothing in it to read
    report = json.loads(out.stdout)
    assert report["verdict"] == "not judged" and report["ready"] is False  # never "ready"
    assert report["read"] == [] and "nothing it can read" in report["error"]
    assert out.stderr.strip().splitlines() == [report["error"]]


def test_cli_diagnose_says_what_it_left_unread(tmp_path: Path) -> None:
    """A file past 4 MiB: the first 4 MiB are diagnosed (in linear time, though its long
    line is padded), and stdout, stderr and the JSON say the rest was not."""
    big = tmp_path / "big.txt"
    big.write_text(
        CORPUS_TEXTS["nvidia_smi_h100.txt"] + "GPU 0: x" + " " * (MAX_INPUT + 10) + "y\n"
    )
    out = envcheck("diagnose", "--json", str(big), timeout=60)
    no_traceback(out)
    assert out.returncode == 1  # the H100 report's own findings
    assert "envcheck: read only the first 4 MiB of" in out.stderr
    report = json.loads(out.stdout)
    assert any("read only the first 4 MiB" in note for note in report["notes"])


# =========================================================================== config


def test_a_toml_float_is_not_a_version() -> None:
    """`python = 3.10` is the float 3.1 in TOML: refused with the fix, not read as >=3.1."""
    with pytest.raises(
        ConfigError, match=r'python = 3.1 is a number.*write it as a string: python = ">=3.10"'
    ):
        parse_requirements({"python": 3.10}, "pyproject.toml")
    for key in ("torch", "cuda"):
        with pytest.raises(ConfigError, match=f"{key} = 2.1 is a number"):
            parse_requirements({key: 2.10}, "pyproject.toml")
    assert str(parse_requirements({"python": 3}, "p").python) == ">=3"  # a whole number is exact
    assert str(parse_requirements({"python": ">=3.10"}, "p").python) == ">=3.10"


def test_gpu_memory_must_be_a_positive_finite_size() -> None:
    for bad in (
        -5,
        0,
        -0.5,
        0.0,
        math.nan,
        math.inf,
        -math.inf,
        1e300,
        True,
        "0GiB",
        [40],
        "1" * 30,
    ):
        with pytest.raises(ConfigError, match="gpu_memory"):
            parse_requirements({"gpu_memory": bad}, "pyproject.toml")
    assert parse_requirements({"gpu_memory": 40}, "p").gpu_memory == 40 * 2**30
    assert parse_requirements({"gpu_memory": "0.5GiB"}, "p").gpu_memory == 2**29


def test_tool_that_is_not_a_table(tmp_path: Path) -> None:
    project = tmp_path / "pyproject.toml"
    project.write_text('tool = "x"\n')  # not ours: there is no [tool.envcheck] to read
    assert find_config(tmp_path) is None or find_config(tmp_path)[0] != project
    with pytest.raises(ConfigError, match=r"no \[tool.envcheck\] table"):
        load_requirements(str(project))
    project.write_text("[tool]\nenvcheck = 5\n")
    for call in (
        lambda: load_requirements(str(project)),
        lambda: load_requirements(start=str(tmp_path)),
    ):
        with pytest.raises(ConfigError, match=r"\[tool.envcheck\] must be a table, not an integer"):
            call()
    with pytest.raises(ConfigError, match="must be a table"):
        parse_requirements(5, "envcheck.require()")  # type: ignore[arg-type]


def test_a_pyproject_that_is_not_utf8(tmp_path: Path) -> None:
    """Another tool's latin-1 pyproject.toml cannot hold [tool.envcheck] unless it spells
    "envcheck": without the word it is passed over; with it, it is a ConfigError."""
    project = tmp_path / "pyproject.toml"
    project.write_bytes('[project]\nname = "caf\xe9"\n'.encode("latin-1"))
    found = find_config(tmp_path)
    assert found is None or found[0] != project  # passed over (a parent's config may apply)
    project.write_bytes(
        '[project]\nname = "caf\xe9"\n[tool.envcheck]\ngpus = 1\n'.encode("latin-1")
    )
    with pytest.raises(
        ConfigError, match=r"pyproject.toml: not UTF-8 text .*byte 0xe9 at offset 21$"
    ):
        load_requirements(start=str(tmp_path))


def test_config_files_that_are_not_toml(tmp_path: Path) -> None:
    binary = tmp_path / "ls"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_requirements(str(binary))
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r"deep\.toml: not valid TOML"):
        load_requirements(str(deep))
    huge = tmp_path / "huge.toml"
    huge.write_text("gpus = " + "1" * 5000 + "\n")
    with pytest.raises(ConfigError, match=r"huge\.toml: not valid TOML"):
        load_requirements(str(huge))
    if os.path.exists("/dev/zero"):  # bounded: never read the whole of an endless file
        with pytest.raises(ConfigError, match="larger than 1024 KiB"):
            timed(load_requirements, "/dev/zero")


def test_cli_config_errors_are_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "ls"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    out = envcheck("check", "--no-deep", "--config", str(binary), timeout=120)
    no_traceback(out)
    assert out.returncode == 2
    assert [line for line in out.stderr.splitlines() if line.startswith("Error:")] == [
        f"Error: {binary}: not UTF-8 text (TOML files are UTF-8): byte 0x80 at offset 136"
    ]
    # Another tool's latin-1 pyproject.toml in the current folder does not stop `check`.
    (tmp_path / "pyproject.toml").write_bytes('[project]\nname = "caf\xe9"\n'.encode("latin-1"))
    out = subprocess.run(
        [sys.executable, "-m", "envcheck", "check", "--no-deep", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("ENVCHECK_")},
    )
    no_traceback(out)
    assert out.returncode in (0, 1) and json.loads(out.stdout)["requirements"] is None


CONFIG_KEYS = sorted(set(Requirements.__dataclass_fields__) - {"source"})


def toml_values() -> st.SearchStrategy:
    import datetime

    leaves = (
        st.booleans()
        | st.integers(-(2**64), 2**64)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text(max_size=12)
        | st.sampled_from(["40GiB", ">=2.4", "12.1", "8.0", "nccl", "bf16", "matmul", "-5", "0"])
        | st.dates()
        | st.just(datetime.time(12, 0))
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


@fuzz(200)
@given(
    st.dictionaries(st.sampled_from(CONFIG_KEYS) | st.text(max_size=6), toml_values(), max_size=6)
)
def test_fuzz_config_values_of_every_type(raw: Dict[str, Any]) -> None:
    try:
        req = timed(parse_requirements, raw, "pyproject.toml")
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("pyproject.toml: ")
        return
    assert req.gpu_memory is None or req.gpu_memory > 0
    assert req.gpus is None or req.gpus >= 0
    for key in ("python", "torch", "cuda"):
        assert not isinstance(raw.get(key), float)


@fuzz(100)
@given(
    st.binary(max_size=400)
    | st.text(max_size=400).map(lambda t: t.encode("utf-8"))
    | st.sampled_from(
        [
            b"[tool.envcheck]\n",
            b"[tool]\nenvcheck = ",
            b"tool = ",
            b"gpus = ",
            b"[tool.envcheck]\npython = ",
        ]
    ).flatmap(lambda head: st.binary(max_size=60).map(lambda tail: head + tail)),
    st.sampled_from(["pyproject.toml", "envcheck.toml"]),
)
def test_fuzz_config_files(content: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        for call in (lambda: load_requirements(str(path)), lambda: load_requirements(start=folder)):
            try:
                timed(call)
            except ConfigError as exc:
                assert "\n" not in str(exc)


# =========================================================================== tables

WRONG_TYPES: List[Any] = [
    *(5, -1, 1.5, True, None, "x", "", [], ["x"], [5], {}, {"x": 1}, {"x": [1]}),
    {"a\nb": 1},  # a key that would split a one-line message
]
LOADERS: Dict[str, Callable[[Dict[str, Any], str], Any]] = {
    name: functools.partial(read_group, name) for name in GROUPS
}


def shipped(name: str) -> Dict[str, Any]:
    return json.loads((builtin_dir() / f"{name}.json").read_text(encoding="utf-8"))


def field_paths(value: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from field_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from field_paths(item, (*path, i))


def first_of_each_field(data: Dict[str, Any]) -> List[Tuple[Any, ...]]:
    """One path per field of the schema: releases[0].python.min, not every release's."""
    firsts: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}
    for path in field_paths(data):
        firsts.setdefault(tuple("*" if isinstance(k, int) else k for k in path), path)
    return list(firsts.values())


def mutated(data: Dict[str, Any], path: Tuple[Any, ...], value: Any) -> Dict[str, Any]:
    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("name", "path", "value", "message"),
    [
        (
            "torch_releases",
            ("releases", 4, "bundled", "cu113"),
            ["cudnn"],
            r"releases\[4\] \(1.12\).bundled.cu113: expected an object",
        ),
        (
            "gpu_arches",
            ("sass_compatibility", "rules", "sm_53", "only"),
            5,
            r"sass_compatibility.rules.sm_53.only: expected a list of compute capabilities, got 5",
        ),
        ("gpu_arches", ("sass_compatibility", "rules", "sm_50", "except"), 5, r"sm_50.except"),
        ("gpu_arches", ("gpus", 0, "segment"), 5, r"gpus\[0\].segment: expected str, got 5"),
        (
            "messages",
            ("messages", 1, "extracts", "gpu_capability"),
            [],
            r"extracts.gpu_capability: expected a string",
        ),
        (
            "torch_releases",
            ("releases", 20, "variants", "cpu"),
            "no",
            r"variants.cpu: expected true or false",
        ),
        (
            "torch_releases",
            ("releases", 20, "notes"),
            {"python": 5},
            r"releases\[20\] \(2.14\).notes.python: expected a string, got 5",
        ),
        (
            "torch_releases",
            ("sources", "AUDIO_DOCS_211"),
            5,
            r"sources.AUDIO_DOCS_211: expected a string",
        ),
    ],
)
def test_a_field_of_the_wrong_type_names_file_record_and_field(
    tmp_path: Path, name: str, path: Tuple[Any, ...], value: Any, message: str
) -> None:
    (tmp_path / f"{name}.json").write_text(json.dumps(mutated(shipped(name), path, value)))
    with pytest.raises(TableError, match=f"{name}.json: .*{message}"):
        load_tables(tmp_path)


def test_table_headers_and_documents_of_the_wrong_type(tmp_path: Path) -> None:
    data = shipped("installers")
    for key, value in (("as_of", 20260101), ("as_of", ["2026-01-01"]), ("schema_version", True)):
        (tmp_path / "installers.json").write_text(json.dumps({**data, key: value}))
        with pytest.raises(TableError, match=f"installers.json: {key}"):
            load_tables(tmp_path)
    for text in ("[" * 100_000 + "]" * 100_000, '{"schema_version": ' + "1" * 5000 + "}"):
        (tmp_path / "installers.json").write_text(text)
        with pytest.raises(TableError, match=r"installers\.json: not valid JSON"):
            load_tables(tmp_path)


@pytest.mark.slow
def test_every_table_field_of_every_wrong_type_is_a_table_error() -> None:
    """Each field of the schema (its first occurrence), set to each wrong type: the loader
    accepts it (null for an optional field, a string for a string) or refuses it with a
    TableError that names the file. Nothing else escapes."""
    tried = refused = 0
    for name, loader in LOADERS.items():
        data = shipped(name)
        for path in first_of_each_field(data):
            node = data
            for key in path[:-1]:
                node = node[key]
            original = node[path[-1]]
            for value in WRONG_TYPES:
                tried += 1
                node[path[-1]] = copy.deepcopy(value)  # in place, and put back: fast enough
                try:
                    loader(data, f"{name}.json")
                except TableError as exc:
                    refused += 1
                    assert str(exc).startswith(f"{name}.json: ") and "\n" not in str(exc)
            node[path[-1]] = original
    assert tried > 5000 and refused > tried // 2


@fuzz(40)
@given(st.data())
def test_fuzz_tables_mutated_then_used(data: st.DataObject) -> None:
    """A random field set to a random JSON value: a TableError, or tables that work (a
    check and a diagnose with messages run on them)."""
    name = data.draw(st.sampled_from(sorted(LOADERS)))
    document = shipped(name)
    path = data.draw(st.sampled_from(first_of_each_field(document)))
    value = data.draw(json_values(max_leaves=4))
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / f"{name}.json").write_text(json.dumps(mutated(document, path, value)))
        try:
            tables = timed(load_tables, folder)
        except TableError as exc:
            assert "\n" not in str(exc)
            return
    check(facts=profile("rtx5090-cu126"), tables=tables, requirements=False)
    diagnose_text(
        CORPUS_TEXTS["collect_env_2x_rtx5090.txt"] + CORPUS_TEXTS["errors_only.txt"], tables
    )


def test_cli_bad_tables_are_one_line_exit_3(tmp_path: Path) -> None:
    data = shipped("gpu_arches")
    rule = next(iter(data["sass_compatibility"]["rules"]))
    (tmp_path / "gpu_arches.json").write_text(
        json.dumps(mutated(data, ("sass_compatibility", "rules", rule, "only"), 5))
    )
    out = envcheck("--tables", str(tmp_path), "tables", timeout=60)
    no_traceback(out)
    assert out.returncode == 3
    assert out.stderr.strip().splitlines() == [
        f"envcheck: cannot use the compatibility tables: {tmp_path / 'gpu_arches.json'}: "
        f"sass_compatibility.rules.{rule}.only: expected a list of compute capabilities, got 5"
    ]


# =========================================================================== overrides


def test_negative_and_non_finite_override_numbers_are_refused() -> None:
    for environ, message in (
        (  # found by test_fuzz_overrides: a key with a newline split the one-line error
            {"ENVCHECK_FACT_TORCH_RUNTIME_STEP_ERRORS": '{"a\\nb": 5}'},
            r"STEP_ERRORS\.a\\nb: expected a string, got an integer$",
        ),
        ({"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "-5"}, "system.shm_total = -5 must not be negative"),
        ({"ENVCHECK_FACT_SYSTEM_CPUS_LOGICAL": "-1"}, "must not be negative"),
        ({"ENVCHECK_GPUS": '[{"name": "x", "memory_total": -1}]'}, r"gpus\[0\].memory_total = -1"),
        ({"ENVCHECK_FACT_SYSTEM_CGROUP": '{"cpu_quota": NaN}'}, "cpu_quota = nan is not a number"),
        ({"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "9" * 400 + "GiB"}, "ENVCHECK_FACT_SYSTEM_SHM_TOTAL"),
        ({"ENVCHECK_GPUS": "[" * 100_000}, "ENVCHECK_GPUS: not JSON"),
        ({"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "[" * 100_000}, "ENVCHECK_FACT_SYSTEM_SHM_TOTAL"),
        ({"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "1" * 5000}, "ENVCHECK_FACT_SYSTEM_SHM_TOTAL"),
    ):
        with pytest.raises(OverrideError, match=message):
            parse_overrides(environ)
    # an exit code may be negative (-9: SIGKILL), and zero is a size
    (shm, code) = parse_overrides(
        {"ENVCHECK_FACT_TORCH_RUNTIME_RETURNCODE": "-9", "ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "0"}
    )
    assert (shm.value, code.value) == (0, -9)
    assert parse_size("1.5GiB") == 3 * 2**29 and parse_size("24GB") == 24 * 10**9


def test_cli_negative_override_is_a_usage_error() -> None:
    out = envcheck("probe", "--no-deep", env={"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "-5"}, timeout=60)
    no_traceback(out)
    assert out.returncode == 2
    assert (
        "Error: ENVCHECK_FACT_SYSTEM_SHM_TOTAL: system.shm_total = -5 must not be negative"
        in out.stderr
    )


def _variables() -> List[str]:
    import dataclasses

    names = ["ENVCHECK_DRIVER_VERSION", "ENVCHECK_CUDA_DRIVER_VERSION", "ENVCHECK_GPUS"]
    for prefix, _section, cls in SECTIONS:
        names += [f"ENVCHECK_FACT_{prefix}{f.name.upper()}" for f in dataclasses.fields(cls)]
    return names


override_values = (
    st.text(max_size=30)
    | json_values(max_leaves=6).map(lambda v: json.dumps(v, allow_nan=True))
    | st.tuples(
        st.integers(-(10**30), 10**30), st.sampled_from(["", "GiB", "MB", "B", ".5KiB"])
    ).map(lambda t: f"{t[0]}{t[1]}")
    | st.sampled_from(
        ["none", "A100:8.0:80GiB", "x:9.0:-1GiB; y:8.6", "NaN", "-Infinity", "[" * 3000]
    )
)


@fuzz(200)
@given(st.dictionaries(st.sampled_from(_variables()), override_values, min_size=1, max_size=3))
def test_fuzz_overrides(environ: Dict[str, str]) -> None:
    try:
        overrides = timed(parse_overrides, environ)
    except OverrideError as exc:
        assert "\n" not in str(exc)
        return
    for item in overrides:  # no negative size or count, no NaN, came through
        for path, number in numbers(item.value, f"{item.section}.{item.name}"):
            assert math.isfinite(number), (path, number)
            assert number >= 0 or path.rsplit(".", 1)[-1].split("[")[0] in SIGNED, (path, number)
    facts = Facts()
    apply_overrides(facts, overrides)
    json.loads(facts.to_json())  # what was accepted is a Facts document again


def numbers(value: Any, path: str) -> Iterator[Tuple[str, float]]:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from numbers(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{path}.{key}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value
