"""The code scan (envcheck.scan) on small fixture projects: for each way a change shows in
code, a use that must be found and look-alikes that must not (a method of the project's own,
a call that already passes the keyword, a comment, a string), with the real table."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from packaging.version import Version

from envcheck.scan import load_changes, scan
from envcheck.tables.code_changes import MatchKind, read_changes
from envcheck.tables.reader import TableError
from tests.runner import envcheck

TABLE = load_changes()
HAS_TORCH = importlib.util.find_spec("torch") is not None


def project(tmp_path: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def found(root: Path, torch: str = "2.14", since: str = "") -> List[Tuple[str, str, int]]:
    """(change id, file, line) of every use."""
    result = scan(str(root), Version(torch), TABLE, since=Version(since) if since else None)
    return [(u.change.id, u.file, u.line) for u in result.uses]


def ids(root: Path, torch: str = "2.14") -> List[str]:
    return sorted({c for c, _, _ in found(root, torch)})


# ------------------------------------------------------------------ the table


def test_table_has_sixty_sourced_changes_from_1_10_to_the_newest() -> None:
    assert len(TABLE.changes) >= 60
    releases = {c.torch for c in TABLE.changes}
    assert min(releases) <= Version("1.10") and max(releases) == TABLE.covers
    for change in TABLE.changes:
        assert change.provenance.sources, change.id
        for key in change.provenance.sources:
            assert "https://" in TABLE.source_text(key), (change.id, key)
    kinds = {c.match.kind for c in TABLE.changes}
    assert kinds == set(MatchKind)  # every way of matching is used by a real entry


def test_a_bad_entry_is_refused_with_its_place_named() -> None:
    def doc(match: dict) -> dict:
        return {
            "covers": "2.0",
            "as_of": "2026-12-07",
            "sources": {"S": "https://example.org/notes"},
            "changes": [
                {
                    "id": "x",
                    "torch": "2.0",
                    "kind": "removed",
                    "breaks": True,
                    "match": match,
                    "what": "w",
                    "fix": "f",
                    "sources": ["S"],
                }
            ],
        }

    assert read_changes(doc({"module": "torch._six"}), "t.json").changes[0].id == "x"
    for bad, words in (
        ({"module": "torch._six", "name": "torch.x"}, "exactly one"),
        ({"call": "torch.load"}, "exactly one of 'without' and 'with'"),
        ({"call": "torch.load", "without": "a", "value": 1}, "only a 'with'"),
        ({"name": "torch.load()"}, "not a dotted Python name"),
        ({"cpp": "X", "pattern": "("}, "not a regular expression"),
        ({"script": "x", "unless": "y"}, "unknown field 'unless'"),
    ):
        with pytest.raises(TableError, match=r"t\.json: changes\[0\] \(x\)\.match"):
            read_changes(doc(bad), "t.json")
        with pytest.raises(TableError, match=words.replace("(", r"\(").replace(")", r"\)")):
            read_changes(doc(bad), "t.json")
    late = doc({"module": "torch._six"})
    late["covers"] = "1.13"
    with pytest.raises(TableError, match=re.escape("covers: 1.13 is older than the releases of x")):
        read_changes(late, "t.json")


# ------------------------------------------------------------------ Python


def test_module_imports_and_chains_are_uses_strings_and_comments_are_not(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "from torch._six import inf\n",
            "b.py": "import torch\nx = torch._six.string_classes\n",
            "c.py": "from torch import _six\n",
            "d.py": "import torch._six as six\n",
            "e.py": "# from torch._six import inf\ns = 'torch._six'\nimport torch\n",
            "f.py": "from mylib import _six\nfrom .torch import _six\n",
        },
    )
    uses = [(f, line) for c, f, line in found(root) if c == "torch-six-removed"]
    assert uses == [("a.py", 1), ("b.py", 2), ("c.py", 1), ("d.py", 1)]


def test_names_through_every_kind_of_import_alias(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
            "b.py": "import torch as t\nt.cuda.amp.autocast()\n",
            "c.py": "from torch.cuda import amp\nwith amp.autocast():\n    pass\n",
            "d.py": "from torch.cuda.amp import autocast as ac\nwith ac():\n    pass\n",
            "e.py": "from torch.cuda.amp import *\nautocast()\n",
            "f.py": "from torch.cuda.amp import autocast\n__all__ = ['autocast']\n",
            # look-alikes: the new API, another library's autocast, a rebinding, a local name
            "g.py": "import torch\nwith torch.amp.autocast('cuda'):\n    pass\n",
            "h.py": "from apex.amp import autocast\nautocast()\n",
            "i.py": "try:\n    from torch.cuda.amp import autocast\nexcept ImportError:\n"
            "    autocast = None\nwith autocast():\n    pass\n",
            "j.py": "def f(autocast):\n    return autocast()\n",
        },
    )
    uses = [(f, line) for c, f, line in found(root) if c == "torch-cuda-amp-autocast-deprecated"]
    assert uses == [
        ("a.py", 2),
        ("b.py", 2),
        ("c.py", 2),
        ("d.py", 2),
        ("e.py", 2),
        ("f.py", 1),  # imported and never used: the import (a re-export) is the use
        ("i.py", 5),  # the use, not the `autocast = None` that rebinds it
    ]


def test_calls_without_a_keyword(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\nm = torch.load('m.pt')\n",
            "b.py": "from torch import load\nm = load('m.pt', map_location='cpu')\n",
            # look-alikes: the keyword given, a **kwargs that may carry it, the project's own
            # load, json.load, a mention in a string and a comment
            "c.py": "import torch\nm = torch.load('m.pt', weights_only=True)\n",
            "d.py": "import torch\nm = torch.load('m.pt', **options)\n",
            "e.py": "import torch, json\nclass A:\n    def load(self, p):\n        return p\n"
            "A().load('x')\nself.load('torch.load(x)')\njson.load(f)\n# torch.load(p)\n",
        },
    )
    uses = [(f, line) for c, f, line in found(root, "2.6") if c.startswith("torch-load")]
    assert uses == [("a.py", 2), ("b.py", 2)]
    # on 2.4 the same calls only warn (the deprecation); on 2.6 the default changed
    changes = {c for c, _, _ in found(root, "2.4") if c.startswith("torch-load")}
    assert changes == {"torch-load-weights-only-futurewarning"}
    changes = {c for c, _, _ in found(root, "2.6") if c.startswith("torch-load")}
    assert changes == {"torch-load-weights-only-default"}  # the change, not also its warning


def test_calls_with_a_keyword_and_a_value(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\ntorch.compile(m, backend='onnxrt')\n",
            "b.py": "import torch\ntorch.compile(m, backend='inductor')\ntorch.compile(m)\n",
            "c.py": "import torchvision\nm = torchvision.models.resnet50(pretrained=True)\n",
            "d.py": "from torchvision.models import vit_b_16\nm = vit_b_16(pretrained=True)\n",
            "e.py": "from torchvision.models import vit_b_16\nm = vit_b_16(weights='DEFAULT')\n",
        },
    )
    assert ("torch-compile-onnxrt-backend-removed", "a.py", 2) in found(root)
    assert [f for c, f, _ in found(root) if c == "torch-compile-onnxrt-backend-removed"] == ["a.py"]
    pretrained = [
        (f, line) for c, f, line in found(root) if c == "torchvision-pretrained-deprecated"
    ]
    assert pretrained == [("c.py", 2), ("d.py", 2)]  # any builder under torchvision.models


def test_methods_and_launcher_options(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\ne = torch.symeig(x)\nv = x.symeig(eigenvectors=True)\n",
            "b.py": "import numpy as np\nnp.symeig(x)\n",  # another library's module
            "c.py": "import argparse\np = argparse.ArgumentParser()\n"
            "p.add_argument('--local_rank', type=int)\n",
            "d.py": "p.add_argument('--local_rank', '--local-rank', type=int)\n",
            "e.py": "p.add_argument('--local-rank', type=int)\n",
        },
    )
    uses = found(root, "2.0")
    assert [(f, line) for c, f, line in uses if "symeig" in c] == [("a.py", 2), ("a.py", 3)]
    assert [f for c, f, _ in uses if c == "torch-launch-local-rank-dash"] == ["c.py"]


# ------------------------------------------------------------------ C++/CUDA and scripts


def test_cpp_literals_outside_comments_and_narrowed_by_patterns(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "csrc/a.cu": "#include <THC/THC.h>\n// #include <THC/THC.h>\n/* THC/THC.h\n"
            '   AT_CHECK(x) */\nAT_CHECK(x.is_cuda(), "x");\n',
            "csrc/b.cpp": 'AT_DISPATCH_FLOATING_TYPES(x.type(), "f", [&] {});\n'
            "auto t = other.type();\nAT_CHECK_LATER(x);\n",
            "csrc/c.h": "#include <ATen/ATen.h>\nTORCH_CHECK(x.is_cuda());\n",
        },
    )
    uses = [(c, f, line) for c, f, line in found(root)]
    assert ("torch-thc-header-removed", "csrc/a.cu", 1) in uses
    assert [(f, line) for c, f, line in uses if c == "torch-at-check-removed"] == [("csrc/a.cu", 5)]
    assert [(f, line) for c, f, line in uses if c == "torch-cpp-tensor-type-deprecated"] == [
        ("csrc/b.cpp", 1)
    ]
    assert not [u for u in uses if u[1] == "csrc/c.h"]
    assert len([u for u in uses if u[1] == "csrc/a.cu"]) == 2  # nothing from the comments


def test_scripts_and_dockerfiles(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "run.sh": "#!/bin/sh\n# python -m torch.distributed.launch (old)\n"
            "python -m torch.distributed.launch --nproc_per_node 8 train.py\n",
            "Dockerfile": "FROM python:3.11\nCMD python -m torch.distributed.launch t.py\n",
            "notes.txt": "python -m torch.distributed.launch\n",  # not a script
        },
    )
    uses = [(f, line) for c, f, line in found(root) if c == "torch-distributed-launch-deprecated"]
    assert uses == [("Dockerfile", 2), ("run.sh", 3)]


# ------------------------------------------------------------------ files and releases


def test_environments_vendored_code_and_links_are_not_read(tmp_path: Path) -> None:
    use = "import torch\ntorch.load('x')\n"
    root = project(
        tmp_path,
        {
            "src/m.py": use,
            "venv/pyvenv.cfg": "home = /usr\n",
            "venv/lib/m.py": use,
            "env2/conda-meta/history": "",
            "env2/m.py": use,
            ".tox/py/m.py": use,
            "third_party/x/m.py": use,
            "node_modules/m.py": use,
            "pkg.egg-info/m.py": use,
            "build/lib/m.py": use,
        },
    )
    (root / "linked").symlink_to(root / "src")
    (root / "loop").symlink_to(root)
    result = scan(str(root), Version("2.6"), TABLE)
    assert [u.file for u in result.uses] == ["src/m.py"]
    skipped = {k.relative: k.why for k in result.skipped}
    assert skipped["venv/"] == skipped["env2/"] == "a Python environment"
    assert skipped["third_party/"] == "installed, built or vendored code"
    assert ".tox/" not in skipped  # hidden folders go without a word


def test_any_encoding_and_unparsable_files_are_said_not_crashed(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'\ntorch.load('x')\n"
    )
    (tmp_path / "bad_utf8.py").write_bytes(b"import torch\ns = '\xff\xfe'\ntorch.load('x')\n")
    (tmp_path / "nul.py").write_bytes(b"import torch\x00\ntorch.load('x')\n")
    (tmp_path / "py2.py").write_bytes(b"import torch\nprint 'hi'\ntorch.load('x')\n")
    (tmp_path / "deep.py").write_bytes(
        b"import torch\nx = " + b"(" * 5000 + b")" * 5000 + b"\ntorch.load('x')\n"
    )
    (tmp_path / "ext.cu").write_bytes(b"\xff\xfe#include <THC/THC.h>\n")
    result = scan(str(tmp_path), Version("2.6"), TABLE)
    files = {u.file for u in result.uses}
    assert {"latin.py", "bad_utf8.py", "ext.cu"} <= files
    skipped = {k.relative: k.why for k in result.skipped}
    assert skipped["py2.py"].startswith("not Python 3 (line 2")
    assert "deep.py" in skipped


def test_only_the_changes_in_effect_between_since_and_torch(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\nfrom torch._six import inf\ntorch.load('x')\n"
            "torch.cuda.amp.autocast()\n",
        },
    )
    assert ids(root, "1.13") == []
    assert ids(root, "2.0") == ["torch-six-removed"]
    assert ids(root, "2.6.1+cu124") == [
        "torch-cuda-amp-autocast-deprecated",
        "torch-load-weights-only-default",
        "torch-six-removed",
    ]
    after = sorted({c for c, _, _ in found(root, "2.6", since="2.4")})
    assert after == ["torch-load-weights-only-default"]  # 2.0's and 2.4's are older


def test_a_torch_newer_than_the_table_is_said_unknown(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.py": "import torch\n"})
    newer = Version(f"{TABLE.covers.major}.{TABLE.covers.minor + 1}")
    result = scan(str(root), newer, TABLE)
    assert result.unknown is not None and "not known" in result.unknown
    assert scan(str(root), TABLE.covers, TABLE).unknown is None


# ------------------------------------------------------------------ the command


def test_command_text_exit_codes_and_strict(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "a.py": "import torch\nm = torch.load('m.pt')\n",
            "b.py": "import torch\ntorch.cuda.amp.autocast()\n",
        },
    )
    run = envcheck("scan", str(root), "--torch", "2.6")
    assert run.returncode == 1, run.stderr
    assert "a.py:2  m = torch.load('m.pt')" in run.stdout
    assert "torch 2.6 changed torch.load(...) without weights_only=" in run.stdout
    assert run.stdout.rstrip().endswith(
        "1 use that breaks and 1 deprecated use on torch 2.6 (2 changes)"
    )
    (root / "a.py").write_text("import torch\nm = torch.load('m.pt', weights_only=True)\n")
    assert envcheck("scan", str(root), "--torch", "2.6").returncode == 0
    assert envcheck("scan", str(root), "--torch", "2.6", "--strict").returncode == 1
    bad = envcheck("scan", str(root), "--torch", "two")
    assert bad.returncode == 2 and "'two' is not a torch version" in bad.stderr
    missing = envcheck("scan", str(root / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    since = envcheck("scan", str(root), "--torch", "2.4", "--since", "2.6")
    assert since.returncode == 2 and "2.6 is not older than torch 2.4" in since.stderr


def test_default_torch_is_the_installed_one(tmp_path: Path) -> None:
    import importlib.metadata

    root = project(tmp_path, {"a.py": "import torch\n"})
    doc = json.loads(envcheck("scan", str(root), "--format", "json").stdout)
    if HAS_TORCH:
        assert doc["torch"] == str(Version(importlib.metadata.version("torch")))
        assert doc["torch_from"].startswith("installed")
    else:  # the CI runs without torch: the newest release the table covers, and why
        assert doc["torch"] == str(TABLE.covers)
        assert doc["torch_from"].startswith("no torch installed here")


def test_machine_formats(tmp_path: Path) -> None:
    import jsonschema

    from envcheck.cli.scan import SCAN_FORMATS as OFFERED
    from envcheck.report.scan_text import SCAN_FORMATS as RENDERED

    assert list(OFFERED) == list(RENDERED)  # --format offers what the registry renders

    root = project(tmp_path, {"m.py": "import torch\nm = torch.load('m.pt')\n"})
    doc = json.loads(envcheck("scan", str(root), "--torch", "2.6", "--json").stdout)
    schema = json.loads(Path("docs/schema/scan.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["uses"] == [
        {
            "change": "torch-load-weights-only-default",
            "file": "m.py",
            "line": 2,
            "column": 5,
            "text": "m = torch.load('m.pt')",
        }
    ]
    assert doc["changes"][0]["sources"][0].startswith("https://")
    sarif = json.loads(envcheck("scan", str(root), "--torch", "2.6", "--format", "sarif").stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    assert run["tool"]["driver"]["rules"][0]["id"] == "torch-load-weights-only-default"
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["region"] == {"startLine": 2, "startColumn": 5}
    github = envcheck("scan", "m.py", "--torch", "2.6", "--format", "github", cwd=root).stdout
    assert github.startswith("::error file=m.py,line=2,col=5,title=envcheck scan%3A torch 2.6")
    markdown = envcheck("scan", str(root), "--torch", "2.6", "--format", "markdown").stdout
    assert "| torch 2.6 |" in markdown and "`m.py:2`" in markdown


# A match statement's cases have no line numbers of their own (Python 3.10 and later).
MATCH_STATEMENT = (
    "match x:\n    case 1 if t.symeig(x):\n        pass\n" if sys.version_info >= (3, 10) else ""
)


def test_the_partial_walk_finds_what_a_full_walk_finds(tmp_path: Path) -> None:
    """Only statements over lines holding a change's word (or a name an import bound to a
    changed API) are walked in full: on every form above, nothing is lost by that."""
    from envcheck.scan.python_code import parse, scan_tree

    root = project(
        tmp_path,
        {
            "a.py": "import torch as t\nfrom torch.cuda.amp import autocast as ac\n"
            "@t.jit.script\ndef f(x):\n    return x\n"
            "class A(t.cuda.amp.GradScaler):\n    def g(self):\n        with ac():\n"
            "            return t.load(\n                'x')\n"
            "try:\n    from torch._six import inf\nexcept ImportError:\n    inf = None\n"
            "def h():\n    from torch import load as tl\n    return tl('x')\n"
            "lambda: t.floor_divide(1, 2)\n" + MATCH_STATEMENT,
        },
    )
    python = [c for c in TABLE.between(None, Version("2.14")) if c.match.kind.python]
    tree, _ = parse((root / "a.py").read_bytes())
    assert tree is not None
    full = {(c.id, line) for c, line, _ in scan_tree(tree, python, None)}
    fast = {(u.change.id, u.line) for u in scan(str(root), Version("2.14"), TABLE).uses}
    assert fast <= full and len(fast) >= 7
    superseded = full - fast  # deprecations whose removal or change is reported there
    by_id = {c.id: c for c in python}
    for ident, line in superseded:
        newer = [i for i, at in fast if at == line and by_id[i].torch > by_id[ident].torch]
        assert newer, (ident, line)


def test_check_code_adds_findings_and_says_when_not_judged(tmp_path: Path) -> None:
    root = project(
        tmp_path, {"m.py": "import torch\nfrom torch._six import inf\ntorch.cuda.amp.autocast()\n"}
    )
    run = envcheck("check", "--no-deep", "--format", "json", "--code", str(root), cwd=root)
    doc = json.loads(run.stdout)
    by_code = {f["code"]: f for f in doc["findings"]}
    assert by_code["COD001"]["title"] == "torch 2.0 removed torch._six: 1 use in the code"
    assert "m.py:2  from torch._six import inf" in by_code["COD001"]["evidence"]
    assert by_code["COD001"]["fix"]
    assert by_code["COD002"]["severity"] == "info"
    plain = json.loads(envcheck("check", "--no-deep", "--format", "json", cwd=root).stdout)
    assert not [f for f in plain["findings"] if f["code"].startswith("COD")]
    assert any(n["code"] == "COD001" and "--code" in n["why"] for n in plain["not_run"])


@pytest.mark.skipif(not HAS_TORCH, reason="needs an installed torch to upgrade from")
def test_install_says_what_the_upgrade_changes_for_the_projects_code(tmp_path: Path) -> None:
    """The suite's torch is 2.13: a plan for 2.14 crosses 2.14's changes only."""
    root = project(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "src/m.py": "import torch\nL = torch.cholesky(a)\nfrom torch._six import inf\n",
        },
    )
    run = envcheck("install", "--torch", "2.14", "--variant", "cpu", cwd=root / "src")
    assert run.returncode == 0, run.stderr
    notes = run.stdout.split("lists every place):\n", 1)[1]
    assert notes.startswith("  torch 2.14 removed torch.cholesky (breaks): 1 use (src/m.py:2)")
    assert "_six" not in notes  # 2.0's change is not crossed by 2.13 -> 2.14
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"  # in no project
    outside.mkdir()
    (outside / "m.py").write_text("import torch\ntorch.cholesky(a)\n")
    quiet = envcheck("install", "--torch", "2.14", "--variant", "cpu", cwd=outside)
    assert "lists every place" not in quiet.stdout  # not in a project: nothing is read
