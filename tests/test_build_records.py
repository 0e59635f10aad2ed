"""Build-record files (package_builds.json ``record``): packages that write the torch their
compiled code was built against into a file they ship (xFormers' ``cpp_lib.json``,
DeepSpeed's ``git_version_info_installed.py``), read by the static probe and judged by
PKG007; a package the table names that records nothing is not checkable, never fine; one
whose record says nothing was compiled at install (DeepSpeed's ops built at first use) is
bound to no torch. Read from real files, and replayed with real pip into a venv."""

from __future__ import annotations

import json

import pytest

from envcheck.facts import PackageFacts
from envcheck.probes import _watched
from envcheck.probes.torch_static import RECORD_LIMIT, probe_torch_static
from tests.fixtures import TABLES, profile, report_of
from tests.localindex import Venv, make_wheel
from tests.runner import envcheck, titles_of
from tests.sitetree import add_dist, add_torch


def cpp_lib(torch: str, cuda: int | None = 1201) -> str:
    """cpp_lib.json as xFormers' setup.py writes it (json.dumps of its build metadata)."""
    version = {"cuda": cuda, "hip": None, "torch": torch, "python": "3.12.3"}
    return json.dumps({"version": version, "env": {"TORCH_CUDA_ARCH_LIST": "8.0 9.0"}})


def ds_info(torch: str, cuda: str, prebuilt: bool) -> str:
    """git_version_info_installed.py as DeepSpeed's setup.py writes it."""
    ops = {"async_io": False, "fused_adam": prebuilt, "cpu_adam": False}
    info = {"version": torch, "bf16_support": True, "cuda_version": cuda, "nccl_version": "2.21"}
    return (
        "version='0.16.4'\ngit_hash='unknown'\ngit_branch='unknown'\n"
        f"installed_ops={ops}\naccelerator_name='cuda'\ntorch_info={info}\n"
    )


def machine(torch: str, cuda: str | None, *dependents: PackageFacts):
    facts = profile("h100-server")
    facts.torch.version, facts.torch.cuda = torch, cuda
    facts.torch.dependents = list(dependents)
    return facts


def xformers(record: str | None) -> PackageFacts:
    return PackageFacts("xformers", "0.0.28", requires=["numpy"], record=record)


def deepspeed(record: str | None) -> PackageFacts:
    return PackageFacts("deepspeed", "0.16.4", requires=["torch"], record=record)


def pkg007(facts) -> list[str]:
    return [f.title for f in report_of(facts).findings if f.code == "PKG007"]


# --------------------------------------------------------------------------- the probe


def test_the_probe_keeps_what_the_table_names_and_reads_its_record(tmp_path):
    site = tmp_path / "site-packages"
    add_torch(site, "2.13.0+cu126", cuda="12.6")
    add_dist(site, "xformers", "0.0.28")  # no Requires-Dist at all: kept by its name
    (site / "xformers").mkdir()
    (site / "xformers" / "cpp_lib.json").write_text(cpp_lib("2.4.1+cu121"))
    add_dist(site, "deepspeed", "0.16.4")
    (site / "deepspeed").mkdir()
    (site / "deepspeed" / "git_version_info_installed.py").write_text("x" * (RECORD_LIMIT + 10))
    add_dist(site, "mmcv", "2.1.0")  # records nothing, and names no torch: kept by its name
    add_dist(site, "unrelated", "1.0")
    watched = _watched({})
    assert watched["xformers"] == "xformers/cpp_lib.json"
    facts = probe_torch_static([str(site)], str(site / "torch" / "__init__.py"), None, watched)
    got = {d.name: d.record for d in facts.dependents}
    assert set(got) == {"xformers", "deepspeed", "mmcv"}
    assert got["mmcv"] is None
    assert got["xformers"] == cpp_lib("2.4.1+cu121")
    assert len(got["deepspeed"] or "") == RECORD_LIMIT  # a big file is cut, not read whole


