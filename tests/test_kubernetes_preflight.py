"""deploy/kubernetes: the manifests parse, hold together (one report pod per node, the shared
volume both Jobs mount), and the commands their containers run work: run here with real
envcheck, /reports a temporary folder."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.runner import user_env

yaml = pytest.importorskip("yaml")
DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes"


def documents(name: str) -> List[Dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def pod(job: Dict[str, Any]) -> Dict[str, Any]:
    spec: Dict[str, Any] = job["spec"]["template"]["spec"]
    return spec


def test_the_preflight_runs_one_report_pod_per_node() -> None:
    claim, job = documents("preflight.yaml")
    assert (
        claim["kind"] == "PersistentVolumeClaim" and "ReadWriteMany" in claim["spec"]["accessModes"]
    )
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"]
    spec = pod(job)
    rule = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert rule["topologyKey"] == "kubernetes.io/hostname"
    assert rule["labelSelector"]["matchLabels"] == job["spec"]["template"]["metadata"]["labels"]
    assert spec["restartPolicy"] == "Never"
    container = spec["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"


def test_both_jobs_mount_the_same_claim() -> None:
    claim, preflight = documents("preflight.yaml")
    (compare,) = documents("compare.yaml")
    for job in (preflight, compare):
        spec = pod(job)
        (volume,) = spec["volumes"]
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        (mount,) = spec["containers"][0]["volumeMounts"]
        assert mount["name"] == volume["name"] and mount["mountPath"] == "/reports"
    assert pod(compare)["containers"][0]["volumeMounts"][0]["readOnly"] is True


def run(job: Dict[str, Any], reports: Path, node: str = "") -> subprocess.CompletedProcess:
    container = pod(job)["containers"][0]
    assert container["command"] == ["sh", "-c"]
    script = container["args"][0].replace("/reports", str(reports))
    return subprocess.run(
        ["sh", "-c", script],
        env=user_env({"NODE_NAME": node}),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_containers_commands_write_and_compare_the_reports(tmp_path) -> None:
    _, preflight = documents("preflight.yaml")
    (compare,) = documents("compare.yaml")
    for node in ("gpu-node-1", "gpu-node-2"):
        done = run(preflight, tmp_path, node)
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu-node-1.json", "gpu-node-2.json"]
    done = run(compare, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 machines: gpu-node-[1-2]" in done.stdout and "COMPATIBLE" in done.stdout
