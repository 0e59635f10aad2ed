"""Packages that require another torch (PKG006, envcheck.pins): read from real dist-info
folders, judged with the target interpreter's markers, said before an install breaks them,
and the whole story run with real pip against a local index of fake wheels (pip installs a
torch over a pin with only a warning: the reason envcheck must say it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.facts import PackageFacts
from envcheck.install import Wish, resolve
from envcheck.pins import torch_pins
from envcheck.probes.torch_static import probe_torch_static
from tests.fixtures import TABLES, profile, report_of
from tests.localindex import Venv, build_index, make_wheel
from tests.runner import titles_of
from tests.sitetree import add_dist, add_torch


def with_requires(folder: Path, *lines: str, description: str = "") -> None:
    meta = folder / "METADATA"
    text = meta.read_text() + "".join(f"Requires-Dist: {line}\n" for line in lines)
    meta.write_text(text + ("\n" + description if description else ""))


def test_the_static_probe_reads_each_packages_requirement_on_torch(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.13.0+cpu")
    with_requires(add_dist(site, "xformers", "0.0.28"), "torch==2.4.1", "numpy")
    with_requires(add_dist(site, "vllm", "0.9.0"), "torch (==2.13.0)", 'torch>=2; extra == "x"')
    # not torch itself: a package named torch-something, and torchvision (a companion, PKG001's)
    with_requires(add_dist(site, "torch-geometric", "2.6.1"), "torch-sparse>=0.6", "tqdm")
    with_requires(add_dist(site, "torchvision", "0.28.0"), "torch==2.13.0")
    # a Requires-Dist line in the long description is text, not metadata
    with_requires(add_dist(site, "readme-pkg", "1.0"), description="Requires-Dist: torch==1.0\n")
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"))
    got = {d.name: d.requires for d in facts.dependents}
    assert got == {
        "xformers": ["torch==2.4.1"],
        "vllm": ["torch (==2.13.0)", 'torch>=2; extra == "x"'],
    }


def machine(torch: str, *dependents: PackageFacts, python: str = "3.12.3"):
    facts = profile("h100-server")
    facts.python.version = python
    facts.torch.version, facts.torch.cuda = torch, "12.6" if "+cu126" in torch else None
    facts.torch.dependents = list(dependents)
    return facts


XFORMERS = PackageFacts("xformers", "0.0.28", requires=["torch==2.4.1"])


def test_a_package_pinned_to_another_torch_is_an_error_with_both_ways_out():
    report = report_of(machine("2.13.0+cu126", XFORMERS))
    (pkg,) = [f for f in report.findings if f.code == "PKG006"]
    assert pkg.severity.value == "error"
    assert pkg.title == "xformers 0.0.28 requires torch==2.4.1, but torch 2.13.0+cu126 is installed"
    assert "torch==2.4.1" in (pkg.fix or "") and "pip install -U xformers" in (pkg.fix or "")


@pytest.mark.parametrize(
    "requires, python",
    [
        (["torch==2.13.0"], "3.12.3"),  # a local label meets a plain pin (PEP 440)
        (["torch>=2.1,<2.14"], "3.12.3"),
        (['torch==2.4.1; python_version < "3.9"'], "3.12.3"),  # another Python's requirement
        (['torch==2.4.1; extra == "legacy"'], "3.12.3"),  # an extra's, not installed
        (['torch==2.4.1; sys_platform == "win32"'], "3.12.3"),
        (["torch"], "3.12.3"),  # no version: nothing to break
    ],
)
def test_what_does_not_apply_here_is_no_finding(requires, python):
    pkg = PackageFacts("somepkg", "1.0", requires=requires)
    report = report_of(machine("2.13.0+cu126", pkg, python=python))
    assert not [f for f in report.findings if f.code == "PKG006"], requires


def test_a_marker_for_this_python_applies():
    pkg = PackageFacts("oldpkg", "1.0", requires=['torch<2; python_version >= "3.10"'])
    report = report_of(machine("2.13.0+cu126", pkg))
    assert [f.code for f in report.findings if f.code == "PKG006"] == ["PKG006"]


def test_an_unreadable_line_is_not_read_as_a_pin():
    pkg = PackageFacts("odd", "1.0", requires=["torch ===", "torch>=2; python_version ~ 'x'"])
    pins, unread = torch_pins(machine("2.13.0+cu126", pkg), TABLES)
    assert pins == [] and len(unread) == 2


def test_the_install_plan_says_which_packages_it_breaks():
    facts = machine("2.4.1+cu121", XFORMERS)
    facts.torch.cuda = "12.1"
    plan = resolve(facts, TABLES, Wish(torch="2.13.0"), "linux-x86_64")
    assert plan.ok, plan
    assert (
        "xformers 0.0.28 requires torch==2.4.1: torch 2.13.0 does not meet it (pip installs it anyway)"
        in plan.changes
    ), plan.changes
    same = resolve(facts, TABLES, Wish(torch="2.4.1"), "linux-x86_64")
    assert not [c for c in same.changes if "xformers" in c], same.changes


@pytest.mark.slow  # real pip, a venv, envcheck on that venv's interpreter
def test_pip_replaces_torch_under_a_pin_with_a_warning_and_envcheck_says_so(tmp_path):
    wheels = tmp_path / "wheels"
    index = build_index(
        tmp_path / "index",
        {
            "torch": [make_wheel(wheels, "torch", "2.4.1"), make_wheel(wheels, "torch", "2.13.0")],
            "xformers": [make_wheel(wheels, "xformers", "0.0.28", requires=["torch==2.4.1"])],
        },
    )
    venv = Venv.create(tmp_path / "venv")
    venv.pip("install", "xformers==0.0.28", "--index-url", index)

    assert titles_of(venv.python, "PKG006", tmp_path) == []  # torch 2.4.1, as xformers wants
    upgrade = venv.pip("install", "torch==2.13.0", "--index-url", index)
    assert upgrade.returncode == 0  # pip does it...
    assert (
        "xformers 0.0.28 requires torch==2.4.1" in upgrade.stderr + upgrade.stdout
    )  # ...and warns
    assert titles_of(venv.python, "PKG006", tmp_path) == [
        "xformers 0.0.28 requires torch==2.4.1, but torch 2.13.0 is installed"
    ]


# --------------------------------------------------------------------------- PKG007


def test_a_build_label_makes_a_dependent_without_any_requirement(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.13.0+cu126", cuda="12.6")
    add_dist(site, "torch-scatter", "2.1.2+pt21cu121")  # PyG's wheels declare no torch
    add_dist(site, "requests", "2.32.3")
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"))
    assert [(d.name, d.version, d.requires) for d in facts.dependents] == [
        ("torch-scatter", "2.1.2+pt21cu121", [])
    ]


@pytest.mark.parametrize(
    "torch, label, expected",
    [
        (
            "2.13.0+cu126",
            "pt21cu121",
            "was built for torch 2.1 (cu121); torch 2.13.0+cu126 is installed",
        ),
        (
            "2.13.0+cpu",
            "pt213cu126",
            "was built for torch 2.13 (cu126); the installed torch is a cpu build",
        ),
        (
            "2.13.0+cu126",
            "pt213cu118",
            "was built for torch 2.13 (cu118); torch's CUDA is 12.6, another major",
        ),
        (
            "2.10.0+cu128",
            "pt21cu121",
            "was built for torch 2.1 (cu121); torch 2.10.0+cu128 is installed",
        ),
        ("2.13.0+cu130", "pt213cu128", None),  # same torch minor, CUDA 13 vs 12.8: other major!
        ("2.13.0+cu126", "pt213cu128", None),  # same torch minor and CUDA major
        ("2.13.0+cu126", "pt213cpu", None),  # a CPU build runs under a CUDA torch (CPU tensors)
        ("2.10.0+cu128", "pt210cu128", None),  # pt210 is 2.10, not 2.1
    ],
)
def test_pkg007_reads_the_label_with_the_table(torch, label, expected):
    facts = machine(torch, PackageFacts("torch-scatter", f"2.1.2+{label}"))
    facts.torch.cuda = {"cu126": "12.6", "cu128": "12.8", "cu130": "13.0"}.get(torch.split("+")[1])
    got = [f.title for f in report_of(facts).findings if f.code == "PKG007"]
    if label == "pt213cu128" and torch.endswith("cu130"):
        expected = "was built for torch 2.13 (cu128); torch's CUDA is 13.0, another major"
    assert got == ([f"torch-scatter 2.1.2+{label} {expected}"] if expected else []), got


def test_pkg007_fix_points_at_the_packages_index_for_this_torch():
    facts = machine("2.13.0+cu126", PackageFacts("torch-sparse", "0.6.18+pt21cu121"))
    (f,) = [f for f in report_of(facts).findings if f.code == "PKG007"]
    assert (
        "pip install --force-reinstall --no-deps torch-sparse -f https://data.pyg.org/whl/torch-2.13.0+cu126.html"
        in (f.fix or "")
    )
    assert f.evidence[0] == "torch-sparse 0.6.18+pt21cu121: its version's label"


def test_a_package_the_table_does_not_know_is_not_judged_by_its_label():
    facts = machine("2.13.0+cu126", PackageFacts("somepkg", "1.0+pt21cu121"))
    assert not [f for f in report_of(facts).findings if f.code == "PKG007"]


def test_the_plan_says_which_extensions_to_reinstall():
    facts = machine("2.1.2+cu121", PackageFacts("torch-scatter", "2.1.2+pt21cu121"))
    facts.torch.cuda = "12.1"
    plan = resolve(facts, TABLES, Wish(torch="2.13.0"), "linux-x86_64")
    assert plan.ok, plan
    line = next(c for c in plan.changes if c.startswith("torch-scatter"))
    assert line.startswith(
        "torch-scatter 2.1.2+pt21cu121 is built for torch 2.1 (cu121): reinstall"
    )
    assert f"-f https://data.pyg.org/whl/torch-2.13.0+{plan.variant}.html" in line


@pytest.mark.parametrize(
    "entry, error",
    [
        (
            {"label": "^pt(?P<major>[0-9])$"},
            "needs exactly the groups major, minor and one of variant, cuda",
        ),
        ({"label": "^pt(["}, "not a regular expression"),
        ({"index": "http://example.org/{torch}"}, "an https URL"),
        ({"names": ["Torch-Scatter"]}, "normalised"),
    ],
)
def test_the_table_refuses_what_it_cannot_apply(entry, error):
    from envcheck.tables.load import TableError
    from envcheck.tables.read_package_builds import read_package_builds

    base = {
        "names": ["torch-scatter"],
        "label": "^pt(?P<major>[0-9])(?P<minor>[0-9]+)(?P<variant>cpu|cu[0-9]+)$",
        "index": "https://data.pyg.org/whl/torch-{torch}+{variant}.html",
        "sources": ["S"],
    }
    doc = {"sources": {"S": "a source"}, "packages": [{**base, **entry}]}
    with pytest.raises(TableError, match=error):
        read_package_builds(doc, "package_builds.json")


# --------------------------------------------------------------------------- PKG008


def numpy_machine(torch: str, numpy: str, windows: bool = False):
    facts = machine(torch)
    facts.torch.cuda = None
    facts.torch.companions = [PackageFacts("numpy", numpy)]
    if windows:
        facts.system.os, facts.system.machine = "Windows", "AMD64"
    return facts


@pytest.mark.parametrize(
    "torch, numpy, windows, expected",
    [
        (
            "2.2.2+cpu",
            "2.0.1",
            False,
            "torch 2.2.2+cpu was built against numpy<2; numpy 2.0.1 is installed",
        ),
        ("2.2.2+cpu", "1.26.4", False, None),
        ("2.3.1+cpu", "2.0.1", False, None),  # built against NumPy 2: runs with both
        (
            "2.4.0+cpu",
            "2.0.1",
            True,
            "torch 2.4.0+cpu was built against numpy<2; numpy 2.0.1 is installed",
        ),
        ("2.4.1+cpu", "2.0.1", True, None),  # fixed in 2.4.1 on Windows
        ("2.13.0+cpu", "2.3.5", False, None),
    ],
)
def test_pkg008_numpy_2_under_a_torch_built_against_numpy_1(torch, numpy, windows, expected):
    got = [
        f.title
        for f in report_of(numpy_machine(torch, numpy, windows)).findings
        if f.code == "PKG008"
    ]
    assert got == ([expected] if expected else []), got


def test_numpy_is_read_by_the_static_probe(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.2.2+cpu")
    add_dist(site, "numpy", "2.0.1")
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"))
    assert [(c.name, c.version) for c in facts.companions] == [("numpy", "2.0.1")]


def test_the_plan_says_numpy_must_go_back_for_an_old_torch():
    facts = numpy_machine("2.13.0+cpu", "2.1.3")
    plan = resolve(facts, TABLES, Wish(torch="2.2.2", variant="cpu"), "linux-x86_64")
    assert plan.ok, plan
    assert (
        'numpy 2.1.3: torch 2.2.2 was built against numpy<2 (pip install "numpy<2" with it)'
        in plan.changes
    )


def test_no_index_is_made_up_for_a_build_the_index_does_not_serve():
    facts = machine("2.13.0+rocm7.1", PackageFacts("torch-scatter", "2.1.2+pt21cu121"))
    facts.torch.cuda, facts.torch.hip = None, "7.1"
    (f,) = [f for f in report_of(facts).findings if f.code == "PKG007"]
    assert "data.pyg.org" not in (f.fix or "") and "rocm" not in (f.fix or "")


def test_a_shadowed_copy_of_a_package_is_not_judged(tmp_path):
    first, later = tmp_path / "user-site", tmp_path / "site-packages"
    add_torch(later, "2.13.0+cpu")
    with_requires(add_dist(first, "xformers", "0.0.28"), "torch==2.13.0")
    with_requires(add_dist(later, "xformers", "0.0.27"), "torch==2.4.0")
    facts = probe_torch_static([str(first), str(later)], str(later / "torch" / "__init__.py"))
    assert [(d.name, d.version) for d in facts.dependents] == [("xformers", "0.0.28")]


@pytest.mark.parametrize(
    "torch, requires, hint",
    [
        ("2.0.1+cu118", "torch>=2.1.0", "an older release"),  # it needs a newer torch
        ("2.13.0+cu126", "torch==2.4.1", "a newer release"),  # torch moved past its pin
        ("2.0.1+cu118", "torch==2.4.*", "an older release"),
    ],
)
def test_pkg006_points_to_the_release_that_fits_the_way_torch_differs(torch, requires, hint):
    facts = machine(torch, PackageFacts("lightning", "2.5.0", requires=[requires]))
    (f,) = [f for f in report_of(facts).findings if f.code == "PKG006"]
    assert f"made for torch {torch.split('+')[0]} ({hint}" in (f.fix or ""), f.fix


@pytest.mark.parametrize(
    "facts_change",
    [
        {"python": "3.12.1+"},  # a development build's version
        {"kernel": "5.15.0-105-generic"},
    ],
)
def test_markers_that_cannot_be_compared_are_unread_not_a_crash(facts_change):
    pkg = PackageFacts(
        "odd",
        "1.0",
        requires=['torch<2; python_full_version >= "3.8.1"', 'torch<2; platform_release >= "5"'],
    )
    facts = machine("2.13.0+cpu", pkg)
    if "python" in facts_change:
        facts.python.version = facts_change["python"]
    else:
        facts.system.kernel = facts_change["kernel"]
    pins, unread = torch_pins(facts, TABLES)  # whatever packaging makes of them: no exception
    assert len(pins) + len(unread) <= 2
    report_of(facts)  # and the report is made


# --------------------------------------------------------------------------- flash-attn


def flash_attn(wheel: str | None) -> PackageFacts:
    return PackageFacts("flash-attn", "2.8.1", requires=["torch", "einops"], wheel=wheel)


FA_WHEEL = "flash_attn-2.8.1+cu12torch2.7cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"


@pytest.mark.parametrize(
    "torch, cuda, wheel, expected",
    [
        ("2.13.0+cu126", "12.6", FA_WHEEL, "torch 2.13.0+cu126 is installed"),
        ("2.7.1+cu126", "12.6", FA_WHEEL, None),  # its torch minor and CUDA major
        ("2.7.1+cpu", None, FA_WHEEL, "the installed torch is a cpu build"),
        ("2.7.1+cu118", "11.8", FA_WHEEL, "torch's CUDA is 11.8, another major"),
        (  # the older releases label CUDA's major and minor
            "2.1.2+cu121",
            "12.1",
            "flash_attn-2.3.2+cu118torch2.1cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
            "torch's CUDA is 12.1, another major",
        ),
    ],
)
def test_flash_attn_is_judged_by_the_wheel_name_it_was_installed_from(torch, cuda, wheel, expected):
    facts = machine(torch, flash_attn(wheel))
    facts.torch.cuda = cuda
    found = [f for f in report_of(facts).findings if f.code == "PKG007"]
    if expected is None:
        assert found == []
        return
    (f,) = found
    assert f.title.startswith("flash-attn 2.8.1 was built for torch ") and f.title.endswith(
        expected
    ), f.title
    assert f.evidence[0] == f"flash-attn 2.8.1: installed from {wheel}"
    # no index holds flash-attn's builds per torch: it builds (or fetches) against this torch
    assert "pip install --force-reinstall --no-deps --no-build-isolation flash-attn" in (
        f.fix or ""
    )


def test_flash_attn_that_records_nothing_is_not_checkable_never_fine():
    report = report_of(machine("2.13.0+cu126", flash_attn(None)))
    assert not [f for f in report.findings if f.code == "PKG007"]
    assert ("PKG007", "flash-attn 2.8.1 records no torch it was built for") in [
        (n.code, n.why) for n in report.not_run
    ]
    labelled = report_of(machine("2.7.1+cu126", flash_attn(FA_WHEEL)))
    assert not [n for n in labelled.not_run if "flash-attn" in n.why]


@pytest.mark.slow  # real pip installs a release wheel by its file name, as flash-attn's users do
def test_the_wheel_name_pip_records_is_read_back(tmp_path):
    plain = make_wheel(tmp_path / "built", "flash-attn", "2.8.1", requires=["torch", "einops"])
    # flash-attn's release workflow renames the built wheel; its METADATA keeps 2.8.1
    labelled = tmp_path / "release" / "flash_attn-2.8.1+cu12torch2.7cxx11abiTRUE-py3-none-any.whl"
    labelled.parent.mkdir()
    plain.rename(labelled)
    venv = Venv.create(tmp_path / "venv")
    done = venv.pip("install", "--no-deps", str(labelled))
    assert done.returncode == 0, done.stderr
    site = next((tmp_path / "venv").glob("lib*/python*/site-packages"), None) or next(
        (tmp_path / "venv").glob("Lib/site-packages")
    )
    facts = probe_torch_static([str(site)], None)
    (fa,) = [d for d in facts.dependents if d.name == "flash-attn"]
    assert (fa.version, fa.wheel) == ("2.8.1", labelled.name)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"url": 3}',
        '{"url": "https://example.org/simple/flash-attn/"}',  # not a wheel
        '["a list"]',
        '{"dir_info": {"editable": true}, "url": "file:///src/flash-attention"}',
    ],
)
def test_a_direct_url_that_names_no_wheel_records_nothing(tmp_path, text):
    from envcheck.probes.packages import recorded_wheel

    (tmp_path / "direct_url.json").write_text(text)
    assert recorded_wheel(str(tmp_path)) is None


# --------------------------------------------------------------------------- the whole stack


@pytest.mark.slow  # real pip, a venv, the static probe of it, the plan replayed
def test_keep_plans_a_torch_that_keeps_the_stack_and_pip_check_agrees(tmp_path):
    """torch 2.13.0+cu126 under xFormers pinned to 2.4.1 and a PyG extension built for torch
    2.4/cu121, on a simulated H100: the check names both; the plan for the newest torch says
    it breaks them; `--keep` plans 2.4.1, and pip, replaying that command against the local
    index, leaves `pip check` clean (it was not before)."""
    from envcheck.core import check
    from envcheck.facts import GpuFacts
    from envcheck.install import render
    from envcheck.install.wish import installed_wish
    from envcheck.probes import probe
    from envcheck.tables import load_tables
    from envcheck.values import ComputeCapability
    from tests.localindex import TorchFamily, torch_indexes

    releases = (TorchFamily("2.4.1", None), TorchFamily("2.13.0", None))
    indexes = torch_indexes(tmp_path / "torch", ("cu124", "cu126"), releases, default=False)
    wheels = tmp_path / "wheels"
    others = build_index(
        tmp_path / "others",
        {
            "xformers": [make_wheel(wheels, "xformers", "0.0.28", requires=["torch==2.4.1"])],
            "torch-scatter": [make_wheel(wheels, "torch-scatter", "2.1.2+pt24cu121")],
        },
    )
    venv = Venv.create(tmp_path / "venv")
    venv.pip("install", "torch==2.13.0+cu126", "--index-url", indexes["cu126"])
    venv.pip("install", "--no-deps", "xformers", "torch-scatter", "--index-url", others)
    assert venv.pip("check", check=False).returncode != 0  # pip sees the broken pin too

    facts = probe(deep=False, python=str(venv.python))
    facts.nvidia.gpus = [
        GpuFacts(index=0, name="NVIDIA H100 80GB HBM3", compute_capability=ComputeCapability(9, 0))
    ]
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "550.54.14", "12.4"
    facts.nvidia.device_nodes = ["/dev/nvidia0"]
    facts.python.version = "3.11.7"
    report = check(facts=facts, tables=TABLES, requirements=False)
    titles = {f.code: f.title for f in report.findings if f.code in ("PKG006", "PKG007")}
    assert titles == {
        "PKG006": "xformers 0.0.28 requires torch==2.4.1, but torch 2.13.0+cu126 is installed",
        "PKG007": "torch-scatter 2.1.2+pt24cu121 was built for torch 2.4 (cu121); "
        "torch 2.13.0+cu126 is installed",
    }

    newest = resolve(facts, TABLES, Wish(), "linux-x86_64")
    assert any(c.startswith("xformers 0.0.28 requires torch==2.4.1") for c in newest.changes)
    assert any(c.startswith("torch-scatter 2.1.2+pt24cu121 is built for") for c in newest.changes)
    assert "`envcheck install --keep` plans a torch that keeps them working" in newest.changes

    # the shipped tables hold 2.4's architecture lists (the fixture tables do not: a plan
    # resting on unknown kernels is never a fit)
    kept = resolve(facts, load_tables(), installed_wish(facts), "linux-x86_64")
    assert kept.ok and kept.torch == "2.4.1" and str(kept.variant) == "cu124", kept
    assert not [c for c in kept.changes if "xformers" in c or "torch-scatter" in c], kept.changes
    venv.run_command(render(kept, "pip"), indexes)
    assert venv.installed()["torch"] == "2.4.1+cu124"
    done = venv.pip("check", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    after = check(
        facts=_same_gpu(probe(deep=False, python=str(venv.python)), facts),
        tables=TABLES,
        requirements=False,
    )
    assert not [f for f in after.findings if f.code in ("PKG006", "PKG007")]


def _same_gpu(facts, like):
    facts.nvidia, facts.python.version = like.nvidia, like.python.version
    return facts


def test_keep_plans_without_pins_no_release_can_meet_and_says_so():
    from envcheck.install.wish import installed_wish

    facts = machine(
        "2.13.0+cu126",
        PackageFacts("xformers", "0.0.28", requires=["torch==2.4.1"]),
        PackageFacts("vllm", "0.9.0", requires=["torch==2.7.0"]),
    )
    plan = resolve(facts, TABLES, installed_wish(facts), "linux-x86_64")
    assert plan.ok and plan.torch == "2.13.0", plan
    assert plan.notes[-1] == (
        "no release that fits here meets xformers 0.0.28's torch==2.4.1 and vllm 0.9.0's "
        "torch==2.7.0: planned without them"
    )
    # without --keep the plan is what was asked, and says what it breaks
    alone = resolve(facts, TABLES, Wish(torch="2.13.0"), "linux-x86_64")
    assert not [n for n in alone.notes if "meets" in n]


def test_keep_says_only_the_pins_that_bind_and_at_most_three():
    from envcheck.install.wish import installed_wish

    wide = [PackageFacts(f"lib{i}", "1.0", requires=["torch>=2.0"]) for i in range(50)]
    narrow = [PackageFacts(f"old{i}", "1.0", requires=["torch<2.14"]) for i in range(5)]
    facts = machine("2.13.0+cu126", *wide, *narrow)
    plan = resolve(facts, TABLES, installed_wish(facts), "linux-x86_64")
    assert plan.ok and plan.torch.startswith("2.13."), plan
    (note,) = [n for n in plan.notes if n.startswith("keeps ")]
    assert note == (
        "keeps old0 1.0's torch<2.14 and old1 1.0's torch<2.14 and old2 1.0's torch<2.14 and 2 more"
    )
    only_wide = machine("2.13.0+cu126", *wide)
    plan = resolve(only_wide, TABLES, installed_wish(only_wide), "linux-x86_64")
    assert not [n for n in plan.notes if n.startswith("keeps ")], plan.notes
