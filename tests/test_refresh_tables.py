"""tools/refresh_tables.py, run for real: today's tables come back byte for byte, a record
without a source is refused with its name, a change shows in the diff, publishing writes a
manifest the update accepts and refuses a symbolic link. No network: the generators' inputs
are an empty folder here (each step is then skipped and its tables carried over), except in
the one test that uses the stored reference where this checkout has it."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.tables.bundle import MANIFEST, read_manifest, table_files, verify_file
from envcheck.tables.reader import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "refresh_tables.py"
TABLES = ROOT / "compat_tables"
REFERENCE = ROOT.parent / "shared" / "reference"


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
        check=False,
    )


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "sources"
    folder.mkdir()
    return folder


@pytest.fixture
def copy_tables(tmp_path: Path) -> Path:
    folder = tmp_path / "tables"
    shutil.copytree(TABLES, folder)
    return folder


def edit(folder: Path, name: str, change) -> None:
    path = folder / f"{name}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_check_passes_on_todays_tables_without_sources(empty: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run("--check", "--sources", str(empty), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no change: every table reproduced byte for byte" in done.stdout
    assert "skipped" in done.stdout  # every generator: its input is not in the empty folder
    for name in table_files():
        assert (out / name).read_bytes() == (TABLES / name).read_bytes(), name


@pytest.mark.skipif(
    not REFERENCE.is_dir(), reason=f"the stored reference is not here ({REFERENCE})"
)
def test_check_reruns_the_generators_on_the_stored_reference() -> None:
    done = run("--check", "--sources", str(REFERENCE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reference (tools/import_reference.py): regenerated" in done.stdout
    assert "driver facts (tools/add_driver_facts.py): regenerated" in done.stdout
    # each hand correction the reference import would undo is named with its reason
    assert "releases[2.8].platforms: kept" in done.stdout
    assert "windows-arm64 was added by hand" in done.stdout
    assert "curated entries no longer needed" not in done.stdout


def test_a_record_without_a_source_fails_with_its_name(empty: Path, copy_tables: Path) -> None:
    def drop(doc):
        doc["gpus"][5]["sources"] = []

    name = json.loads((TABLES / "gpu_arches.json").read_text(encoding="utf-8"))["gpus"][5]["name"]
    edit(copy_tables, "gpu_arches", drop)
    done = run("--sources", str(empty), "--tables", str(copy_tables))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"gpu_arches.json: gpus[{name}]: a record needs at least one source" in done.stdout
    assert "gpus[5]: a record needs at least one source" in done.stdout  # the loader's own word


def test_a_record_missing_its_sources_field_fails(empty: Path, copy_tables: Path) -> None:
    def drop(doc):
        del doc["releases"][0]["sources"]

    edit(copy_tables, "jetpack", drop)
    done = run("--sources", str(empty), "--tables", str(copy_tables))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "jetpack.json" in done.stdout and "sources" in done.stdout


def test_added_release_variant_and_gpu_name_show_in_the_diff(
    empty: Path, copy_tables: Path, tmp_path: Path
) -> None:
    def add_release(doc):
        new = copy.deepcopy(doc["releases"][-1])
        old_version = new["versions"][0]
        new["minor"], new["versions"] = "2.99", ["2.99.0"]
        for pairs in ("torchvision", "torchaudio"):
            new[pairs] = {"2.99.0": new[pairs].get(old_version)}
        new.pop("versions_by_platform", None)
        doc["releases"].append(new)
        doc["releases"][-2]["variants"]["cuda"].append("cu134")

    def add_gpu(doc):
        gpu = copy.deepcopy(doc["gpus"][0])
        gpu["name"] = "NVIDIA Refresh Test 9000"
        doc["gpus"].append(gpu)

    edit(copy_tables, "torch_releases", add_release)
    edit(copy_tables, "gpu_arches", add_gpu)
    out = tmp_path / "out"
    done = run("--sources", str(empty), "--tables", str(copy_tables), "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "release 2.99 added" in done.stdout
    assert "variants.cuda: +cu134" in done.stdout
    assert "GPU name 'NVIDIA Refresh Test 9000' added" in done.stdout
    assert "(capability " in done.stdout
    written = json.loads((out / "torch_releases.json").read_text(encoding="utf-8"))
    assert written["releases"][-1]["minor"] == "2.99"
    # --check on the same folder fails the same way
    assert run("--check", "--sources", str(empty), "--tables", str(copy_tables)).returncode == 1


def test_a_reformatted_table_is_a_byte_difference(empty: Path, copy_tables: Path) -> None:
    path = copy_tables / "links.json"
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=4) + "\n")
    done = run("--check", "--sources", str(empty), "--tables", str(copy_tables))
    # the same facts laid out otherwise: not byte for byte, so the check fails and says why
    assert done.returncode == 1, done.stdout + done.stderr
    assert "links.json: the same facts, other bytes" in done.stdout


def test_publish_writes_tables_and_a_matching_manifest(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = run("--publish", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    folder = out / f"v{SCHEMA_VERSION}"
    raw = (folder / MANIFEST).read_bytes()
    manifest = read_manifest(raw)
    assert raw == (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    assert sorted(manifest["files"]) == sorted(table_files())
    for name in table_files():
        data = (folder / name).read_bytes()
        assert data == (TABLES / name).read_bytes(), name
        verify_file(manifest, name, data)
    assert manifest["as_of"] == max(f["as_of"] for f in manifest["files"].values())


def test_publish_refuses_a_symlinked_out(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    done = run("--publish", str(link))
    assert done.returncode != 0
    assert "symbolic link" in (done.stdout + done.stderr)
    assert list(real.iterdir()) == []
    # a link where a table goes is refused too, and its target is left alone
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (real / f"v{SCHEMA_VERSION}").mkdir()
    (real / f"v{SCHEMA_VERSION}" / "links.json").symlink_to(target)
    done = run("--publish", str(real))
    assert done.returncode != 0 and "symbolic link" in (done.stdout + done.stderr)
    assert target.read_text() == "{}"


def test_workflows_parse_and_run_the_script() -> None:
    yaml = pytest.importorskip("yaml", reason="no YAML parser installed")
    folder = ROOT / ".github" / "workflows"
    refresh = yaml.safe_load((folder / "refresh-tables.yml").read_text())
    publish = yaml.safe_load((folder / "publish-tables.yml").read_text())
    triggers = refresh.get("on", refresh.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    text = json.dumps(refresh)
    assert "tools/refresh_tables.py" in text and "--fetch" in text
    assert "peter-evans/create-pull-request@v" in text
    text = json.dumps(publish)
    assert "--publish" in text
    assert "actions/upload-pages-artifact@v" in text and "actions/deploy-pages@v" in text


def test_python_ranges_step_rebuilds_from_a_stored_transcript(empty: Path) -> None:
    """The python-ranges step on a transcript made from the table itself changes nothing;
    the newest release without a wheel for its newest Python shows as that release's Python range."""
    tools = str(ROOT / "tools")
    sys.path.insert(0, tools)
    try:
        import pypi_platform_python as pp
    finally:
        sys.path.remove(tools)
    releases = json.loads((TABLES / "torch_releases.json").read_text(encoding="utf-8"))
    answers = {p: {py: [] for py in pp.PYTHONS} for p in pp.PLATFORM_TAGS if p != "windows-arm64"}

    def key(v: str) -> tuple:
        return tuple(int(x) for x in v.split("."))

    for r in releases["releases"]:
        for platform, rng in (r.get("python_by_platform") or {}).items():
            if platform in answers:
                have = (r.get("versions_by_platform") or {}).get(platform, r["versions"])
                for py in pp.PYTHONS:
                    if key(rng["min"]) <= key(py) <= key(rng["max"]):
                        answers[platform][py] += have
    (empty / "pypi_python.json").write_text(json.dumps(answers))
    done = run("--check", "--sources", str(empty))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "python ranges (tools/pypi_platform_python.py): regenerated" in done.stdout
    newest = releases["releases"][-1]
    top = newest["python_by_platform"]["linux-x86_64"]["max"]  # its wheels stop one Python earlier
    answers["linux-x86_64"][top] = [
        v for v in answers["linux-x86_64"][top] if v not in newest["versions"]
    ]
    (empty / "pypi_python.json").write_text(json.dumps(answers))
    done = run("--sources", str(empty))
    assert done.returncode == 1, done.stdout + done.stderr
    line = f"release {newest['minor']}: Python range python_by_platform.linux-x86_64.max:"
    assert line in done.stdout and "<- python ranges" in done.stdout
