"""Merge researched CUDA architecture lists into compat_tables/torch_releases.json.

Input: a JSON file of ``{"releases": {minor: {platform: {variant: cell}}}}`` where a
cell holds ``arch_list`` (get_arch_list() form), ``source`` (repo, path, ref, commit,
line: where the build's TORCH_CUDA_ARCH_LIST was read), ``inferred``, ``note`` and
optionally ``measured`` (the list read from a published wheel). Such a file is made
by reading each release branch's build scripts (pytorch/builder up to 2.5, then
pytorch/pytorch's .ci/) and checking wheels.

Only lists the table does not hold yet are added (an existing list is never
overwritten: a conflict is printed for a person to settle). Each added list gets a
source key in the file's ``sources`` map naming repository, path, ref and commit,
``inferred`` when the research says so, and a note.

    python tools/import_arch_lists.py research.json [--platform linux-x86_64]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "compat_tables" / "torch_releases.json"
FIELD = {"linux-x86_64": "arch_lists", "linux-aarch64": "arch_lists_aarch64"}


def source_key(source: dict) -> str:
    digest = hashlib.sha1(json.dumps(source, sort_keys=True).encode()).hexdigest()[:8]
    repo = source.get("repo", "x").split("/")[-1].upper()
    return f"ARCH_{repo}_{digest}"


def describe(source: dict) -> str:
    where = f"https://github.com/{source['repo']}/blob/{source.get('commit') or source.get('ref')}/{source['path']}"
    return f"{where} ({source.get('ref', '')}: {source.get('line', '')})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("research")
    parser.add_argument("--platform", action="append", default=None)
    args = parser.parse_args()
    platforms = args.platform or ["linux-x86_64"]
    research = json.loads(Path(args.research).read_text())["releases"]
    table = json.loads(TABLE.read_text())
    added = conflicts = 0
    for record in table["releases"]:
        cells = research.get(record["minor"], {})
        for platform in platforms:
            field = FIELD[platform]
            lists = record.setdefault(field, {})
            for variant, cell in sorted(cells.get(platform, {}).items()):
                arch = cell.get("arch_list")
                if not arch or variant not in (record["variants"].get("cuda") or []) + (
                    record["variants"].get("cuda_aarch64") or []
                ):
                    continue
                if variant in lists:
                    if list(lists[variant]) != list(arch):
                        conflicts += 1
                        print(
                            f"conflict {record['minor']} {platform} {variant}: table {lists[variant]} research {arch}"
                        )
                    continue
                lists[variant] = list(arch)
                key = source_key(cell["source"])
                table["sources"][key] = describe(cell["source"])
                if key not in record["sources"]:
                    record["sources"].append(key)
                path = f"{field}.{variant}"
                if cell.get("inferred") and path not in record["inferred"]:
                    record["inferred"].append(path)
                note = cell.get("note") or ""
                measured = cell.get("measured")
                if measured:
                    note = (note + " " if note else "") + (
                        f"Measured in {measured['wheel']} ({measured['version']}): "
                        + " ".join(measured["get_arch_flags"])
                    )
                if note:
                    record["notes"][path] = note
                record["notes"].pop(field, None) if record["notes"].get(field, "").startswith(
                    "not researched"
                ) else None
                added += 1
    TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"added {added} lists; {conflicts} conflicts left as they were")


if __name__ == "__main__":
    main()
