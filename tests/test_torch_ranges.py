"""Releases that work only under a range of torch their metadata does not state
(package_builds.json ``torch_ranges``): judged by PKG006 like a pin of their own, said by the
install plan and kept by --keep, with the table's severity and what fails outside it."""

from __future__ import annotations

import json

import pytest

from envcheck.facts import PackageFacts
from envcheck.install import Wish, resolve
from envcheck.install.wish import installed_wish
from envcheck.pins import torch_pins
from envcheck.probes import _watched
from envcheck.probes.torch_static import probe_torch_static
from envcheck.tables import TableError
from envcheck.tables.load import load_package_builds
from tests.fixtures import TABLES, profile, report_of
from tests.sitetree import add_dist, add_torch


def machine(torch: str, *dependents: PackageFacts):
    facts = profile("h100-server")
    facts.torch.version = torch
    facts.torch.cuda = "12.8" if "+cu128" in torch else "12.6" if "+cu126" in torch else None
    facts.torch.dependents = list(dependents)
    return facts


def pkg006(facts):
    return [f for f in report_of(facts).findings if f.code == "PKG006"]


@pytest.mark.parametrize(
    "torchao, torch, needs",
    [
        ("0.14.1+cu128", "2.9.1+cu128", "==2.9.0"),  # built against 2.9.0, patch and all
        ("0.13.0", "2.9.0+cu128", "==2.8.*"),
        ("0.16.0", "2.9.1+cu128", "==2.10.0"),
        ("0.17.0", "2.10.0+cu128", ">=2.11"),  # ABI-stable from 0.17, from torch 2.11 on
        ("0.14.1", "2.9.0+cu128", None),
        ("0.17.0", "2.13.0+cu126", None),
        ("0.16.0+git1a2b3c4", "2.9.1+cu128", None),  # a local build: not the release
        ("0.12.0", "2.13.0+cu126", None),  # the table knows no range for it: not judged
    ],
)
def test_torchao_is_judged_by_the_torch_its_release_was_built_against(torchao, torch, needs):
    found = pkg006(machine(torch, PackageFacts("torchao", torchao)))
    if needs is None:
        assert found == []
        return
    (f,) = found
    assert f.title == f"torchao {torchao} requires torch{needs}, but torch {torch} is installed"
    assert f.severity.value == "warning"  # it skips its kernels; its Python API imports
    assert f.evidence[0] == f"torchao {torchao}: needs torch{needs} (package_builds.json)"
    assert "Skipping import of cpp extensions" in (f.fix or "")


def test_a_requirement_of_its_own_wins_over_the_tables():
    own = PackageFacts("torchao", "0.14.1", requires=["torch>=2.9"])  # a rebuilt metadata
    pins, _ = torch_pins(machine("2.9.1+cu128", own), TABLES)
    assert [(p.rule, str(p.requirement.specifier)) for p in pins] == [(None, ">=2.9")]


def test_the_probe_keeps_a_package_the_ranges_name_though_it_requires_nothing(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.9.1+cu128", cuda="12.8")
    add_dist(site, "torchao", "0.14.1")
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"), None, _watched({}))
    assert [(d.name, d.requires) for d in facts.dependents] == [("torchao", [])]


def test_the_plan_says_what_its_torch_breaks_and_keep_avoids_it():
    facts = machine("2.9.0+cu128", PackageFacts("torchao", "0.14.1"))
    plan = resolve(facts, TABLES, Wish(torch="2.13.0"), "linux-x86_64")
    assert (
        "torchao 0.14.1 requires torch==2.9.0: torch 2.13.0 does not meet it "
        "(pip installs it anyway)"
    ) in plan.changes, plan.changes
    kept = resolve(facts, TABLES, installed_wish(facts), "linux-x86_64")  # --keep's wish
    assert kept.ok and kept.torch == "2.9.0", kept
    assert not [c for c in kept.changes if "torchao" in c], kept.changes


@pytest.mark.parametrize(
    "change, error",
    [
        ({"torch": None}, "missing field 'torch'"),
        ({"versions": "0.17"}, "is not a version specifier"),
        ({"severity": "fatal"}, "one of"),
    ],
)
def test_the_table_refuses_a_range_it_cannot_apply(tmp_path, change, error):
    data = json.loads(TABLES.files["package_builds"].path.read_text())
    data["torch_ranges"][-1].update(change)
    (tmp_path / "package_builds.json").write_text(json.dumps(data))
    with pytest.raises(TableError, match=error):
        load_package_builds(str(tmp_path))


TF_EXTRA = 'torch>=2.2; extra == "torch"'  # 4.56-4.57's [torch] extra: not their runtime check


@pytest.mark.parametrize(
    "transformers, torch, needs",
    [
        ("4.57.6", "2.0.1+cu118", ">=2.1"),  # "Disabling PyTorch because PyTorch >= 2.1 ..."
        ("4.57.6", "2.1.2+cu121", None),  # its extra says 2.2, its check 2.1: it runs
        ("4.51.3", "2.0.1+cu118", None),  # no check before 4.52: not judged here
        ("5.0.0", "2.1.2+cu121", None),  # its check was not read: not in the table
        ("5.5.0", "2.3.1+cu121", ">=2.4"),
        ("5.17.0", "2.4.1+cu124", ">=2.5"),
        ("5.17.0", "2.5.1+cu124", None),
    ],
)
def test_transformers_is_judged_by_its_runtime_check_not_its_extra(transformers, torch, needs):
    tf = PackageFacts("transformers", transformers, requires=[TF_EXTRA])
    found = pkg006(machine(torch, tf))
    if needs is None:
        assert found == []
        return
    (f,) = found
    assert (
        f.title
        == f"transformers {transformers} requires torch{needs}, but torch {torch} is installed"
    )
    assert f.severity.value == "error"  # its models are not available at all
    assert "Disabling PyTorch" in (f.fix or "")


@pytest.mark.slow  # real pip installs the wheels; envcheck checks that venv
def test_a_range_is_read_for_a_package_pip_installed(tmp_path):
    from tests.localindex import Venv, make_wheel
    from tests.runner import titles_of

    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.0.1+cu118")
    make_wheel(wheels, "transformers", "4.57.6", requires=[TF_EXTRA])
    make_wheel(wheels, "torchao", "0.14.1")
    venv = Venv.create(tmp_path / "venv")
    done = venv.pip("install", "--no-deps", *map(str, sorted(wheels.glob("*.whl"))))
    assert done.returncode == 0, done.stderr
    assert sorted(titles_of(venv.python, "PKG006", tmp_path)) == [
        "torchao 0.14.1 requires torch==2.9.0, but torch 2.0.1+cu118 is installed",
        "transformers 4.57.6 requires torch>=2.1, but torch 2.0.1+cu118 is installed",
    ]
