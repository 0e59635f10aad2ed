"""Every --json output validates against its published schema (docs/schema/), the schemas
are what the code generates, and they are strict enough to catch a renamed, missing or
retyped key. Real outputs of the real console script, on this machine and simulated ones."""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

from tests.runner import envcheck  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = {
    p.name.split(".")[0]: json.loads(p.read_text())
    for p in (REPO / "docs" / "schema").glob("*.json")
}
REGISTRY = referencing.Registry().with_resources(
    (s["$id"], referencing.Resource.from_contents(s)) for s in SCHEMAS.values()
)
CORPUS = sorted((REPO / "tests" / "diagnose_corpus").glob("*.txt"))
RTX4090 = {
    "ENVCHECK_GPUS": "NVIDIA GeForce RTX 4090:8.9:24GiB",
    "ENVCHECK_DRIVER_VERSION": "550.54.14",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.4",
}


def validate(kind: str, document: Any) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMAS[kind], registry=REGISTRY)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def is_valid(kind: str, document: Any) -> bool:
    return jsonschema.Draft202012Validator(SCHEMAS[kind], registry=REGISTRY).is_valid(document)


def output(*args: str, env: Dict[str, str] = {}, ok=(0, 1)) -> Dict[str, Any]:  # noqa: B006
    run = envcheck(*args, env=env)
    assert run.returncode in ok, run.stderr
    return json.loads(run.stdout)


def test_the_schemas_are_what_the_code_generates() -> None:
    run = subprocess.run(
        [sys.executable, "tools/json_schemas.py", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("kind", ["compare", "facts", "ranks", "report", "plan", "smoke", "tables"])
def test_each_schema_is_a_valid_draft_2020_12_schema(kind: str) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[kind])


@pytest.mark.parametrize(
    "args, env",
    [
        (("check", "--no-deep", "--format", "json"), {}),
        (("check", "--no-deep", "--json"), RTX4090),  # with install advice
        (("check", "--no-deep", "--json", "--python", "/usr/bin/python3"), {}),  # PEP 668 steps
        (("check", "--no-deep", "--json"), {"ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB"}),
        (("check", "--no-deep", "--json", "--config", "CONFIG"), RTX4090),  # REQ findings
    ],
)
def test_check_reports_validate(args, env, tmp_path: Path) -> None:
    if "/usr/bin/python3" in args and not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3")
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.envcheck]\ntorch = ">=2.4"\ngpus = 2\ngpu_memory = "40GiB"\n')
    args = tuple(str(config) if a == "CONFIG" else a for a in args)
    document = output(*args, env=env)
    if "CONFIG" in args or str(config) in args:
        assert document["requirements"] == str(config)
        assert any(f["code"].startswith("REQ") for f in document["findings"])
    assert document["schema_version"] == 1
    validate("report", document)
    advice = document["install"]
    if advice and advice["command"]:
        joined = " && ".join(shlex.join(step) for step in advice["steps"])
        assert joined == advice["command"] and advice["argv"] == advice["steps"][-1]


def test_a_deep_check_validates() -> None:
    pytest.importorskip("torch")
    validate("report", output("check", "--json", "--timeout", "120"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_diagnose_reports_validate(path: Path) -> None:
    document = output("diagnose", "--json", str(path), ok=(0, 1, 2))
    validate("report", document)


def test_an_unjudged_diagnosis_validates() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "diagnose", "--json", "-"],
        input="nothing to read here\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    document = json.loads(proc.stdout)
    assert proc.returncode == 2 and document["verdict"] == "not judged"
    validate("report", document)


@pytest.mark.parametrize("env", [{}, RTX4090])
def test_probe_facts_validate(env) -> None:
    document = output("probe", "--no-deep", "--json", env=env, ok=(0,))
    assert document["schema_version"] == 1
    validate("facts", document)


@pytest.mark.parametrize(
    "args",
    [
        ("install", "--json"),
        ("install", "--json", "--manager", "uv", "--with", "torchvision"),
        ("install", "--json", "--torch", "2.5", "--variant", "cu113"),  # nothing fits
        (
            "install",
            "--json",
            "--torch",
            "1.10.1",
            "--variant",
            "cu113",
            "--manager",
            "conda",
            "--python-version",
            "3.9",
        ),
    ],
)
def test_install_plans_validate(args) -> None:
    document = output(*args, env=RTX4090)
    assert document["schema_version"] == 1
    validate("plan", document)
    if document["ok"] and document["manager"] in ("pip", "uv"):
        assert document["argv"] == shlex.split(document["command"])


@pytest.mark.slow
def test_smoke_results_validate(cpu_smoke) -> None:
    document = cpu_smoke[1]
    assert document["schema_version"] == 1
    validate("smoke", document)


def test_tables_summary_validates() -> None:
    validate("tables", output("tables", "--json", ok=(0,)))


def test_compare_documents_validate(tmp_path: Path) -> None:
    facts = output("probe", "--json", "--no-deep", env=RTX4090, ok=(0,))
    for name, version in (("node-1", "2.13.0+cpu"), ("node-2", "2.12.0+cpu"), ("node-3", None)):
        other = copy.deepcopy(facts)
        other["system"]["hostname"] = name
        other["torch"].update(installed=True, version=version or "2.13.0+cpu")
        (tmp_path / f"{name}.json").write_text(json.dumps(other))
    (tmp_path / "cut.json").write_text(json.dumps(facts)[:100])
    document = output("compare", "--json", str(tmp_path), ok=(2,))
    assert document["unreadable"] and document["differences"]
    validate("compare", document)
    assert not is_valid("compare", {**document, "exit_code": 5})


def test_the_schemas_catch_a_missing_renamed_or_retyped_key() -> None:
    report = output("check", "--no-deep", "--json", env=RTX4090)
    validate("report", report)
    for change in (
        lambda d: d.pop("verdict"),
        lambda d: d.__setitem__("verdikt", d.pop("verdict")),
        lambda d: d.__setitem__("ready", "yes"),
        lambda d: d["findings"][0].pop("fix"),
        lambda d: d["install"].__setitem__("argv", "pip install torch"),
        lambda d: d["facts"]["nvidia"].__setitem__("driver_versoin", "550"),
        lambda d: d["facts"]["python"].pop("version"),
        lambda d: d.__setitem__("schema_version", 2),
    ):
        broken = copy.deepcopy(report)
        change(broken)
        assert not is_valid("report", broken), change
