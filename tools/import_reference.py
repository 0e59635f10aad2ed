"""Build compat_tables/ from the sourced reference facts in ../shared/reference/.

The reference keeps every fact as {value, inferred, sources, note}, in the
shape it was gathered. envcheck's tables keep the same facts in the shape the
code asks questions in, and carry over, per record, the sources, which fields
were inferred, and the notes. Nothing is added that the reference does not say;
where the reference gives free text (e.g. "0.15.1 (pip) / 0.15.0 (conda)") the
pip value is taken and the text kept as a note.

    python tools/import_reference.py [REFERENCE_DIR [OUT_DIR]]

Run it again when the reference changes, then review the diff of compat_tables/.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "compat_tables"
PLATFORM_KEYS = {
    "linux_x86_64": "linux-x86_64",
    "linux_aarch64": "linux-aarch64",
    "windows_x86_64": "windows-x86_64",
    "macos_arm64": "macos-arm64",
    "macos_x86_64": "macos-x86_64",
}


def first_version(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    match = re.match(r"\s*(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


class Record:
    """Collects a table record's values with their sources, inferred fields and notes."""

    def __init__(self) -> None:
        self.data: Dict[str, Any] = {}
        self.sources: List[str] = []
        self.inferred: List[str] = []
        self.notes: Dict[str, str] = {}

    def fact(self, name: str, fact: Any, value: Any = None) -> Any:
        """Take a {value, inferred, sources, note} fact; return its value."""
        if not isinstance(fact, dict) or "value" not in fact:
            return fact
        for s in fact.get("sources") or []:
            if s not in self.sources:
                self.sources.append(s)
        if fact.get("inferred"):
            self.inferred.append(name)
        if fact.get("note"):
            self.notes[name] = fact["note"]
        return fact["value"]

    def finish(self) -> Dict[str, Any]:
        out = dict(self.data)
        out["sources"] = self.sources
        out["inferred"] = self.inferred
        if self.notes:
            out["notes"] = self.notes
        return out


# --------------------------------------------------------------------------- torch releases


