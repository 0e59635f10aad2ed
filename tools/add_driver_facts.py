"""Add CUDA update-release floors, the newest toolkits, torch's bundled CUDA updates and
NVIDIA's forward-compatibility matrix to a cuda_driver.json (one-off import from
/work/shared/reference/cuda_driver.json; each record keeps its source).

``--bundled-only`` regenerates just ``torch_bundled_cuda`` from the reference's PyPI wheel
pins (shared/reference/torch_releases.json, PYPI_WHEEL_META) and NVIDIA's redist manifests
(``CUDART``), leaving the rest of the file untouched:

    python tools/add_driver_facts.py --bundled-only compat_tables/cuda_driver.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REF = Path("/work/shared/reference/cuda_driver.json")
REF_RELEASES = REF.parent / "torch_releases.json"
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
    data["torch_bundled_cuda"] = bundled(json.loads(REF_RELEASES.read_text()), toolkits)
    data["forward_compatibility"] = forward(ref)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# The CUDA runtime (cudart) each toolkit release ships, read for the releases the PyPI
# wheels' pins lead to: its redist manifest, or NVIDIA's own cudart tag or conda-channel
# label of that release. A release missing here is not known, and the mapping never reads
# past one (see update_for).
CUDART = {
    "11.7.0": (
        "11.7.60",
        [
            "NVIDIA's conda channel 'nvidia', package cuda-cudart: 11.7.60 carries the label cuda-11.7.0"
        ],
    ),
    "11.7.1": (
        "11.7.99",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/cuda/manifests/redistrib_11.7.1.json"
            "@f6c829138474b1e3df2d1583b2cfab30ae7436ad (cuda_cudart 11.7.99)",
            "NVIDIA's conda channel 'nvidia', package cuda-cudart-dev: 11.7.99 carries the label "
            "cuda-11.7.1",
        ],
    ),
    "12.1.1": (
        "12.1.105",
        [
            "https://gitlab.com/nvidia/headers/cuda-individual/cudart/-/tags/v12.1.105 "
            "(NVIDIA: 'CUDA 12.1.1 cudart 12.1.105')"
        ],
    ),
    "12.4.0": (
        "12.4.99",
        [
            "https://gitlab.com/nvidia/headers/cuda-individual/cudart/-/tags/cuda-12.4.0 "
            "(NVIDIA: 'CUDA 12.4.0 cudart 12.4.99')"
        ],
    ),
    "12.4.1": (
        "12.4.127",
        [
            "https://gitlab.com/nvidia/headers/cuda-individual/cudart/-/tags/cuda-12.4.1 "
            "(NVIDIA: 'CUDA 12.4.1 cudart 12.4.127')"
        ],
    ),
    "12.6.1": (
        "12.6.68",
        [
            "NVIDIA's conda channel 'nvidia', package cuda-cudart-dev: 12.6.68 carries the label "
            "cuda-12.6.1"
        ],
    ),
    "12.6.3": (
        "12.6.77",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_12.6.3.json"
            "@e944ac95b3cb5c7a818d2c6da220db18afcf7a33 (cuda_cudart 12.6.77, cuda_nvcc 12.6.85)",
            "NVIDIA's conda channel 'nvidia', package cuda-cudart-dev: 12.6.77 carries the label "
            "cuda-12.6.3",
        ],
    ),
    "12.8.1": (
        "12.8.90",
        [
            "NVIDIA's conda channel 'nvidia', package cuda-cudart-dev: 12.8.90 carries the label "
            "cuda-12.8.1"
        ],
    ),
    "12.8.2": (
        "12.8.90",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_12.8.2.json"
            "@d3014e3b99f507913efac23a7278d0d00544f424 (cuda_cudart 12.8.90)"
        ],
    ),
    "13.0.2": (
        "13.0.96",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_13.0.2.json"
            "@ee7ded0ba23b65480c0f6823045ae0ee2f320806 (cuda_cudart 13.0.96, nvcc 13.0.88, "
            "cupti 13.0.85)"
        ],
    ),
    "13.0.3": (
        "13.0.96",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_13.0.3.json"
            "@7ae1489c2186eb4a27b075d3c71033a7a9a863c1 (release_date 2026-04-13, cuda_cudart 13.0.96)",
            "PyPI project cuda-toolkit 13.0.3 (NVIDIA's metapackage): extra cudart = "
            "nvidia-cuda-runtime 13.0.96",
        ],
    ),
    "13.2.1": (
        "13.2.75",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_13.2.1.json"
            "@9c717eacce68ed71efa843789f6ed363acd5a770 (cuda_cudart 13.2.75)"
        ],
    ),
    "13.2.2": (
        "13.2.86",
        [
            "NixOS/nixpkgs:pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_13.2.2.json"
            "@1991f5692977225c11125ebcfac77f7c770fdc4e (release_date 2026-07-16, cuda_cudart 13.2.86)"
        ],
    ),
}

# What a release's manifest reading leaves open, said in the record that depends on it.
UPDATE_NOTES = {
    "12.6.77": "Whether 12.6.2 already shipped cudart 12.6.77 was not read from an NVIDIA "
    "source (NVIDIA's conda channel labels 12.6.68 cuda-12.6.1 and 12.6.77 cuda-12.6.3; a "
    "third-party apt pin pairs cuda-cudart-12-6=12.6.77 with cuda-libraries-12-6=12.6.2). "
    "12.6.3 is recorded either way: its floor (560.35.05) holds whichever of the two the build "
    "was made with; a driver from 560.35.03 up to it is judged minor-version compatible.",
}

# Builds whose pin the reference does not hold, sourced elsewhere (kept as they are), and
# sources that confirm a reference pin.
EXTRA_RECORDS = [
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
            *CUDART["13.0.2"][1],
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
        "torch": "2.10",
        "variant": "cu128",
        "platforms": ["linux-x86_64"],
        "cuda_runtime": "12.8.90",
        "update": "12.8.1",
        "sources": [
            "third-party pip resolver output and dependency lists of torch 2.10.0 "
            "(default PyPI wheel, cu128): 'nvidia-cuda-runtime-cu12==12.8.90 ... (from torch)' "
            "(GitHub code index)",
            *CUDART["12.8.2"][1],
        ],
        "inferred": ["update"],
        "notes": {
            "cuda_runtime": "The pin is the wheel's Requires-Dist on the CUDA runtime "
            "(nvidia-cuda-runtime[-cu12]); it was read from third-party records of installs (pip "
            "resolver output, frozen environments), not from the wheel itself: pip index versions "
            "cannot show it and downloading torch is out of bounds.",
            "update": "cudart 12.8.90 ships in 12.8 Update 1 and again in the redist-only "
            "12.8.2 manifest (2026-04, not in Table 3, released after torch 2.10); the "
            "audit says cu128 ships 12.8.1. An older main-branch matrix "
            "(pytorch/pytorch@00018c9487224886f1c839167a56f4471ab1ebc4) pinned the 12.8 GA "
            "runtime 12.8.57 with a cuDNN that no release carries, so releases before 2.10 "
            "are left unknown.",
        },
    },
]
# A record's platforms as the reference leaves them, where an earlier table said more.
PLATFORM_NOTES = {
    ("2.13", "cu130"): "linux-x86_64 only: the reference read no aarch64 wheel of 2.13, so the "
    "linux-aarch64 build is not known (an earlier record had inferred it from an install of "
    "unknown platform).",
}
CONFIRMED_BY = {
    ("2.13", "cu130"): [
        "third-party frozen environment listing torch==2.13.0+cu130 with "
        "nvidia-cuda-runtime==13.0.96 (GitHub code index, test of a dependency snapshot)"
    ],
}

_WHEEL = re.compile(r"\b(\d+\.\d+\.\d+)(?: PyPI)? wheel\b")
_RUNTIME = re.compile(r"\b((?:nvidia-)?cuda-runtime-cu\d+)(?:==| )(\d+\.\d+\.\d+)")
_TOOLKIT = re.compile(r"\bcuda-toolkit==(\d+\.\d+\.\d+)")
_AARCH64_SAME = re.compile(r"linux aarch64 wheel is the same\b")


def _key(version):
    return [int(x) for x in version.split(".")]


def wheel_pins(releases):
    """The CUDA pins of each release's default PyPI wheel, as the reference read them
    (PYPI_WHEEL_META): the runtime wheel (nvidia-cuda-runtime-cu1X==V) up to 2.7, NVIDIA's
    cuda-toolkit metapackage (cuda-toolkit==X.Y.Z) from 2.11. Linux x86_64, plus aarch64 where
    the reference says that wheel was read and is the same build."""
    pins = []
    for rel in releases["releases"]:
        fact = rel.get("pypi_default_linux_x86_64") or {}
        note = fact.get("note") or ""
        if "PYPI_WHEEL_META" not in fact.get("sources", []):
            continue
        wheel = _WHEEL.search(note)
        runtime = _RUNTIME.search(note)
        toolkit = _TOOLKIT.search(note)
        if wheel is None or (runtime is None and toolkit is None):
            continue
        platforms = ["linux-x86_64"]
        if _AARCH64_SAME.search(note):
            platforms.append("linux-aarch64")
        # The reference shortens nvidia-cuda-runtime-cu12 to cuda-runtime-cu12 in places.
        package = runtime.group(1) if runtime else ""
        package = package if package.startswith("nvidia-") else f"nvidia-{package}"
        pin = f"{package}=={runtime.group(2)}" if runtime else f"cuda-toolkit=={toolkit.group(1)}"
        pins.append(
            {
                "torch": rel["torch_minor"],
                "wheel": wheel.group(1),
                "patches": [p["version"] for p in rel.get("patch_versions", [])],
                "variant": fact["value"],
                "platforms": platforms,
                "pin": pin,
                "cuda_runtime": runtime.group(2) if runtime else None,
                "cuda_toolkit": toolkit.group(1) if toolkit else None,
                "note": note,
            }
        )
    return pins


def table3(toolkits, minor):
    """The releases of CUDA ``minor`` in NVIDIA's Table 3 (its GA and update rows as the
    table holds them), newest first."""
    for t in toolkits:
        if t["cuda"] == minor:
            return sorted([f"{minor}.0"] + [u["version"] for u in t.get("updates", [])], key=_key)[
                ::-1
            ]
    return []


def update_for(cudart, toolkits):
    """The newest Table 3 release whose manifest ships ``cudart``: its driver floor holds
    whichever of the releases that ship the same runtime a build was made with. None when a
    newer release's runtime is not known (it might ship the same one, with a higher floor)."""
    minor = ".".join(cudart.split(".")[:2])
    for release in table3(toolkits, minor):
        if release not in CUDART:
            return None
        if CUDART[release][0] == cudart:
            return release
    return None


