"""Add CUDA update-release floors, the newest toolkits, torch's bundled CUDA updates and
NVIDIA's forward-compatibility matrix to a cuda_driver.json (one-off import from
/work/shared/reference/cuda_driver.json; each record keeps its source)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REF = Path("/work/shared/reference/cuda_driver.json")
NOTES_1322 = "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"
NOTES_1330 = "https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html"
NOTES_1342 = "https://docs.nvidia.com/cuda/archive/13.4.2/cuda-toolkit-release-notes/index.html"
REDIST_620 = (
    "https://developer.download.nvidia.com/compute/nvidia-driver/redist/redistrib_620.70.06.json"
)
FWD = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
DC_620 = "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html"
DC_615 = "https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html"
DC_580 = "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html"


def _drv(text):
    if text is None or "N/A" in text:
        return None
    match = re.search(r"(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


def updates(ref):
    """Every row of Table 3 after each minor's GA, per CUDA minor."""
    out = {}
    for row in ref["toolkit_driver_table"]:
        ver = row["release_version"].split()[0]
        if not re.fullmatch(r"\d+\.\d+\.\d+", ver):
            continue
        major, minor, _patch = (int(x) for x in ver.split("."))
        if (major, minor) == (10, 2) or "RC" in row["toolkit"] or "Preview" in row["toolkit"]:
            continue
        label = row["toolkit"].replace("CUDA ", "")
        rec = {
            "version": ver,
            "label": label,
            "linux": _drv(row["linux_x86_64_toolkit_driver"]),
            "windows": _drv(row["windows_x86_64_toolkit_driver"]),
            "sources": [row["source"]],
            "inferred": [],
        }
        if row.get("confidence") == "medium":
            rec["notes"] = {"linux": row["read_via"]}
        out.setdefault(f"{major}.{minor}", []).append(rec)
    return out


def main(path: Path) -> None:
    ref = json.loads(REF.read_text())
    data = json.loads(path.read_text())
    ups = updates(ref)
    toolkits = data["toolkits"]
    have = {t["cuda"] for t in toolkits}
    for cuda, _branch, src, inferred, note in (
        (
            "13.4",
            615,
            NOTES_1342,
            [],
            "The 13.4 release notes give a corresponding driver branch (R615) instead of a minimum "
            "version ('Update releases within a CUDA minor version use the same driver branch'); "
            "no per-version Linux or Windows minimum is published.",
        ),
        (
            "13.5",
            620,
            REDIST_620,
            ["branch"],
            "The 13.5 release notes' driver section could not be read; branch R620 is inferred "
            "from the R620 driver redist manifest, which ships cuda_compat for 13.5. No minimum "
            "version is known.",
        ),
    ):
        if cuda not in have:
            toolkits.append(
                {
                    "cuda": cuda,
                    "linux": None,
                    "windows": None,
                    "release": f"CUDA {cuda} GA",
                    "sources": [src],
                    "inferred": inferred,
                    "notes": {"linux": note},
                }
            )
    branches = {
        r["cuda"]: int(r["driver_branch"][1:]) for r in ref["cuda13_corresponding_driver_branch"]
    }
    for t in toolkits:
        minor = t["cuda"]
        if minor in branches:
            t["branch"] = branches[minor]
            if NOTES_1342 not in t["sources"] and minor != "13.5":
                t["sources"].append(NOTES_1342)
        t["updates"] = sorted(
            (u for u in ups.get(minor, []) if u["version"].split(".")[2] != "0"),
            key=lambda u: [int(x) for x in u["version"].split(".")],
        )
        if minor in ("11.0",):  # Table 3 labels 11.0.2 the GA and 11.0.3 Update 1
            t["updates"] = [u for u in ups.get(minor, []) if u["version"] == "11.0.3"]
        if minor == "10.1":
            t.setdefault("notes", {})["updates"] = (
                "The reference copy of Table 3 starts at 10.2.89; NVIDIA's table gives one row for "
                "'CUDA 10.1 (10.1.105 general release, and updates)', so 10.1 updates share the GA "
                "floor (not read here: left without update records)."
            )
        if minor == "13.4":
            t["updates"] = [
                {
                    "version": "13.4.2",
                    "label": "13.4 Update 1",
                    "linux": None,
                    "windows": None,
                    "sources": [NOTES_1342],
                    "inferred": [],
                    "notes": {"linux": "branch R615, no minimum version published"},
                }
            ]
    data["description"] = (
        "CUDA toolkit minor -> minimum driver of its GA release and of each update release "
        "(Linux, Windows; 13.x: the corresponding driver branch); which CUDA update release a "
        "torch CUDA build bundles; the minor-version-compatibility floor per CUDA major and what "
        "it does not cover; forward compatibility (cuda-compat packages); driver branch -> the "
        "CUDA version it reports."
    )
    data["torch_bundled_cuda"] = bundled()
    data["forward_compatibility"] = forward(ref)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def bundled():
    pip_note = (
        "The pin is the wheel's Requires-Dist on the CUDA runtime (nvidia-cuda-runtime[-cu12]); "
        "it was read from third-party records of installs (pip resolver output, frozen "
        "environments), not from the wheel itself: pip index versions cannot show it and "
        "downloading torch is out of bounds."
    )
    return {
        "description": (
            "Which CUDA update release a torch CUDA build bundles on Linux: its pin of the CUDA "
            "runtime wheel (nvidia-cuda-runtime-cu12 / nvidia-cuda-runtime), mapped to the "
            "toolkit release whose redist manifest ships that cudart version. A build not "
            "listed is not known (its GA floor is used, and said so). Windows wheels carry "
            "their own CUDA DLLs and are not listed."
        ),
        "records": [
            {
                "torch": "2.9",
                "variant": "cu130",
                "platforms": ["linux-x86_64"],
                "cuda_runtime": "13.0.96",
                "update": "13.0.2",
                "sources": [
                    "pytorch/pytorch:.github/workflows/generated-linux-binary-manywheel-nightly.yml "
                    "(cu130 PYTORCH_EXTRA_INSTALL_REQUIREMENTS: nvidia-cuda-runtime==13.0.96, "
                    "nvidia-cudnn-cu13==9.13.0.50 as in 2.9; read through a third-party copy)",
                    "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/"
                    "redistrib_13.0.2.json@ee7ded0ba23b65480c0f6823045ae0ee2f320806 "
                    "(cuda_cudart 13.0.96, nvcc 13.0.88, cupti 13.0.85)",
                ],
                "inferred": ["update"],
                "notes": {
                    "update": "cudart 13.0.96 is the runtime of the 13.0.2 (Update 2) redist "
                    "manifest; the same runtime pins nvrtc 13.0.88 and cupti 13.0.85 of that "
                    "release. The workflow is a nightly one whose cuDNN pin equals the 2.9 "
                    "release's; the audit (shared/reference/audit-2026-12.md) also says cu130 "
                    "ships 13.0.2.",
                },
            },
            {
                "torch": "2.13",
                "variant": "cu130",
                "platforms": ["linux-x86_64", "linux-aarch64"],
                "cuda_runtime": "13.0.96",
                "update": "13.0.2",
                "sources": [
                    "third-party frozen environment listing torch==2.13.0+cu130 with "
                    "nvidia-cuda-runtime==13.0.96 (GitHub code index, test of a dependency snapshot)",
                    "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/"
                    "redistrib_13.0.2.json@ee7ded0ba23b65480c0f6823045ae0ee2f320806 "
                    "(cuda_cudart 13.0.96)",
                ],
                "inferred": ["update", "platforms"],
                "notes": {"cuda_runtime": pip_note},
            },
            {
                "torch": "2.10",
                "variant": "cu128",
                "platforms": ["linux-x86_64"],
                "cuda_runtime": "12.8.90",
                "update": "12.8.1",
                "sources": [
                    "third-party pip resolver output and dependency lists of torch 2.10.0 "
                    "(default PyPI wheel, cu128): 'nvidia-cuda-runtime-cu12==12.8.90 ... (from torch)' "
                    "(GitHub code index)",
                    "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/"
                    "redistrib_12.8.2.json@d3014e3b99f507913efac23a7278d0d00544f424 "
                    "(cuda_cudart 12.8.90)",
                ],
                "inferred": ["update"],
                "notes": {
                    "cuda_runtime": pip_note,
                    "update": "cudart 12.8.90 ships in 12.8 Update 1 and again in the redist-only "
                    "12.8.2 manifest (2026-04, not in Table 3, released after torch 2.10); the "
                    "audit says cu128 ships 12.8.1. An older main-branch matrix "
                    "(pytorch/pytorch@00018c9487224886f1c839167a56f4471ab1ebc4) pinned the 12.8 GA "
                    "runtime 12.8.57 with a cuDNN that no release carries, so releases before 2.10 "
                    "are left unknown.",
                },
            },
        ],
    }