def torch_release(raw: Dict[str, Any]) -> Dict[str, Any]:
    rec = Record()
    minor = raw["torch_minor"]
    versions = [p["version"] for p in raw["patch_versions"]]
    rec.data["minor"] = minor
    rec.data["versions"] = versions
    dates = [rec.fact("released", p.get("release_date")) for p in raw["patch_versions"]]
    rec.data["released"] = next((d for d in dates if d), None)

    py = rec.fact("python", raw["python"])
    rec.data["python"] = {"min": py["min"], "max": py["max"]}

    plats = rec.fact("platforms", raw["platforms"])
    rec.data["platforms"] = [PLATFORM_KEYS[k] for k, v in plats.items() if v]
    for k, v in plats.items():
        if isinstance(v, str):
            rec.notes[f"platforms.{PLATFORM_KEYS[k]}"] = v

    cuda = rec.fact("variants.cuda", raw["cuda_variants"])
    if isinstance(cuda, dict):  # 1.8: per patch
        union: List[str] = []
        for vs in cuda.values():
            union += [v for v in vs if v not in union]
        rec.notes["variants.cuda"] = "per patch: " + json.dumps(cuda)
        cuda = union
    rocm = rec.fact("variants.rocm", raw["rocm_variants"])
    if isinstance(rocm, dict):
        if "built_per_test_infra" in rocm:
            rocm = rocm["built_per_test_infra"]
        else:  # per patch
            union = []
            for vs in rocm.values():
                union += [v for v in vs if v not in union]
            rocm = union
    xpu = rec.fact("variants.xpu", raw["xpu"])
    rec.data["variants"] = {
        # None means the reference does not know; [] would claim there were none.
        "cuda": cuda,
        "cuda_aarch64": rec.fact("variants.cuda_aarch64", raw.get("cuda_aarch64_variants")),
        "rocm": rocm,
        "xpu": xpu.get("published") if isinstance(xpu, dict) else xpu,
        "cpu": bool(rec.fact("variants.cpu", raw["cpu"])),
    }
    unlisted = rec.fact("variants.unlisted", raw.get("unlisted_variants"))
    if unlisted:
        rec.notes["variants.unlisted"] = "; ".join(unlisted)

    default = {"windows-x86_64": "cpu", "macos-arm64": "cpu"}
    if "macos-x86_64" in rec.data["platforms"]:
        default["macos-x86_64"] = "cpu"
    default = {k: v for k, v in default.items() if k in rec.data["platforms"]}
    linux = rec.fact("default_variant.linux-x86_64", raw["pypi_default_linux_x86_64"])
    if linux:
        default["linux-x86_64"] = linux
    aarch64_note = rec.notes.get("platforms.linux-aarch64", "")
    if "CPU-only" in aarch64_note:
        default["linux-aarch64"] = "cpu"
    elif "CUDA 13.2 build" in aarch64_note:
        default["linux-aarch64"] = "cu132"
    rec.data["default_variant"] = dict(sorted(default.items()))

    for name in ("torchvision", "torchaudio"):
        pairs = rec.fact(name, raw[name]) or {}
        rec.data[name] = {v: first_version(c) for v, c in pairs.items()}
        odd = {v: c for v, c in pairs.items() if c != first_version(c)}
        if odd:
            rec.notes[name] = (rec.notes.get(name, "") + " " + json.dumps(odd)).strip()

    arches = raw["gpu_architectures"]
    lists: Dict[str, List[str]] = {}
    lists_aarch64: Dict[str, List[str]] = {}
    if isinstance(arches, dict) and "value" in arches:
        value = rec.fact("arch_lists", arches)
        if isinstance(value, dict):
            lists.update(value)
    elif isinstance(arches, dict):
        for variant, fact in arches.items():
            value = rec.fact(f"arch_lists.{variant}", fact)
            if variant == "aarch64":
                lists_aarch64.update(value or {})
            elif value:
                lists[variant] = value
    rec.data["arch_lists"] = lists
    rec.data["arch_lists_aarch64"] = lists_aarch64

    bundled: Dict[str, Dict[str, str]] = {}
    for key, libs in (rec.fact("bundled", raw["bundled_libs"]) or {}).items():
        if "RELEASE.md" in key and any(k.startswith(key.split()[0]) for k in bundled):
            continue  # a PyPI-measured value for the same variant wins
        for variant in re.findall(r"cu\d+", key.split(" ")[0]):
            keep = {k: v for k, v in libs.items() if k in ("cudnn", "nccl", "triton")}
            bundled.setdefault(variant, {}).update(
                {k: v for k, v in keep.items() if k not in bundled.get(variant, {})}
            )
    rec.data["bundled"] = bundled
    return rec.finish()


def torch_releases(ref: Path) -> Dict[str, Any]:
    raw = json.loads((ref / "torch_releases.json").read_text())
    sources = {}
    for s in raw["source_index"]:
        where = s.get("url") or f"{s.get('repo')}:{s.get('path')}@{s.get('commit')}"
        sources[s["key"]] = where + (f" ({s['note']})" if s.get("note") else "")
    for r in raw["releases"]:
        for s in r.get("sources", []):
            sources.setdefault(s["key"], s["ref"])
    releases = [torch_release(r) for r in raw["releases"]]
    # torchaudio 2.11 "works with every later PyTorch" (AUDIO_DOCS_211): an allowed pairing.
    for rec in releases:
        if not any(rec["torchaudio"].values()) and rec["minor"] not in ("2.11",):
            major_minor = tuple(int(x) for x in rec["minor"].split("."))
            if major_minor > (2, 11):
                rec["compatible"] = {"torchaudio": ">=2.11,<2.12"}
                rec["notes"]["compatible"] = (
                    "no torchaudio release for this torch; torchaudio 2.11 is built on the "
                    "stable ABI and documented to work with later PyTorch releases"
                )
                if "AUDIO_DOCS_211" not in rec["sources"]:
                    rec["sources"].append("AUDIO_DOCS_211")
    return {
        "schema_version": 1,
        "table": "torch_releases",
        "as_of": raw["compiled"],
        "description": (
            "torch minor releases: Python range, platforms with wheels, wheel variants, "
            "default-index variant per platform, torchvision/torchaudio pairs, GPU "
            "architectures per CUDA variant (get_arch_list() form: sm_XY = native kernels, "
            "compute_XY = PTX), bundled cuDNN/NCCL/triton."
        ),
        "sources": dict(sorted(sources.items())),
        "releases": releases,
    }