def bundled_record(pin, toolkits):
    """One torch_bundled_cuda record from a reference pin, or None when the update is not
    known (said on stderr)."""
    if pin["cuda_toolkit"]:
        if pin["cuda_toolkit"] not in CUDART:
            print(
                f"{pin['wheel']}: cudart of CUDA {pin['cuda_toolkit']} not known", file=sys.stderr
            )
            return None
        cudart = CUDART[pin["cuda_toolkit"]][0]
    else:
        cudart = pin["cuda_runtime"]
    update = update_for(cudart, toolkits)
    if update is None:
        print(f"{pin['wheel']}: no known Table 3 release ships cudart {cudart}", file=sys.stderr)
        return None
    shipping = sorted((r for r, (c, _) in CUDART.items() if c == cudart), key=_key)
    sources = [
        f"PYPI_WHEEL_META (shared/reference/torch_releases.json, torch {pin['torch']} "
        f"pypi_default_linux_x86_64): the default PyPI wheel {pin['wheel']} ({pin['variant']}) "
        f"pins {pin['pin']}",
        *CONFIRMED_BY.get((pin["torch"], pin["variant"]), []),
    ]
    for release in shipping:
        sources += [s for s in CUDART[release][1] if s not in sources]
    inferred = ["update"]
    notes = {}
    others = [v for v in pin["patches"] if v != pin["wheel"]]
    if others:
        inferred.append("torch")
        notes["torch"] = (
            f"The pin was read for the {pin['wheel']} wheel; {', '.join(others)} "
            f"{'is' if len(others) == 1 else 'are'} taken to pin the same."
        )
    if pin["cuda_toolkit"]:
        inferred.append("cuda_runtime")
        notes["cuda_runtime"] = (
            f"The wheel pins NVIDIA's cuda-toolkit metapackage {pin['cuda_toolkit']}, whose "
            f"cudart is nvidia-cuda-runtime {cudart} (the {pin['cuda_toolkit']} redist manifest)."
        )
    elsewhere = [r for r in shipping if r != update]
    notes["update"] = (
        f"cudart {cudart} is the runtime of the {update} redist manifest"
        + (f" (also shipped by {', '.join(elsewhere)})" if elsewhere else "")
        + f"; {update} is the newest release in NVIDIA's Table 3 that ships it."
    )
    not_in_table3 = [r for r in elsewhere if r not in table3(toolkits, ".".join(r.split(".")[:2]))]
    if not_in_table3:
        notes["update"] += (
            f" {', '.join(not_in_table3)} {'is' if len(not_in_table3) == 1 else 'are'} not in "
            "Table 3 (no driver floor published)."
        )
    if (pin["torch"], pin["variant"]) in PLATFORM_NOTES:
        notes["platforms"] = PLATFORM_NOTES[(pin["torch"], pin["variant"])]
    if cudart in UPDATE_NOTES:
        notes["update"] += " " + UPDATE_NOTES[cudart]
    return {
        "torch": pin["torch"],
        "variant": pin["variant"],
        "platforms": pin["platforms"],
        "cuda_runtime": cudart,
        "update": update,
        "sources": sources,
        "inferred": inferred,
        "notes": notes,
    }


