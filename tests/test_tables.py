"""The shipped compatibility tables, their validation, and the questions code asks them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from envcheck import builds
from envcheck.compat import arch_coverage, cuda_of_variant
from envcheck.driver_support import driver_verdict
from envcheck.tables import TableError, builtin_dir, load_tables
from envcheck.tables.model import parse_driver
from envcheck.values import ComputeCapability

TABLES = load_tables()


def test_shipped_tables_cover_1_8_to_2_15() -> None:
    minors = [r.minor for r in TABLES.releases]
    assert minors[0] == "1.8" and minors[-1] == "2.15"
    assert len(minors) == 22 and len(set(minors)) == 22


def test_every_record_has_a_source_that_resolves() -> None:
    for release in TABLES.releases:
        assert release.provenance.sources, release.minor
        for key in release.provenance.sources:
            assert key in TABLES.sources or "://" in key, (release.minor, key)
    for toolkit in TABLES.toolkits:
        assert toolkit.provenance.sources
    for family in TABLES.families:
        assert family.provenance.sources


@pytest.mark.parametrize(
    ("minor", "python", "platform", "default"),
    [
        ("2.14", ("3.10", "3.14"), "linux-x86_64", "cu130"),  # the issue's own example
        ("2.14", ("3.10", "3.14"), "windows-x86_64", "cpu"),
        ("2.2", ("3.8", "3.12"), "macos-x86_64", "cpu"),  # last Intel macOS wheels
        ("2.15", ("3.11", "3.15"), "linux-x86_64", "cu132"),
    ],
)
def test_release_facts(minor, python, platform, default) -> None:
    release = TABLES.release(Version(minor + ".0"))
    assert (str(release.python_min), str(release.python_max)) == python
    assert platform in release.platforms
    assert str(release.default_variant[platform]) == default


def test_intel_macos_ended_with_2_2() -> None:
    with_intel_mac = [r.minor for r in TABLES.releases if "macos-x86_64" in r.platforms]
    assert with_intel_mac[-1] == "2.2"


def test_torchaudio_has_no_release_past_2_11() -> None:
    later = [r for r in TABLES.releases if Version(r.minor) > Version("2.11") and r.minor != "2.15"]
    assert later  # a loop over no release would assert nothing
    for release in later:
        assert not any(release.torchaudio.values())
        assert str(release.compatible["torchaudio"]) == "<2.12,>=2.11"


def test_companion_pairs() -> None:
    assert (
        TABLES.release(Version("2.8.0")).companion("torchvision", Version("2.8.0+cu128"))
        == "0.23.0"
    )
    assert TABLES.release(Version("2.0.1")).companion("torchaudio", Version("2.0.1")) == "2.0.2"


@pytest.mark.parametrize(
    ("cuda", "driver", "os_name", "level"),
    [
        ("12.2", "535.104.05", "Linux", "full"),
        ("12.8", "535.104.05", "Linux", "minor"),  # minor-version compatibility
        ("12.1", "470.82.01", "Linux", "too_old"),
        ("11.8", "470.82.01", "Linux", "minor"),
        ("13.0", "575.57.08", "Linux", "too_old"),
        ("13.0", "580.65.06", "Linux", "full"),
        ("12.8", "572.83", "Windows", "full"),
        ("12.8", "566.36", "Windows", "minor"),
        ("10.2", "418.39", "Linux", "too_old"),  # no minor-version compatibility before 11
        ("12.8", "525.60.13", "Linux", "minor"),  # exactly the CUDA 12.x floor
        ("12.8", "525.60.11", "Linux", "too_old"),  # just below it
        ("99.0", "535.104.05", "Linux", "unknown"),  # a CUDA the tables do not hold
    ],
)
def test_driver_verdicts(cuda, driver, os_name, level) -> None:
    assert driver_verdict(TABLES, Version(cuda), driver, os_name).level == level


@pytest.mark.parametrize(
    ("cuda", "supported", "level"),
    [
        ("12.4", "12.4", "full"),
        ("12.8", "12.2", "minor"),
        ("13.0", "12.9", "too_old"),
        ("10.2", "10.1", "too_old"),  # no minor-version compatibility before CUDA 11
        ("12.4", None, "unknown"),  # neither the driver nor its CUDA: unknown, never full
    ],
)
def test_driver_verdict_from_nvml_cuda_version_alone(cuda, supported, level) -> None:
    assert driver_verdict(TABLES, Version(cuda), None, "Linux", supported).level == level


@pytest.mark.parametrize(
    ("arches", "cc", "level"),
    [
        (["sm_80", "sm_86", "sm_90"], "8.9", "native"),  # Ada runs sm_86 SASS
        (["sm_80", "sm_86", "sm_90"], "8.7", "none"),  # but Orin (8.7) does not
        (["sm_90"], "12.0", "none"),  # Blackwell needs its own kernels
        (["sm_90", "compute_90"], "12.0", "ptx"),
        (["sm_90", "compute_120"], "12.0", "ptx"),  # PTX of the GPU's own capability
        (["sm_60", "sm_70"], "6.1", "native"),
        (["sm_70", "sm_75"], "6.1", "none"),
        (["sm_100"], "10.3", "native"),
    ],
)
def test_arch_coverage(arches, cc, level) -> None:
    assert arch_coverage(TABLES, arches, ComputeCapability.parse(cc)).level == level


def test_gpu_names_and_families() -> None:
    assert TABLES.capability_of("NVIDIA GeForce RTX 5090") == "12.0"
    assert TABLES.family("6.1").last_driver_branch == 580
    assert TABLES.family("9.0").last_driver_branch is None


def test_driver_versions_print_as_written() -> None:
    assert str(parse_driver("535.104.05")) == "535.104.05"
    assert parse_driver("535.104.05") > parse_driver("535.86.10")


# --------------------------------------------------------------------------- validation


def broken_copy(tmp_path: Path, name: str, mutate) -> Path:
    folder = tmp_path / "tables"
    folder.mkdir(exist_ok=True)
    data = json.loads((builtin_dir() / f"{name}.json").read_text())
    mutate(data)
    (folder / f"{name}.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    ("name", "mutate", "message"),
    [
        (
            "torch_releases",
            lambda d: d["releases"][5]["python"].update(min="three"),
            r"torch_releases.json: releases\[5\] \(1.13\).python.min: 'three' is not a version",
        ),
        (
            "torch_releases",
            lambda d: d["releases"].append(d["releases"][0]),
            r"releases\[22\]: 1.8 is also releases\[0\]",
        ),
        (
            "torch_releases",
            lambda d: d["releases"][20].update(sources=["NO_SUCH_KEY"]),
            r"releases\[20\] \(2.14\).sources: 'NO_SUCH_KEY' is neither a known key",
        ),
        (
            "torch_releases",
            lambda d: d["releases"][20].update(sources=[]),
            r"releases\[20\] \(2.14\): a record needs at least one source",
        ),
        (
            "torch_releases",
            lambda d: d["releases"][20]["default_variant"].update({"linux-x86_64": "cuda13"}),
            r"default_variant.linux-x86_64: 'cuda13' is not a wheel variant",
        ),
        (
            "torch_releases",
            lambda d: d["releases"][20]["arch_lists"].update(cu130=["sm90"]),
            r"arch_lists.cu130: 'sm90' is not sm_XY or compute_XY",
        ),
        (
            "torch_releases",
            lambda d: d["releases"][20].update(versions=["2.13.0"]),
            r"releases\[20\] \(2.14\).versions: 2.13.0 does not belong to 2.14",
        ),
        ("torch_releases", lambda d: d.update(schema_version=2), r"schema_version 2 is not 1"),
        (
            "torch_releases",
            lambda d: d.update(as_of="yesterday"),
            r"as_of 'yesterday' is not a date",
        ),
        (
            "cuda_driver",
            lambda d: d["toolkits"][3].update(linux="new"),
            r"cuda_driver.json: toolkits\[3\] \(11.0\).linux: 'new' is not a version",
        ),
        (
            "cuda_driver",
            lambda d: d["toolkits"].append(d["toolkits"][0]),
            r"a CUDA version is listed twice",
        ),
        (
            "gpu_arches",
            lambda d: d["gpus"][0].update(capability="twelve"),
            r"gpu_arches.json: gpus\[0\].capability: 'twelve' is not a compute capability",
        ),
        ("gpu_arches", lambda d: d["gpus"].append(d["gpus"][0]), r"is listed twice"),
        (
            "installers",
            lambda d: d["uv_torch_backends"].update(values=["cuda13"]),
            r"installers.json: uv_torch_backends.values: 'cuda13' is not a backend name",
        ),
        (
            "messages",
            lambda d: d["messages"][0].update(pattern="(unclosed"),
            r"messages.json: messages\[0\] \(no-kernel-image\).pattern: not a regular expression",
        ),
        (
            "messages",
            lambda d: d["messages"][1].update(extracts={"gpu_count": "sm"}),
            r"'gpu_count' is not one of",
        ),
        (
            "messages",
            lambda d: d["messages"][0].update(
                wordings=[{"pattern": "(x", "lang": "de", "example": "x", "source": "https://a/b"}]
            ),
            r"messages\[0\] \(no-kernel-image\).wordings\[0\].pattern: not a regular expression",
        ),
        (
            "messages",
            lambda d: d["messages"][0].update(
                wordings=[{"pattern": "x", "lang": "German", "example": "x", "source": "https://a"}]
            ),
            r"wordings\[0\].lang: 'German' is not a language code",
        ),
        (
            "messages",
            lambda d: d["messages"][0].update(wordings=[{"pattern": "x", "lang": "de"}]),
            r"wordings\[0\]: missing field 'example'",
        ),
        (
            "messages",
            lambda d: d["messages"][0].update(
                wordings=[{"pattern": "x", "lang": "de", "example": "x", "source": "nowhere"}]
            ),
            r"wordings\[0\].source: 'nowhere' is neither a known key nor a reference",
        ),
    ],
)
def test_broken_tables_name_file_record_and_field(tmp_path, name, mutate, message) -> None:
    folder = broken_copy(tmp_path, name, mutate)
    with pytest.raises(TableError, match=message):
        load_tables(folder)


def test_not_json(tmp_path: Path) -> None:
    (tmp_path / "torch_releases.json").write_text("{ nope")
    with pytest.raises(TableError, match="not valid JSON"):
        load_tables(tmp_path)


def test_a_partial_folder_replaces_only_its_files(tmp_path: Path) -> None:
    folder = broken_copy(tmp_path, "torch_releases", lambda d: d.update(as_of="2027-01-15"))
    tables = load_tables(folder)
    assert tables.files["torch_releases"].as_of == "2027-01-15"
    assert tables.files["torch_releases"].builtin is False
    assert tables.files["cuda_driver"].builtin is True


def test_a_process_without_a_command_line_takes_the_folder_of_envcheck_tables(
    tmp_path: Path,
) -> None:
    """torchrun's ranks and scripts name their tables as ``--tables`` does (ENVCHECK_TABLES):
    the links the smoke expects and the tables its ranks are compared with are one set."""
    from envcheck.smoke.expected import load_link_table
    from envcheck.tables.load import load_tables_of_env
    from tests.runner import NO_CACHE

    folder = broken_copy(tmp_path, "links", lambda d: d.update(as_of="2027-01-15"))
    env = {"ENVCHECK_TABLES": str(folder), "ENVCHECK_CACHE_DIR": NO_CACHE}
    assert load_tables_of_env(env).files["links"].as_of == "2027-01-15"
    assert load_tables_of_env(env).files["links"].builtin is False
    without = {"ENVCHECK_CACHE_DIR": NO_CACHE}
    assert load_tables_of_env(without).files["links"].builtin is True
    assert load_link_table(str(folder)) == load_tables(folder).links


def test_a_check_that_names_no_tables_takes_envcheck_tables(tmp_path, monkeypatch) -> None:
    """envcheck.check() from a script or a test suite (require()) uses the tables
    ENVCHECK_TABLES names, as the command line does."""
    from envcheck.core import check
    from tests.fixtures import profile

    folder = broken_copy(tmp_path, "links", lambda d: d.update(as_of="2027-01-15"))
    monkeypatch.setenv("ENVCHECK_TABLES", str(folder))
    report = check(facts=profile("h100-server"), requirements=False)
    assert report.tables["links"] == {
        "as_of": "2027-01-15",
        "path": str(folder / "links.json"),
        "builtin": False,
    }
    monkeypatch.delenv("ENVCHECK_TABLES")
    assert check(facts=profile("h100-server"), requirements=False).tables["links"]["builtin"]


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="not a folder"):
        load_tables(tmp_path / "nowhere")


def test_tables_ship_in_the_source_tree_and_wheel_layout() -> None:
    assert (builtin_dir() / "torch_releases.json").is_file()
    shutil.disk_usage(builtin_dir())  # a real folder


# --------------------------------------------------------------------------- versions seen in the wild

_LOCAL = st.sampled_from(
    [
        "",
        "+cpu",
        "+cu118",
        "+cu128",
        "+cu130",
        "+rocm6.2",
        "+rocm6.2.4",
        "+xpu",
        "+cpu.cxx11.abi",
        "+ecf3bae40a",
        "+git1a2b3c4",
        "+computecanada",
    ]
)
_PRE = st.sampled_from(["", "a0", "rc1", ".dev20250601", ".post1", "b2"])


@given(st.integers(0, 3), st.integers(0, 30), st.integers(0, 12), _PRE, _LOCAL)
def test_variant_of_any_torch_version(major, minor, patch, pre, local) -> None:
    version = f"{major}.{minor}.{patch}{pre}{local}"
    variant = builds.variant(version, cuda="12.8" if local in ("", "+ecf3bae40a") else None)
    assert variant is not None
    label = local[1:].split(".")[0] if local else ""
    if label in ("cpu", "cu118", "cu128", "cu130", "xpu"):
        assert variant == label
    if local.startswith("+rocm"):
        assert variant == local[1:]
    if local in ("", "+ecf3bae40a"):
        assert variant == "cu128"  # the CUDA in version.py decides when the label does not


@given(st.text(max_size=30))
def test_version_helpers_never_raise(text: str) -> None:
    builds.variant(text)
    builds.local_label(text)
    parse_driver(text)
    cuda_of_variant(text)


def test_the_builtin_catalogue_is_read_only_by_what_quotes_a_message() -> None:
    """Compiling the message catalogue is most of what loading the tables costs: a check
    that quotes no pasted message never reads it; diagnose reads it, whole."""
    from envcheck.core import check
    from envcheck.diagnose import diagnose_text
    from envcheck.facts import Facts

    tables = load_tables()
    assert "messages" in tables.unread
    check(facts=Facts(), tables=tables, deep=False, requirements=False, observed=())
    assert "messages" in tables.unread
    diagnose_text("RuntimeError: CUDA error: no kernel image is available for execution", tables)
    assert "messages" not in tables.unread
    assert len(tables.messages) > 200 and tables.messages == tuple(tables.messages)
    assert (
        tables.messages[0].id
        == json.loads((builtin_dir() / "messages.json").read_text("utf-8"))["messages"][0]["id"]
    )


def test_a_users_catalogue_is_read_and_checked_when_the_tables_load(tmp_path: Path) -> None:
    doc = json.loads((builtin_dir() / "messages.json").read_text("utf-8"))
    (tmp_path / "messages.json").write_text(json.dumps(doc), "utf-8")
    assert isinstance(load_tables(tmp_path).messages, tuple)


def test_a_built_in_file_is_parsed_only_when_one_of_its_fields_is_used() -> None:
    """Loading parses torch_releases.json alone of the built-in files (every run asks it);
    each other file is dated from its head and parsed on first use (a static check asks three
    to five of the nine). Its head's date is its document's, for every built-in file."""
    from envcheck.tables.groups import GROUPS
    from envcheck.tables.reader import head_as_of, read_document

    tables = load_tables()
    pending = tables.__dict__["_pending"]
    assert {name for name, (doc, _, _) in pending.items() if doc is not None} == {"torch_releases"}
    for name in GROUPS:
        path = builtin_dir() / f"{name}.json"
        assert head_as_of(path) == read_document(path, name)["as_of"] == tables.files[name].as_of
    assert tables.links is not None and "links" not in tables.unread


def test_a_built_in_file_whose_head_misdates_it_is_refused_on_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built-in file parsed on first use is still checked then: a broken one, or one whose
    head dates it otherwise than its document, is a TableError naming the file."""
    from envcheck.tables import load

    for name in load.TABLE_NAMES:
        shutil.copy(builtin_dir() / f"{name}.json", tmp_path / f"{name}.json")
    doc = json.loads((tmp_path / "links.json").read_text("utf-8"))
    (tmp_path / "links.json").write_text(
        json.dumps({"meta": {"as_of": "2020-01-01"}, **doc}), "utf-8"
    )
    text = (tmp_path / "jetpack.json").read_text("utf-8")
    (tmp_path / "jetpack.json").write_text(text[: len(text) // 2], "utf-8")
    monkeypatch.setattr(load, "builtin_dir", lambda: tmp_path)
    tables = load_tables()
    assert tables.files["links"].as_of == "2020-01-01"  # what the head says
    with pytest.raises(TableError, match=r"links\.json: as_of '\d{4}-\d\d-\d\d' is not '2020"):
        _ = tables.links
    with pytest.raises(TableError, match=r"jetpack\.json: not valid JSON"):
        _ = tables.jetpacks


def test_built_in_tables_read_on_use_hold_what_a_checked_load_reads(tmp_path: Path) -> None:
    """The built-in tables read each file's fields the first time one is used
    (tables.groups.OnUse); the same files given as a folder are read and checked at once.
    Field by field they hold the same, a field read once is kept, and ``replace`` works."""
    from envcheck._record import fields, replace
    from envcheck.tables.groups import GROUPS, OnUse

    for name in GROUPS:
        shutil.copy(builtin_dir() / f"{name}.json", tmp_path / f"{name}.json")
    on_use, checked = load_tables(), load_tables(tmp_path)
    assert isinstance(on_use, OnUse) and isinstance(checked, OnUse)
    assert on_use.unread == set(GROUPS) and checked.unread == set()  # the folder's: all read
    assert on_use.gpus is on_use.gpus and on_use.unread == set(GROUPS) - {"gpu_arches"}
    names = {n for names, _ in GROUPS.values() for n in names}
    assert names <= {f.name for f in fields(on_use)}
    for name in sorted(names):
        assert getattr(on_use, name) == getattr(checked, name), name
    again = replace(on_use, refresh_after_days=1)
    assert again.refresh_after_days == 1 and again.releases == on_use.releases
