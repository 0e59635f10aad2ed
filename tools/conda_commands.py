"""Regenerate compat_tables/conda_pytorch.json and tests/conda_commands.json from PyTorch's
previous-versions page (the conda commands of torch 1.8 .. 2.5).

The page (pytorch/pytorch.github.io ``_get_started/previous-versions.md``) gives, per torch
version, one ``conda install`` line per build: an "OSX" block and a "Linux and Windows"
block (1.8.2 LTS: separate Linux and Windows lines). Each line names the companions, the
package that selects the build (``cudatoolkit=X`` up to 1.12, ``pytorch-cuda=X`` from
1.13, ``cpuonly``; none on macOS) and the channels. This tool turns each line into data:
the table keeps what the resolver needs (variant, package, channels, companions, which
platforms), the test file keeps the lines themselves, so the test compares envcheck's
command with the page's and not with the table it was built from.

    python tools/conda_commands.py PAGE.md SOURCE_KEY [--official OFFICIAL.md]

PAGE.md is the page text (e.g. ``git --git-dir=... show COMMIT:_get_started/previous-versions.md``);
SOURCE_KEY names it in the table's ``sources``. Lines that the official revision reads
differently are listed in CORRECTIONS below (with why), and are applied over PAGE.md.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
FIRST, LAST = Version("1.8.0"), Version("2.5.1")

SOURCES = {
    "PV_OFFICIAL": "pytorch/pytorch.github.io:_get_started/previous-versions.md@e3f009bbc0d7509ed5c85b633313ec72aa2d1a40 (official page source, entries v1.0.0..v2.3.1; read through the code index: the repository snapshot is too large to fetch)",
    "PV_KR_MIRROR": "PyTorchKR/pytorch.kr:_get_started/previous-versions.md@1c9bf4720e160b498f1aecd14e4567f787d4f4df (third-party mirror that copies upstream previous-versions.md command blocks verbatim, here from pytorch/pytorch.github.io@5d83345; entries to v2.12.1; the only stored copy with the v2.4.0..v2.5.1 blocks as source text)",
    "PV_PAGE_PTORG": "https://pytorch.org/get-started/previous-versions (official rendered page; copy whose newest entry is v2.9.1: no conda commands from v2.6.0)",
    "CONDA_DEPRECATION": "https://github.com/pytorch/pytorch/issues/138506 ([Announcement] Deprecating PyTorch's official Anaconda channel: 2.5 is the last release published to the pytorch channel; quoted in scikit-learn/scikit-learn#30390 and pytorch/tutorials#3428)",
    "TI_MATRIX_2_5": "pytorch/test-infra:tools/scripts/generate_binary_build_matrix.py@df43f446096f5281825abaab5c9988a10f814e86 (release/2.5: conda builds for CUDA 11.8, 12.1, 12.4 with pytorch-cuda=X -c pytorch -c nvidia, cpuonly -c pytorch; no ROCm conda builds)",
    "TI_MATRIX_2_4": "pytorch/test-infra:tools/scripts/generate_binary_build_matrix.py@d04e7c0f5acc0a4008b74822e8f56686c838208c (release/2.4: CUDA_ARCHES release 11.8, 12.1; no ROCm conda builds)",
}

# (torch, heading label) -> (the official revision's line, why). The mirror reads the
# 1.9.1 CPU line as "pytorch==1.9.0"; the official source reads 1.9.1, and the line
# sits under v1.9.1 with torchvision 0.10.1 (1.9.1's pair).
CORRECTIONS: Dict[Tuple[str, str], Tuple[str, str]] = {
    ("1.9.1", "CPU Only"): (
        "conda install pytorch==1.9.1 torchvision==0.10.1 torchaudio==0.9.1 cpuonly -c pytorch",
        "PV_KR_MIRROR reads 'pytorch==1.9.0' here; PV_OFFICIAL reads 'pytorch==1.9.1', "
        "which pairs with the line's torchvision 0.10.1",
    ),
}

HEADING = re.compile(r"^### v(\d+\.\d+\.\d+)")


def sections(text: str) -> Dict[str, str]:
    """torch version -> the text of its '### vX.Y.Z' section."""
    out: Dict[str, str] = {}
    current: Optional[str] = None
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            current = m.group(1)
            out[current] = ""
        elif line.startswith("## "):
            current = None
        elif current:
            out[current] += line + "\n"
    return out


def conda_lines(section: str) -> List[Tuple[str, str, str]]:
    """(block heading, label comment, command) for each conda line of a section."""
    conda = (
        section.split("#### Conda", 1)[1].split("#### Wheel", 1)[0]
        if "#### Conda" in section
        else ""
    )
    out = []
    block, label = "", ""
    for raw in conda.splitlines():
        line = raw.strip()
        if line.startswith("##### "):
            block = line[6:].strip()
        elif (
            line.startswith("# ")
            and not line.startswith("# NOTE")
            and "channel is required" not in line
        ):
            if not line.lower().startswith("# pytorch lts"):
                label = line[2:].strip()
        elif line.startswith("conda install"):
            out.append((block, label, " ".join(line.split())))
    return out


def platforms_of(block: str, label: str, release_platforms: List[str]) -> List[str]:
    """The envcheck platforms a line is for. 'Linux and Windows' is read as x86_64 (the
    pytorch channel's CUDA builds are linux-64 and win-64; the page does not cover
    linux-aarch64); 'OSX' as the macOS platforms with wheels of that torch version (1.9.1
    has no macOS arm64 wheel: its 'OSX' line is not read as one)."""
    if block == "OSX":
        return [p for p in ("macos-x86_64", "macos-arm64") if p in release_platforms]
    if "(Linux)" in label:
        return ["linux-x86_64"]
    if "(Windows)" in label:
        return ["windows-x86_64"]
    return ["linux-x86_64", "windows-x86_64"]


def parse(command: str) -> Dict[str, Any]:
    tokens = command.split()[2:]
    pins: Dict[str, Optional[str]] = {}
    package: Optional[str] = None
    channels: List[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "-c":
            channels.append(tokens[i + 1])
            i += 2
            continue
        name, _, version = tok.partition("==")
        if name in ("pytorch", "torchvision", "torchaudio"):
            pins[name] = version or None
        elif package is None:
            package = tok
        else:
            raise ValueError(f"unexpected token {tok!r} in {command!r}")
        i += 1
    if package is None or package == "cpuonly":
        variant = "cpu"
    else:
        m = re.fullmatch(r"(cudatoolkit|pytorch-cuda)=(\d+)\.(\d+)", package)
        if not m:
            raise ValueError(f"unknown build package {package!r} in {command!r}")
        variant = f"cu{m.group(2)}{m.group(3)}"
    return {"pins": pins, "package": package, "channels": channels, "variant": variant}


def main(argv: List[str]) -> None:
    page, key = Path(argv[0]), argv[1]
    releases = json.loads((ROOT / "compat_tables" / "torch_releases.json").read_text())
    platforms_by_version = {
        v: [
            p
            for p in r["platforms"]
            if v in (r.get("versions_by_platform") or {}).get(p, r["versions"])
        ]
        for r in releases["releases"]
        for v in r["versions"]
    }
    pip_pairs = {
        v: (r["torchvision"].get(v), r["torchaudio"].get(v))
        for r in releases["releases"]
        for v in r["versions"]
    }
    records, commands = [], []
    for torch, section in sections(page.read_text()).items():
        if not FIRST <= Version(torch) <= LAST:
            continue
        builds: List[Dict[str, Any]] = []
        sources = {key}
        notes: Dict[str, str] = {}
        pins: Dict[str, Optional[str]] = {}
        for block, label, command in conda_lines(section):
            source = key
            fixed = CORRECTIONS.get((torch, label))
            if fixed and block != "OSX":
                notes[f"builds.{label}"] = fixed[1]
                commands.append(
                    {
                        "torch": torch,
                        "platforms": platforms_of(block, label, platforms_by_version[torch]),
                        "command": fixed[0],
                        "source": "PV_OFFICIAL",
                        "also": {"source": key, "command": command, "why": fixed[1]},
                    }
                )
                command, source = fixed[0], "PV_OFFICIAL"
                sources.add(source)
            else:
                commands.append(
                    {
                        "torch": torch,
                        "platforms": platforms_of(block, label, platforms_by_version[torch]),
                        "command": command,
                        "source": key,
                    }
                )
            got = parse(command)
            for name, version in got["pins"].items():
                if pins.setdefault(name, version) != version:
                    raise ValueError(f"{torch}: {name} pinned {pins[name]} and {version}")
            builds.append(
                {
                    "platforms": platforms_of(block, label, platforms_by_version[torch]),
                    "variant": got["variant"],
                    "package": got["package"],
                    "channels": got["channels"],
                }
            )
        if not builds:
            continue
        if pins.get("pytorch") not in (None, torch):
            raise ValueError(f"{torch}: the page pins pytorch {pins['pytorch']}")
        covers = sorted({p for b in builds for p in b["platforms"]})
        record: Dict[str, Any] = {
            "torch": torch,
            "torchvision": pins.get("torchvision"),
            "torchaudio": pins.get("torchaudio"),
            "covers": covers,
            "builds": builds,
        }
        inferred = ["covers", "builds.platforms"]
        notes["builds.platforms"] = (
            "the page's 'Linux and Windows' block is read as linux-x86_64 and windows-x86_64, "
            "its 'OSX' block as the macOS platforms with wheels of this release; "
            "linux-aarch64 is not covered (unknown)"
        )
        if pins.get("pytorch") is None:  # 1.8.2 LTS: the page pins nothing
            pv, pa = pip_pairs[torch]
            record["torchvision"], record["torchaudio"] = pv, pa
            inferred += ["torchvision", "torchaudio"]
            notes["torchvision"] = (
                "the LTS page's conda lines pin no versions ('pytorch torchvision torchaudio "
                "... -c pytorch-lts'); the companions are those of its pip lines"
            )
            record["python_max"] = "3.8"
            notes["python_max"] = (
                "page: 'PyTorch LTS version 1.8.2 is only supported for Python <= 3.8'"
            )
            notes["covers"] = "page: 'macOS is currently not supported for LTS'"
            record["covers"] = sorted(set(covers) | {"macos-x86_64"})
        pv, pa = pip_pairs.get(torch, (None, None))
        if (pv, pa) != (record["torchvision"], record["torchaudio"]):
            notes["torchaudio"] = (
                f"conda pairs torchvision {record['torchvision']} / torchaudio "
                f"{record['torchaudio']}; the pip lines pair {pv} / {pa}"
            )
        if Version(torch) >= Version("2.4"):
            sources.add("PV_PAGE_PTORG")
            sources.add("TI_MATRIX_2_5" if torch.startswith("2.5") else "TI_MATRIX_2_4")
            if torch.startswith("2.4"):
                notes["builds"] = (
                    "the page gives pytorch-cuda=12.4 for 2.4.x; test-infra's release/2.4 "
                    "matrix lists CUDA 11.8 and 12.1 only; the page's lines are kept (the "
                    "pip record of 2.4 has cu124 too)"
                )
        record["sources"] = sorted(sources)
        record["inferred"] = inferred
        record["notes"] = notes
        records.append(record)
    records.sort(key=lambda r: Version(r["torch"]))
    table = {
        "schema_version": 1,
        "table": "conda_pytorch",
        "as_of": "2026-12-03",
        "description": (
            "The conda view of PyTorch's own 'pytorch' channel, torch 1.8.0 to 2.5.1: per torch "
            "version and platform, the builds PyTorch's previous-versions page gives conda "
            "commands for (variant, the package that selects it, channels) and the companion "
            "versions of those commands. Generated by tools/conda_commands.py. A version or "
            "platform not listed is not known."
        ),
        "sources": SOURCES,
        "channel": {
            "name": "pytorch",
            "last": "2.5",
            "sources": ["CONDA_DEPRECATION", "PV_PAGE_PTORG", "PV_KR_MIRROR"],
            "inferred": [],
            "notes": {
                "last": "from v2.6.0 the previous-versions page has no conda commands; "
                "conda-forge builds torch itself",
                "name": "PyTorch deprecated the channel; whether it still serves every "
                "package listed here is not verified (pytorch/pytorch#104754: it once dropped "
                "packages older than 1.5.1)",
            },
        },
        "releases": records,
    }
    (ROOT / "compat_tables" / "conda_pytorch.json").write_text(json.dumps(table, indent=1) + "\n")
    test = {
        "source": {k: SOURCES[k] for k in ("PV_OFFICIAL", "PV_KR_MIRROR")},
        "normalised": "runs of spaces collapsed to one (the page has two before pytorch-cuda=11.8 in 2.4.x and 2.5.x)",
        "commands": commands,
    }
    (ROOT / "tests" / "conda_commands.json").write_text(json.dumps(test, indent=1) + "\n")
    print(f"{len(records)} releases, {len(commands)} commands")


if __name__ == "__main__":
    main(sys.argv[1:])