def bundled(releases, toolkits):
    """torch_bundled_cuda: a record per reference pin, then the builds sourced elsewhere."""
    records = [r for r in (bundled_record(p, toolkits) for p in wheel_pins(releases)) if r]
    have = {(r["torch"], r["variant"]) for r in records}
    records += [r for r in EXTRA_RECORDS if (r["torch"], r["variant"]) not in have]
    records.sort(key=lambda r: (_key(r["torch"]), r["variant"]))
    return {
        "description": (
            "Which CUDA update release a torch CUDA build bundles on Linux: the CUDA pin of "
            "its default PyPI wheel (nvidia-cuda-runtime-cu1X up to 2.7, NVIDIA's cuda-toolkit "
            "metapackage from 2.11), mapped to the newest release in NVIDIA's Table 3 whose "
            "redist manifest ships that cudart version (its driver floor holds whichever of "
            "those releases the build was made with). The pins are per platform (Linux x86_64; "
            "aarch64 where its wheel was read). A build not listed is not known, its GA floor "
            "is used and said so: the other CUDA variants of a release (PyTorch's own index) "
            "were not read. Windows wheels carry their own CUDA DLLs and are not listed."
        ),
        "records": records,
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


def bundled_only(path: Path) -> None:
    """Regenerate only torch_bundled_cuda of a cuda_driver.json from the reference's wheel
    pins, leaving every other part of the file as it is."""
    data = json.loads(path.read_text())
    data["torch_bundled_cuda"] = bundled(json.loads(REF_RELEASES.read_text()), data["toolkits"])
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    only = "--bundled-only" in args
    paths = [Path(a) for a in args if a != "--bundled-only"]
    if not paths:
        sys.exit("usage: add_driver_facts.py [--bundled-only] CUDA_DRIVER_JSON...")
    missing = [str(p) for p in (REF_RELEASES, *([] if only else [REF])) if not p.is_file()]
    if missing:
        sys.exit(f"add_driver_facts.py: the reference is not here: {', '.join(missing)}")
    for path in paths:
        if only:
            bundled_only(path)
        else:
            main(path)
