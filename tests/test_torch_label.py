"""torch's files (version.py) against its metadata (dist-info): one decision
(compat.torch_label) for INS002, INS005 and the probe's text.

PyPI's torch wheels carry the plain version in their metadata while version.py keeps the
build's label (the 2.11.0 wheel: ``2.11.0+cu130`` beside ``2.11.0``): that is one install
when the label is the release's PyPI default for the platform (tables: default_variant)."""

from __future__ import annotations

from typing import Optional

import pytest

from envcheck.checks.packages import check as packages_check
from envcheck.compat import torch_label
from envcheck.facts import Facts
from tests.fixtures import TABLES, report_of
from tests.runner import envcheck


def _facts(files: str, meta: str, machine: str = "x86_64", os: str = "Linux") -> Facts:
    facts = Facts()
    facts.system.os, facts.system.machine = os, machine
    facts.python.version, facts.python.env_kind = "3.11.7", "venv"
    facts.torch.installed = True
    facts.torch.version, facts.torch.dist_version = files, meta
    facts.torch.location = "/venv/lib/python3.11/site-packages/torch"
    return facts


@pytest.mark.parametrize(
    "files, meta, machine, agree",
    [
        ("2.11.0+cu130", "2.11.0", "x86_64", True),  # the H200 of issue 28: PyPI's own wheel
        ("2.11.0+cu130", "2.11.0", "aarch64", True),  # linux-aarch64's default is cu130 too
        ("2.15.0+cu132", "2.15.0", "x86_64", True),
        ("2.11.0+cu128", "2.11.0", "x86_64", False),  # known not PyPI's: another build's files
        ("2.11.0+cpu", "2.11.0", "x86_64", False),
        ("2.11.0+cu130", "2.10.0", "x86_64", False),  # the public versions differ
        ("2.11.0+cu130", "2.11.0+cu128", "x86_64", False),  # two labels that differ
        ("2.11.0", "2.11.0+cu130", "x86_64", False),  # a label only in the metadata
        ("2.16.0+cu132", "2.16.0", "x86_64", None),  # a release the tables do not hold
        ("2.11.0+cu130", "2.11.0", "ppc64le", None),  # a platform the tables do not hold
        ("2.11.0+cu130", "2.11.0+cu130", "x86_64", "same"),
        ("2.11.0", "2.11.0", "x86_64", "same"),
    ],
)
def test_files_against_metadata(files: str, meta: str, machine: str, agree) -> None:
    label = torch_label(_facts(files, meta, machine), TABLES)
    if agree == "same":
        assert label is None
        return
    assert label is not None and label.agree is agree, label
    codes = [f.code for f in packages_check(_facts(files, meta, machine), TABLES)]
    expected = {True: [], False: ["INS002"], None: ["INS005"]}[agree]
    assert [c for c in codes if c.startswith("INS")] == expected


def test_without_tables_it_is_not_known() -> None:
    label = torch_label(_facts("2.11.0+cu130", "2.11.0"), None)
    assert label is not None and label.agree is None
    assert "not known to the tables" in label.why


def test_an_unknown_label_is_said_and_not_an_error_nor_an_install() -> None:
    report = report_of(_facts("2.16.0+cu132", "2.16.0"))
    (ins005,) = [f for f in report.findings if f.code == "INS005"]
    assert ins005.severity.value == "info" and ins005.command is None
    assert "INS002" not in [f.code for f in report.findings]
    assert report.unverified == ("INS005",)  # READY, as far as the tables know
    assert report.torch_label is not None and report.torch_label.agree is None


@pytest.mark.parametrize(
    "files, meta, expected, absent",
    [
        (
            "2.11.0+cu130",
            "2.11.0",
            "metadata says 2.11.0: PyPI's torch 2.11.0 for linux-x86_64 is the cu130 build",
            "mixed files",
        ),
        ("2.11.0+cu128", "2.11.0", "metadata says 2.11.0: mixed files? PyPI's torch", None),
        ("2.16.0+cu132", "2.16.0", "is not known to the tables", "mixed files"),
    ],
)
def test_the_probe_says_what_the_check_decides(
    files: str, meta: str, expected: str, absent: Optional[str]
) -> None:
    env = {
        "ENVCHECK_FACT_TORCH_INSTALLED": "true",  # the same without a torch in this venv
        "ENVCHECK_FACT_TORCH_VERSION": files,
        "ENVCHECK_FACT_TORCH_DIST_VERSION": meta,
        "ENVCHECK_FACT_SYSTEM_OS": "Linux",
        "ENVCHECK_FACT_SYSTEM_MACHINE": "x86_64",
    }
    probe = envcheck("probe", "--no-deep", env=env)
    text = " ".join(probe.stdout.split())
    assert expected in text, probe.stdout
    if absent:
        assert absent not in text
    check = envcheck("check", "--no-deep", env=env)
    if "mixed files" in expected:
        assert "ERROR INS002" in check.stdout, check.stdout
    else:
        assert "INS002" not in check.stdout, check.stdout
