"""The whole probe: every section assembled, overrides applied, failures contained."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from envcheck.probes import probe
from tests.fake_nvml import MACHINES, make_nvml


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "nvidia0").write_text("")
    (root / "sys/module/nvidia").mkdir(parents=True)
    (root / "sys/module/nvidia/version").write_text("550.54.15\n")
    (root / ".dockerenv").write_text("")
    return root


def test_probe_assembles_every_section(tmp_path: Path) -> None:
    environ = dict(os.environ)
    environ.update({"NCCL_DEBUG": "INFO", "ENVCHECK_FACT_SYSTEM_SHM_TOTAL": "64MiB"})
    facts = probe(
        deep=False,
        root=fake_root(tmp_path),
        nvml=make_nvml(MACHINES["8xH100-SXM"]),
        environ=environ,
    )
    assert facts.probe_errors == []
    assert facts.source == "probe" and facts.collected_at.endswith("+00:00")
    assert facts.system.container == "docker"
    assert facts.system.shm_total == 64 * 1024**2 and facts.overrides == ["system.shm_total"]
    assert facts.nvidia.driver_version == "550.54.15" and len(facts.nvidia.gpus) == 8
    assert facts.nvidia.device_nodes == ["/dev/nvidia0"]
    assert facts.python.executable == sys.executable
    assert facts.environment["NCCL_DEBUG"] == "INFO"
    assert facts.torch_runtime.status == "skipped"


def test_a_failing_step_is_recorded_and_the_rest_still_runs(tmp_path: Path) -> None:
    """An 'interpreter' that answers with the wrong shape of data breaks two steps, not the probe."""
    liar = tmp_path / "python"
    liar.write_text(
        '#!/bin/sh\necho \'{"version": "3.12.0", "sys_path": 5, "prefix": "/nowhere"}\'\n'
    )
    liar.chmod(liar.stat().st_mode | stat.S_IXUSR)
    facts = probe(
        deep=False,
        python=str(liar),
        root=fake_root(tmp_path),
        nvml=make_nvml(MACHINES["library-missing"]),
        environ={},
    )
    steps = {e.step for e in facts.probe_errors}
    assert steps == {"python", "torch"}
    assert all("TypeError" in e.message for e in facts.probe_errors)
    assert facts.nvidia.nvml.error == "library_not_found"  # later steps still ran
    assert facts.nvidia.driver_version == "550.54.15"
    assert facts.system.container == "docker"
