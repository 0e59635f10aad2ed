"""What installed packages other than torch need of CUDA: the CUDA major they were built for,
recorded in their name (``cupy-cuda12x``) or in their requirement on NVIDIA's CUDA runtime
wheel (``nvidia-cuda-runtime-cu12; extra == "cuda"``), and the cuDNN they require.

Such a package loads its own major's CUDA libraries. Under a torch of another CUDA major
they are there only if something else installed them (that major's runtime wheels, a
toolkit on the loader path); otherwise it fails, or falls back to the CPU, when it first
needs them. One place for the check (PKG009) and the plan (what a torch of another CUDA
major leaves behind), so they never disagree. Which packages record what is the table's
(package_builds.json: cuda_builds, cuda_runtime); a package it does not know and whose
requirements name no CUDA is not judged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Pattern, Set, Tuple

from packaging.version import InvalidVersion, Version

from ._record import record
from ._text import normalise
from .facts import Facts, PackageFacts
from .pins import abi_not_compared, marker_environment, parse_requirement, unrecorded_builds
from .tables import Tables
from .tables.package_build_records import CudaBuild, cuda_major
from .values import Variant

if TYPE_CHECKING:  # packaging's requirement and marker parsers load when a line is read
    from packaging.requirements import Requirement


_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


@record(frozen=True)
class CudaNeed:
    """An installed package built for one CUDA major (None: it records none), what says so
    (its name, or a requirement line), and the table's entry for it (None: known only by
    its requirement)."""

    package: PackageFacts
    major: Optional[int]
    evidence: str
    build: Optional[CudaBuild]

    def replacement(self, major: int) -> Optional[str]:
        """The project's build for CUDA ``major`` (``cupy-cuda13x``), where the table names it."""
        if self.build is None or self.build.replacement is None:
            return None
        return self.build.replacement.format(major=major)

    def fails(self) -> str:
        """What happens without its libraries, in the table's words ("" when it has none)."""
        return self.build.fails.format(major=self.major) if self.build else ""


@record(frozen=True)
class CudnnNeed:
    """A package's requirement on a cuDNN wheel that the installed one does not meet."""

    package: PackageFacts
    requirement: Requirement
    installed: PackageFacts


def cuda_needs(facts: Facts, tables: Tables) -> List[CudaNeed]:
    """Each installed package that records a CUDA major, or that the table knows as built
    for one (then with major None when it records none)."""
    builds = tables.package_builds
    env = marker_environment(facts)
    out = []
    for pkg in facts.torch.dependents:
        build = builds.cuda_build(pkg.name)
        named = build.major_in(pkg.name) if build is not None else None
        if named is not None:
            out.append(CudaNeed(pkg, named, f"{pkg.name}: its name says CUDA {named}", build))
            continue
        required = _required_major(pkg, builds.cuda_runtime, env)
        if required is not None:
            out.append(CudaNeed(pkg, required[0], f"Requires-Dist: {required[1]}", build))
        elif build is not None:
            out.append(CudaNeed(pkg, None, "", build))
    return out


def runtime_majors(facts: Facts, tables: Tables) -> Set[int]:
    """The CUDA majors whose runtime wheel is installed (nvidia-cuda-runtime-cu12 is 12;
    the plain nvidia-cuda-runtime 13.0.96 is 13)."""
    pattern = tables.package_builds.cuda_runtime
    majors = set()
    for pkg in facts.torch.companions:
        major = _wheel_major(pattern, pkg.name, pkg.version)
        if major is not None:
            majors.add(major)
    return majors


def built_for_other_major(
    facts: Facts, tables: Tables, variant: Optional[Variant]
) -> List[CudaNeed]:
    """The packages built for another CUDA major than the torch build ``variant``. None
    under a CPU or ROCm torch: it brings no CUDA to clash with."""
    cuda = variant.cuda if variant is not None and variant.is_cuda else None
    if cuda is None:
        return []
    return [n for n in cuda_needs(facts, tables) if n.major is not None and n.major != cuda.major]