def test_a_package_without_its_record_file_has_none(tmp_path):
    site = tmp_path / "site-packages"
    add_dist(site, "xformers", "0.0.28")
    facts = probe_torch_static([str(site)], None, None, {"xformers": "xformers/cpp_lib.json"})
    assert [(d.name, d.record) for d in facts.dependents] == [("xformers", None)]


def test_the_table_refuses_a_record_file_outside_the_site_folder(tmp_path):
    from envcheck.tables import TableError
    from envcheck.tables.load import load_package_builds

    data = json.loads((TABLES.files["package_builds"].path).read_text())
    (entry,) = [e for e in data["packages"] if e["names"] == ["xformers"]]
    entry["record"]["file"] = "../../etc/passwd"
    (tmp_path / "package_builds.json").write_text(json.dumps(data))
    with pytest.raises(TableError, match="relative path inside the site folder"):
        load_package_builds(str(tmp_path))


# --------------------------------------------------------------------------- xFormers


@pytest.mark.parametrize(
    "torch, cuda, built, expected",
    [
        ("2.13.0+cu126", "12.6", "2.4.1+cu121", "built for torch 2.4 (cu121); torch 2.13.0"),
        ("2.1.2+cu118", "11.8", "2.1.2+cu121", "torch's CUDA is 11.8, another major"),
        ("2.1.2+cu121", "12.1", "2.1.2+cu121", None),  # the torch it was built for
        ("2.1.1+cu121", "12.1", "2.1.2+cu121", None),  # same minor, same CUDA major
        ("2.13.0+cu126", "12.6", "2.6.0.dev20241101", "built for torch 2.6; torch 2.13.0"),
    ],
)
def test_xformers_is_judged_by_the_torch_its_cpp_lib_json_names(torch, cuda, built, expected):
    found = pkg007(machine(torch, cuda, xformers(cpp_lib(built))))
    if expected is None:
        assert found == []
    else:
        (title,) = found
        assert title.startswith("xformers 0.0.28 was ") and expected in title, title


def test_xformers_without_its_record_is_not_checkable():
    report = report_of(machine("2.13.0+cu126", "12.6", xformers(None)))
    assert ("PKG007", "xformers 0.0.28 records no torch it was built for") in [
        (n.code, n.why) for n in report.not_run
    ]
    assert not [f for f in report.findings if f.code == "PKG007"]


def test_a_package_that_records_nothing_is_listed_not_checkable():
    mmcv = PackageFacts("mmcv", "2.1.0")
    report = report_of(machine("2.13.0+cu126", "12.6", mmcv))
    assert ("PKG007", "mmcv 2.1.0 records no torch it was built for") in [
        (n.code, n.why) for n in report.not_run
    ]


# --------------------------------------------------------------------------- DeepSpeed


def test_deepspeed_ops_built_for_another_torch_are_an_error_with_a_rebuild():
    facts = machine("2.13.0+cu126", "12.6", deepspeed(ds_info("2.4", "12.1", prebuilt=True)))
    (f,) = [f for f in report_of(facts).findings if f.code == "PKG007"]
    assert f.title == (
        "deepspeed 0.16.4 was built for torch 2.4 (cu121); torch 2.13.0+cu126 is installed"
    )
    assert f.severity.value == "error"
    assert "pip install --force-reinstall --no-deps --no-build-isolation deepspeed" in f.fix
    # what said so, and what DeepSpeed itself does (the table's words, not 'undefined symbol')
    assert f.evidence[0] == "deepspeed 0.16.4: deepspeed/git_version_info_installed.py"
    assert "PyTorch version mismatch!" in f.fix and "undefined symbol" not in f.fix


