"""Do torch's companions and CUDA runtime wheels match it; is torch installed once?"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Dict, List, Optional, Set

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .. import builds
from ..compat import torch_label
from ..cuda_needs import cuda_needs
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tables.model import Release, parse_version
from ..values import Variant
from ._util import torch_variant, torch_version

_CU_SUFFIX = re.compile(r"^(nvidia-.+)-cu(\d+)$")


def check(facts: Facts, tables: Tables) -> List[Finding]:
    findings = _installs(facts, tables)
    if facts.torch.installed:
        findings += _companions(facts, tables)
        findings += _nvidia_wheels(facts, {n.major for n in cuda_needs(facts, tables) if n.major})
    return findings


def _installs(facts: Facts, tables: Tables) -> List[Finding]:
    t, py = facts.torch, facts.python
    findings = []
    if len(t.installs) > 1:
        findings.append(
            RULES["INS001"](
                f"{len(t.installs)} copies of torch are installed",
                [
                    f"torch {d.version} in {d.location} (by {d.installer or 'unknown'})"
                    for d in t.installs
                ],
                f"The first on sys.path ({t.installs[0].location}) wins and the others can leak "
                "libraries into it. Uninstall all of them (`pip uninstall torch` until none is left; "
                "remove user-site copies under ~/.local), then install one.",
            )
        )
    findings += _label(facts, tables)
    conda_torch = [p for p in t.conda_packages if p.name == "pytorch"]
    if conda_torch and t.installer and t.installer != "conda":
        findings.append(
            RULES["INS003"](
                "torch is installed by both conda and pip in this environment",
                [
                    f"conda: pytorch {conda_torch[0].version} ({conda_torch[0].build})",
                    f"pip: torch {t.version} (installer {t.installer})",
                ],
                "Keep one: `pip uninstall torch` to use conda's, or `conda remove pytorch` and keep pip's.",
            )
        )
    if t.installed and py.env_kind == "none":
        extra = (
            " This Python is externally managed (PEP 668): pip refuses to install into it."
            if py.externally_managed
            else ""
        )
        findings.append(
            RULES["INS004"](
                "torch is installed outside a virtual environment",
                [f"{py.executable} (prefix {py.prefix})"],
                "A venv per project keeps torch builds from colliding: "
                "`python -m venv .venv` or `uv venv`." + extra,
            )
        )
    return findings


def _label(facts: Facts, tables: Tables) -> List[Finding]:
    """INS002 (files and metadata are two installs) or INS005 (not known whether they are)."""
    t = facts.torch
    label = torch_label(facts, tables)  # the one decision; the probe's text asks it too
    evidence = [f"{t.location}/version.py: {t.version}", f"dist-info: {t.dist_version}"]
    if label is not None and label.agree is False:
        return [
            RULES["INS002"](
                f"torch's files say {t.version}, its metadata says {t.dist_version}",
                [*evidence, label.why],
                "Two installs were written over each other. Reinstall cleanly: "
                "`pip uninstall -y torch`, then install torch again.",
            )
        ]
    if label is not None and label.agree is None:
        return [
            RULES["INS005"](
                f"Not known whether torch's files ({t.version}) and metadata "
                f"({t.dist_version}) are one install",
                [*evidence, label.why],
                "PyPI's wheels keep the build's label in version.py and the plain version in "
                "their metadata; the tables do not know which build PyPI serves for this "
                "release here, so a mixed install is neither found nor ruled out. If torch "
                "imports and `python -m pip show torch` names one install, it is one; newer "
                "tables (--tables DIR) can tell.",
            )
        ]
    return []


def _companions(facts: Facts, tables: Tables) -> List[Finding]:
    version = torch_version(facts)
    release = tables.release(version) if version else None
    variant = torch_variant(facts)
    findings = []
    for pkg in facts.torch.companions:
        if pkg.name not in ("torchvision", "torchaudio"):
            continue
        try:
            installed = Version(pkg.version)
        except ValueError:  # InvalidVersion, or a number of 4300+ digits
            continue
        if release is not None and version is not None:
            expected = release.companion(pkg.name, version)
            allowed = release.compatible.get(pkg.name)
            base = Version(installed.base_version)
            ok = (expected is not None and base == Version(expected)) or (
                allowed is not None and allowed.contains(base, prereleases=True)
            )
            if not ok and (expected is not None or allowed is not None):
                want = expected or str(allowed)
                findings.append(
                    RULES["PKG001"](
                        f"{pkg.name} {pkg.version} does not match torch {facts.torch.version}",
                        [
                            f"torch {facts.torch.version}",
                            f"{pkg.name} {pkg.version}",
                            f"torch {version.base_version} pairs with {pkg.name} {want}",
                        ],
                        "Install the matching pair; a mismatch fails at import with errors such as "
                        '"operator torchvision::nms does not exist".',
                    )
                )
        label = builds.local_label(pkg.version)
        comp_variant = builds.variant(pkg.version) if label else None
        if comp_variant is not None and variant is not None and comp_variant != variant:
            findings.append(
                RULES["PKG002"](
                    f"{pkg.name} {pkg.version} is a {comp_variant} build, torch is {variant}",
                    [f"torch {facts.torch.version}", f"{pkg.name} {pkg.version}"],
                    # no variant named: the report's command installs the pair from the index
                    # of the torch it plans, which need not be the installed one's
                    f"Install {pkg.name} from the same index as torch: the report's command "
                    "installs both from one.",
                )
            )
    findings += _triton(facts, release, variant)
    return findings


def _triton(facts: Facts, release: Optional[Release], variant: Optional[Variant]) -> List[Finding]:
    """torch.compile on the GPU needs exactly the Triton torch pins: torch's own metadata
    (``Requires-Dist: triton==X``) says so first; the tables' bundled pin stands in for a
    torch whose metadata was not read. A pin in the metadata with no Triton installed is
    reported too (a table pin is not: a CPU or macOS build has none)."""
    own = facts.torch.triton_requirement
    named = re.match(r"[a-z-]+", own) if own else None
    project = named.group(0) if named else None
    pinned = own[len(project) :] if own and project else None
    where = f"torch's metadata: Requires-Dist {own}"
    if pinned is None:
        if release is None or variant is None:
            return []
        pinned = release.bundled.get(variant, {}).get("triton")
        where = f"torch {release.minor} {variant} pins triton {pinned}"
    names = (project,) if project else ("triton", "pytorch-triton")
    triton = next((p for p in facts.torch.companions if p.name in names), None)
    if not pinned or (triton is None and not own):
        return []
    try:
        spec = SpecifierSet(pinned if pinned[0] in "~=<>!" else f"=={pinned}")
        ok = triton is not None and spec.contains(Version(triton.version), prereleases=True)
    except ValueError:
        return []
    if ok:
        return []
    name = project or "triton"
    have = f"{name} {triton.version} is installed" if triton else f"{name} is not installed"
    return [
        RULES["PKG005"](
            f"torch {facts.torch.version} needs {name}{spec}; {have}",
            [where, f"installed {name}: {triton.version if triton else 'none'}"],
            # the pin of the torch the report installs (the plan carries it), which need not be
            # the installed torch's when the plan replaces it
            "torch.compile on the GPU runs Triton kernels and needs exactly the Triton its torch "
            "pins: the report's command installs it with torch; remove any other triton.",
        )
    ]


def _nvidia_wheels(facts: Facts, needed: Set[int]) -> List[Finding]:
    """PKG004 and PKG003. ``needed``: the CUDA majors other installed packages are built for
    (cuda_needs): their runtime wheels beside torch's are in use, not left over."""
    majors_by_lib: Dict[str, Set[int]] = defaultdict(set)
    plain = set()  # CUDA 13's wheels drop the suffix: nvidia-cuda-runtime 13.0.96
    for pkg in facts.torch.companions:
        match = _CU_SUFFIX.match(pkg.name)
        if match:
            majors_by_lib[match.group(1)].add(int(match.group(2)))
        elif pkg.name.startswith("nvidia-"):
            plain.add(pkg.name)
    findings = []
    # two majors of one library, more than one of them used by nothing but torch
    doubled = sorted(lib for lib, majors in majors_by_lib.items() if len(majors - needed) > 1)
    cuda = parse_version(facts.torch.cuda)
    if doubled:
        findings.append(
            RULES["PKG004"](
                "CUDA runtime wheels of two CUDA majors are installed side by side",
                [
                    f"{lib}: cu{', cu'.join(str(m) for m in sorted(majors_by_lib[lib]))}"
                    for lib in doubled
                ],
                "Remove the ones torch does not use (`pip uninstall nvidia-...-cuNN`); which one "
                "loads depends on search order.",
            )
        )
    if cuda is not None:
        torch_major = cuda.major
        wrong = sorted(
            f"{lib}-cu{m}"
            for lib, majors in majors_by_lib.items()
            for m in majors
            if m != torch_major and torch_major not in majors and lib not in plain
        )
        if wrong:
            findings.append(
                RULES["PKG003"](
                    f"CUDA {', '.join(sorted({w.rsplit('-', 1)[1] for w in wrong}))} runtime wheels "
                    f"beside a CUDA {facts.torch.cuda} torch",
                    [*wrong, f"torch {facts.torch.version}"],
                    "torch loads the wheels of its own CUDA major; these are missing or stale. "
                    "Reinstall torch so pip brings the right ones.",
                )
            )
    return findings