# --------------------------------------------------------------------------- CUDA and drivers


def driver_floor(text: Optional[str]) -> Optional[str]:
    if not text:
        return None
    match = re.search(r">=\s*(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


def cuda_driver(ref: Path) -> Dict[str, Any]:
    raw = json.loads((ref / "cuda_driver.json").read_text())
    toolkits: Dict[str, Dict[str, Any]] = {}
    for row in raw["toolkit_driver_table"]:
        cuda = row["cuda_major_minor"]
        ga = "GA" in row["toolkit"] or row["toolkit"].startswith("CUDA 10.2")
        linux, windows = (
            driver_floor(row["linux_x86_64_toolkit_driver"]),
            driver_floor(row["windows_x86_64_toolkit_driver"]),
        )
        if not ga or (linux is None and windows is None):
            continue
        toolkits[cuda] = {
            "cuda": cuda,
            "linux": linux,
            "windows": windows,
            "release": row["toolkit"],
            "sources": [row["source"]],
            "inferred": ["linux", "windows"] if row.get("inferred") else [],
        }
    for fam in raw["minor_version_compatibility"]["families"]:
        if fam["cuda_major"] == 10:
            for cuda, lin, win in re.findall(r"(10\.\d) >=(\d+\.\d+)/(\d+\.\d+)", fam["note"]):
                toolkits.setdefault(
                    cuda,
                    {
                        "cuda": cuda,
                        "linux": lin,
                        "windows": win,
                        "release": f"CUDA {cuda}",
                        "sources": [fam["source"]],
                        "inferred": [],
                    },
                )
    families = [
        {
            "cuda_major": fam["cuda_major"],
            "linux": fam.get("linux_x86_64_exact_floor"),
            "windows": fam.get("windows_x86_64_exact_floor"),
            "branch": fam.get("min_driver_branch"),
            "sources": [fam["source"]] + ([fam["also"]] if fam.get("also") else []),
            "inferred": [],
            "notes": {
                k: fam[k]
                for k in ("linux_floor_basis", "floor_basis", "windows_note")
                if fam.get(k)
            },
        }
        for fam in raw["minor_version_compatibility"]["families"]
        if fam.get("min_driver_branch")
    ]
    caveats = [
        {"id": c["id"], "text": c["text"], "sources": [c["source"]], "inferred": []}
        for c in raw["minor_version_compatibility"].get("caveats", [])
    ]
    branches = [
        {
            "branch": b["driver_branch"],
            "cuda": b["reported_cuda_version"],
            "sources": [b["source"], *list(b.get("other_sources") or [])],
            "inferred": ["cuda"] if b.get("inferred") else [],
        }
        for b in raw["driver_branch_to_cuda_version"]
    ]
    return {
        "schema_version": 1,
        "table": "cuda_driver",
        "as_of": raw["compiled"],
        "description": (
            "CUDA toolkit minor -> minimum driver for full compatibility (the driver of its GA "
            "release, Linux and Windows); the minor-version-compatibility floor per CUDA major "
            "and what it does not cover; driver branch -> the CUDA version it reports."
        ),
        "toolkits": sorted(toolkits.values(), key=lambda t: tuple(map(int, t["cuda"].split(".")))),
        "minor_version_compatibility": families,
        "caveats": caveats,
        "driver_branches": branches,
    }


# --------------------------------------------------------------------------- GPUs


def gpu_arches(ref: Path) -> Dict[str, Any]:
    raw = json.loads((ref / "gpu_arches.json").read_text())
    support = json.loads((ref / "cuda_arch_support.json").read_text())
    families = []
    for a in raw["architecture_matrix"]:
        name = a["architecture"].replace("NVIDIA Ampere architecture", "Ampere")
        first = re.search(r"CUDA (\d+\.\d+)", a["first_cuda_toolkit"])
        last = re.search(r"CUDA (\d+)\.(x|\d+)", a["last_cuda_toolkit"])
        branch = re.search(r"R(\d+)", a["last_driver"] or "")
        families.append(
            {
                "family": name,
                "capabilities": a["compute_capabilities"],
                "first_cuda": first.group(1) if first else None,
                "last_cuda_major": int(last.group(1)) if last else None,
                "last_driver_branch": int(branch.group(1)) if branch else None,
                "sources": [a["source"]],
                "inferred": ["first_cuda", "last_cuda_major"] if a.get("inferred") else [],
                "notes": {"matrix": a["note"]} if a.get("note") else {},
            }
        )
    bc = support["binary_compatibility"]
    sass = {}
    for arch, rule in bc["torch_device_requirement"].items():
        entry: Dict[str, Any] = {}
        if rule.startswith("{"):
            entry["only"] = re.findall(r"\d+\.\d+", rule)
        else:
            lo, hi = re.match(r">=(\d+\.\d+),<(\d+\.\d+)", rule).groups()
            entry["min"], entry["below"] = lo, hi
            exc = re.findall(r"except (\d+\.\d+)", rule)
            if exc:
                entry["except"] = exc
        sass[f"sm_{arch}"] = entry
    gpus = [
        {
            "name": g["name"],
            "capability": g["compute_capability"],
            "family": g["architecture"].replace("NVIDIA Ampere architecture", "Ampere"),
            "segment": g["segment"],
            "sources": [g["source"], *list(g.get("other_sources") or [])],
            "inferred": ["capability"] if g["inferred"] else [],
        }
        for g in raw["gpus"]
    ]
    return {
        "schema_version": 1,
        "table": "gpu_arches",
        "as_of": raw["compiled"],
        "description": (
            "GPU families with their compute capabilities, first CUDA toolkit, last CUDA major "
            "and last driver branch; which devices SASS of each sm_XY runs on (PyTorch's own "
            "DEVICE_REQUIREMENT); GPU names -> compute capability."
        ),
        "sass_compatibility": {
            "rules": sass,
            "ptx": bc["text"],
            "sources": [bc["source"]],
            "inferred": [],
        },
        "families": families,
        "gpus": gpus,
    }


# The key that names a record in each list of records, so that a record of the reference
# and the same record in the table are merged, not replaced.
RECORD_KEYS = ("minor", "cuda", "name", "branch", "capability", "package", "family", "torch")
# Lists that are sets of references: the union is kept, in order.
UNION_LISTS = ("sources", "inferred")


REPLACED: List[str] = []  # the table's values the reference replaced (printed for review)


def merge(existing: Any, new: Any, field: str = "", path: str = "") -> Any:
    """The reference's value where it gives one; everything else the table holds is kept.

    The tables are also extended by other tools (tools/import_arch_lists.py,
    tools/add_driver_facts.py, tools/conda_commands.py, tools/pypi_platform_python.py, the GPU
    name list) with facts the reference does not hold. Rebuilding a table from the reference
    alone would silently drop them; merging keeps them, while every fact the reference states
    replaces the table's."""
    if isinstance(existing, dict) and isinstance(new, dict):
        out = dict(existing)
        for key, value in new.items():
            here = f"{path}.{key}"
            out[key] = merge(existing[key], value, key, here) if key in existing else value
        return out
    if isinstance(existing, list) and isinstance(new, list):
        if field in UNION_LISTS:
            return new + [x for x in existing if x not in new]
        key = _record_key(existing + new)
        if key is not None:
            old = {json.dumps(r[key]): r for r in existing}
            merged = [
                merge(old.get(json.dumps(r[key]), {}), r, "", f"{path}[{r[key]}]") for r in new
            ]
            seen = {json.dumps(r[key]) for r in new}
            return merged + [r for r in existing if json.dumps(r[key]) not in seen]
    if existing != new:
        REPLACED.append(path)
    return new


def _record_key(records: List[Any]) -> Optional[str]:
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    return next((k for k in RECORD_KEYS if all(k in r for r in records)), None)


def main() -> None:
    ref = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "reference"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else OUT
    out.mkdir(exist_ok=True)
    for name, build in (
        ("torch_releases", torch_releases),
        ("cuda_driver", cuda_driver),
        ("gpu_arches", gpu_arches),
    ):
        table = build(ref)
        path = out / f"{name}.json"
        if path.exists():  # keep what other tools added (see merge)
            REPLACED.clear()
            table = merge(json.loads(path.read_text()), table, "", name)
            for where in REPLACED:
                print(f"  the reference replaced {where}")
        path.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