@pytest.mark.parametrize(
    "torch, cuda, built, expected",
    [
        ("2.4.1+cu121", "12.1", "12.1", None),
        # DeepSpeed compares CUDA major.minor, not the major alone
        (
            "2.4.1+cu124",
            "12.4",
            "12.1",
            "torch 2.4 (cu121); torch's CUDA is 12.4, and its build needs the same CUDA minor",
        ),
        ("2.4.1+cu124", "12.4", "0.0", None),  # built without CUDA: judged by torch alone
        ("2.13.0+cu126", "12.6", "0.0", "torch 2.4 (cpu); torch 2.13.0+cu126 is installed"),
    ],
)
def test_deepspeed_ops_are_judged_by_torch_and_cuda_minor(torch, cuda, built, expected):
    facts = machine(torch, cuda, deepspeed(ds_info("2.4", built, prebuilt=True)))
    want = [] if expected is None else [f"deepspeed 0.16.4 was built for {expected}"]
    assert pkg007(facts) == want


def test_deepspeed_with_ops_compiled_at_first_use_is_bound_to_no_torch():
    report = report_of(
        machine("2.13.0+cu126", "12.6", deepspeed(ds_info("2.4", "12.1", prebuilt=False)))
    )
    assert not [f for f in report.findings if f.code == "PKG007"]
    assert not [n for n in report.not_run if "deepspeed" in n.why]


def test_deepspeed_whose_record_is_missing_or_unreadable_is_not_checkable():
    for record in (None, "torch_info = garbled\ninstalled_ops={'fused_adam': True}\n"):
        report = report_of(machine("2.13.0+cu126", "12.6", deepspeed(record)))
        assert ("PKG007", "deepspeed 0.16.4 records no torch it was built for") in [
            (n.code, n.why) for n in report.not_run
        ], record


# --------------------------------------------------------------------------- replayed


@pytest.mark.slow  # real pip installs the wheels into a venv; envcheck checks that venv
def test_records_installed_by_pip_are_read_and_judged(tmp_path):
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.13.0+cu126")
    make_wheel(
        wheels,
        "xformers",
        "0.0.28",
        files={"xformers/cpp_lib.json": cpp_lib("2.4.1+cu121")},
    )
    make_wheel(
        wheels,
        "deepspeed",
        "0.16.4",
        files={"deepspeed/git_version_info_installed.py": ds_info("2.13", "12.6", True)},
        requires=["torch"],
    )
    venv = Venv.create(tmp_path / "venv")
    done = venv.pip("install", "--no-deps", *map(str, sorted(wheels.glob("*.whl"))))
    assert done.returncode == 0, done.stderr
    titles = titles_of(venv.python, "PKG007", tmp_path)
    assert titles == [
        "xformers 0.0.28 was built for torch 2.4 (cu121); torch 2.13.0+cu126 is installed"
    ]


@pytest.mark.slow  # real pip installs the wheels into a venv; envcheck checks that venv
def test_the_probe_reads_the_records_the_tables_in_use_name(tmp_path):
    """``--tables DIR``: the static probe keeps and reads what DIR's package_builds.json
    names (the table the check judges with), not what the built-in one names."""
    data = json.loads(TABLES.files["package_builds"].path.read_text())
    (entry,) = [e for e in data["packages"] if e["names"] == ["xformers"]]
    entry["record"]["file"] = "xformers/build_info.json"  # a release that moved its record
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "package_builds.json").write_text(json.dumps(data))
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.13.0+cu126")
    record = {"xformers/build_info.json": cpp_lib("2.4.1+cu121")}
    make_wheel(wheels, "xformers", "0.0.28", files=record)
    venv = Venv.create(tmp_path / "venv")
    done = venv.pip("install", "--no-deps", *map(str, sorted(wheels.glob("*.whl"))))
    assert done.returncode == 0, done.stderr
    run = envcheck(
        *("--tables", str(tables), "check", "--no-deep", "--format", "json"),
        *("--python", str(venv.python)),
        cwd=tmp_path,
    )
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout)
    (xformers,) = [d for d in report["facts"]["torch"]["dependents"] if d["name"] == "xformers"]
    assert xformers["record"] == cpp_lib("2.4.1+cu121")
    titles = [f["title"] for f in report["findings"] if f["code"] == "PKG007"]
    assert titles == [
        "xformers 0.0.28 was built for torch 2.4 (cu121); torch 2.13.0+cu126 is installed"
    ]