def forward(ref):
    fc = ref["forward_compatibility"]
    cols = [int(c.split("+")[0]) for c in fc["compat_matrix_columns"]]
    packages = []
    for name, marks in fc["compat_matrix"].items():
        cuda = name.replace("cuda-compat-", "").replace("-", ".")
        on = [b for b, m in zip(cols, marks) if m == "C"]
        packages.append({"package": name, "cuda": cuda, "branches": on})
    life = {
        535: ("Long Term Support Branch", "June 2026", DC_615),
        570: ("Production Branch", "February 2026", DC_580),
        580: ("Long Term Support Branch", "June 2028", DC_620),
        595: ("Production Branch", "March 2027", DC_620),
        610: ("New Feature Branch", "August 2026", DC_615),
    }
    branches = []
    for b in cols:
        rec = {"branch": b, "sources": [FWD], "inferred": []}
        if b in life:
            rec["designation"], rec["end_of_life"], src = life[b]
            rec["sources"].append(src)
        branches.append(rec)
    for rec in branches:
        if rec["branch"] == 580:
            rec["notes"] = {
                "end_of_life": "June 2028 on the 615/620-era page, August 2028 on the 580-era page"
            }
    return {
        "description": (
            "NVIDIA forward compatibility: a cuda-compat-X-Y package (Linux only) replaces the "
            "user-mode driver so CUDA X.Y builds run on an older kernel driver of a listed "
            "branch. Only on NVIDIA data-center GPUs (and select NGC Server Ready RTX SKUs and "
            "Jetson boards, which the tables do not list), never on GeForce/consumer GPUs "
            "(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)."
        ),
        "linux_only": True,
        "eligible_segments": ["data center"],
        "not_eligible_segments": ["consumer", "workstation/consumer"],
        "packages": packages,
        "branches": branches,
        "sources": [FWD],
        "inferred": ["eligible_segments"],
        "notes": {
            "eligible_segments": "NVIDIA: 'NVIDIA Data Center GPUs', 'select NGC Server Ready SKUs "
            "of RTX cards', 'Jetson boards'. envcheck advises it for the 'data center' segment of "
            "gpu_arches.json only: the NGC Server Ready RTX SKUs are not named, and Jetson uses "
            "JetPack's own compat package (the redist 'CUDA compat L4T').",
            "branches": fc["branches_not_listed"] + " The matrix is the 13.4-era page; R535 and "
            "R570 are listed there although the data-center lifecycle pages give their end of "
            "life as June 2026 and February 2026.",
            "exceptions": fc["feature_exceptions"],
        },
    }


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        main(Path(arg))
