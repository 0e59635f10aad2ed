"""envcheck.require() in a training script that has already imported torch answers from that
import, in its own process: no child, no second import (on every rank under torchrun).
Real CPU torch, real processes; the count of deep-probe children is read by wrapping
envcheck's one place that starts children."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import envcheck

REPO = Path(__file__).resolve().parent.parent

SCRIPT = """
import json, sys
{pre}
from envcheck import _proc
started = []
real_init = _proc.Child.__init__
def counting_init(self, argv, *a, **k):
    started.append(" ".join(map(str, argv)))
    real_init(self, argv, *a, **k)
_proc.Child.__init__ = counting_init
import envcheck
facts = envcheck.require(torch=">=2.0", backend="gloo")
rt = facts.torch_runtime
print(json.dumps({{
    "deep_children": [c for c in started if "torch_deep" in c],
    "status": rt.status,
    "version": rt.version,
    "backends": rt.distributed_backends,
    "arch_list": rt.arch_list,
    "cuda_available": rt.cuda_available,
    "torch_in_envcheck": "torch" in sys.modules,
}}))
"""


def run(pre: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(pre=pre)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not (Path(sys.prefix) / "lib").exists()
    or __import__("importlib").util.find_spec("torch") is None,
    reason="needs torch",
)
@pytest.mark.slow
def test_require_after_import_torch_starts_no_child_and_agrees_with_the_child() -> None:
    in_process = run("import torch")
    assert in_process["deep_children"] == []
    assert in_process["status"] == "ok" and "gloo" in in_process["backends"]
    child = run("")
    assert len(child["deep_children"]) == 1
    assert child["torch_in_envcheck"] is False  # envcheck never imports torch itself
    for key in ("status", "version", "backends", "arch_list", "cuda_available"):
        assert in_process[key] == child[key], key


def test_require_has_an_explicit_keyword_signature() -> None:
    params = inspect.signature(envcheck.require).parameters
    assert "wishes" not in params
    assert {"torch", "python", "cuda", "gpus", "gpu_memory", "bf16", "backend", "ignore"} <= set(
        params
    )
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    with pytest.raises(TypeError):
        envcheck.require(">=2.4")  # type: ignore[misc]
    with pytest.raises(TypeError):
        envcheck.require(tourch=">=2.4")  # type: ignore[call-arg]