# --------------------------------------------------------------------------- C++ ABI


def fa(abi: str, torch: str = "2.5", cuda: str = "12") -> PackageFacts:
    wheel = f"flash_attn-2.7.0.post2+cu{cuda}torch{torch}cxx11abi{abi}-cp312-cp312-linux_x86_64.whl"
    return PackageFacts("flash-attn", "2.7.0.post2", requires=["torch"], wheel=wheel)


@pytest.mark.parametrize(
    "torch, cuda, abi, installer, expected",
    [
        # PyPI's x86_64 wheels before 2.6 use the pre-C++11 ABI
        ("2.5.1+cu124", "12.4", "TRUE", "pip", "with the pre-C++11 ABI, and it with the C++11"),
        ("2.5.1+cu124", "12.4", "FALSE", "pip", None),
        # 2.6: the cu126 builds switched, cu124 did not
        ("2.6.0+cu126", "12.6", "FALSE", "uv", "with the C++11 ABI, and it with the pre-C++11"),
        ("2.6.0+cu124", "12.4", "FALSE", "pip", None),
        ("2.7.1+cu126", "12.6", "TRUE", "pip", None),  # all of them from 2.7
        ("2.5.1+cu124", "12.4", "TRUE", "conda", None),  # not a wheel: not known, not judged
        ("2.6.0a0+git1234abc", "12.4", "TRUE", "pip", None),  # built from source: the same
    ],
)
def test_flash_attn_is_judged_by_the_cxx11_abi_its_wheel_names(
    torch, cuda, abi, installer, expected
):
    minor = ".".join(torch.split(".")[:2])
    facts = machine(torch, cuda, fa(abi, torch=minor))
    facts.torch.installer = installer
    found = pkg007(facts)
    if expected is None:
        assert found == []
    else:
        (title,) = found
        assert title.startswith(f"flash-attn 2.7.0.post2 was built for torch {minor} (cu12); ")
        assert expected in title, title


def test_an_abi_that_cannot_be_compared_is_said_not_judged():
    facts = machine("2.5.1+cu124", "12.4", fa("TRUE"))
    facts.torch.installer = "conda"
    why = "flash-attn 2.7.0.post2: its C++ ABI is not compared, torch's is not known"
    assert ("PKG007", why) in [(n.code, n.why) for n in report_of(facts).not_run]
    facts.torch.installer = "pip"  # a wheel of the index: the table knows its ABI
    assert "flash-attn" not in " ".join(n.why for n in report_of(facts).not_run)


def test_a_cpu_cxx11_abi_build_says_so_in_its_label():
    facts = machine("2.1.2+cpu.cxx11.abi", None, fa("TRUE", torch="2.1"))
    facts.torch.installer = "pip"
    titles = pkg007(facts)  # the ABI fits; the CUDA build under a CPU torch does not
    assert titles == [
        "flash-attn 2.7.0.post2 was built for torch 2.1 (cu12); the installed torch is a cpu build"
    ]


def test_the_plan_names_an_extension_the_new_torchs_abi_breaks():
    from envcheck.install import Wish, resolve

    facts = machine("2.6.0+cu124", "12.4", fa("FALSE", torch="2.6"))
    facts.torch.installer = "pip"
    # same torch minor, same CUDA major: only the C++ ABI of 2.6's cu126 wheels differs
    plan = resolve(facts, TABLES, Wish(torch="2.6.0", variant="cu126"), "linux-x86_64")
    assert plan.ok, plan
    (change,) = [c for c in plan.changes if "flash-attn" in c]
    assert change.startswith("flash-attn 2.7.0.post2 is built for torch 2.6 (cu12): reinstall")