def without_libraries(
    facts: Facts, tables: Tables, variant: Optional[Variant], have: Set[int]
) -> List[CudaNeed]:
    """The packages built_for_other_major whose major's runtime wheel is not installed (``have``: the majors
    that are, runtime_majors)."""
    return [n for n in built_for_other_major(facts, tables, variant) if n.major not in have]


def not_checkable(facts: Facts, tables: Tables) -> List[Tuple[str, str]]:
    """(rule, why) for each installed package the tables know as built for one torch (PKG007)
    or, under a CUDA torch, one CUDA major (PKG009) whose install records none."""
    out = [
        ("PKG007", f"{p.name} {p.version} records no torch it was built for")
        for p in unrecorded_builds(facts, tables)
    ]
    out += [
        ("PKG007", f"{p.name} {p.version}: its C++ ABI is not compared, torch's is not known")
        for p in abi_not_compared(facts, tables)
    ]
    if facts.torch.cuda:
        out += [
            ("PKG009", f"{n.package.name} {n.package.version} records no CUDA it was built for")
            for n in cuda_needs(facts, tables)
            if n.major is None
        ]
    return out


def cudnn_unmet(facts: Facts) -> List[CudnnNeed]:
    """Each requirement on a cuDNN wheel (any extra: the build needs it whether or not the
    extra was installed) that the installed wheel of that name does not meet."""
    installed: Dict[str, PackageFacts] = {
        p.name: p for p in facts.torch.companions if p.name.startswith("nvidia-cudnn")
    }
    env = marker_environment(facts)
    out = []
    for pkg in facts.torch.dependents:
        for line in pkg.requires:
            req = parse_requirement(line)
            if req is None or not normalise(req.name).startswith("nvidia-cudnn"):
                continue
            wheel = installed.get(normalise(req.name))
            if wheel is None or not req.specifier or not _applies(req, env):
                continue
            try:
                if not req.specifier.contains(Version(wheel.version), prereleases=True):
                    out.append(CudnnNeed(pkg, req, wheel))
            except (InvalidVersion, ValueError):  # a version too long for int()
                continue
    return out


def _required_major(
    pkg: PackageFacts, pattern: Optional[Pattern[str]], env: Dict[str, str]
) -> Optional[Tuple[int, str]]:
    """(the CUDA major, the line) of ``pkg``'s requirement on the CUDA runtime wheel."""
    if pattern is None:
        return None
    for line in pkg.requires:
        req = parse_requirement(line)
        if req is None or not _applies(req, env):
            continue
        major = _wheel_major(pattern, normalise(req.name), _spec_version(req))
        if major is not None:
            return major, line
    return None


def _wheel_major(
    pattern: Optional[Pattern[str]], name: str, version: Optional[str]
) -> Optional[int]:
    """The CUDA major of a runtime wheel's name (``-cu12``) or, for the plain name, of its
    version (13.0.96); None for other names."""
    match = pattern.match(name) if pattern is not None else None
    if match is None:
        return None
    if match["cuda"]:
        return cuda_major(match["cuda"])
    try:
        return Version(version).major if version else None
    except (InvalidVersion, ValueError):
        return None


def _spec_version(req: Requirement) -> Optional[str]:
    """The version a requirement names (``==13.0.96``, ``~=13.0``, ``>=13``), for its major."""
    for spec in req.specifier:
        if spec.operator in ("==", "===", "~=", ">="):
            return spec.version.rstrip(".*")
    return None


def _applies(req: Requirement, env: Dict[str, str]) -> bool:
    """Whether a requirement holds on this machine, taking the extra it names as chosen."""
    if req.marker is None:
        return True
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    extras = _EXTRA.findall(str(req.marker)) or [""]
    try:
        return any(req.marker.evaluate({**env, "extra": extra}) for extra in extras)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError):
        return False


__all__ = [
    "CudaNeed",
    "CudnnNeed",
    "built_for_other_major",
    "cuda_needs",
    "cudnn_unmet",
    "not_checkable",
    "runtime_majors",
    "without_libraries",
]
