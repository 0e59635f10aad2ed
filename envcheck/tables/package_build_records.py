"""What the tables know of what builds were compiled against (package_builds.json): packages
labelled with the torch they were built for, the NumPy torch builds were built against, and
packages built for one CUDA major. Read by tables.read_package_builds; asked by envcheck.pins
(PKG007, PKG008, the plan) and envcheck.cuda_needs (PKG009)."""

from __future__ import annotations

from typing import Optional, Pattern, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import record
from ..values import Variant
from .versions import Provenance

GROUPS = {"major", "minor"}  # the label's named groups, and one of BUILD_GROUPS
BUILD_GROUPS = {"variant", "cuda"}  # the build (cpu, cu121), or its CUDA major alone ("12")


@record(frozen=True)
class BuiltFor:
    """What a build label says: the torch minor (``2.1``), the build as labelled (``cu121``,
    ``cu12``) and its CUDA major where it names one (None: a CPU build, or not said)."""

    torch: str
    label: str
    cuda_major: Optional[int]


@record(frozen=True)
class PackageBuild:
    """How a family of packages labels its builds: ``label`` matches the local version label
    (of the installed version, or of the wheel file it was installed from) and names the torch
    ``major``, ``minor`` and the ``variant`` (cpu, cu121) or ``cuda`` major (12) it was built
    for; ``index`` (``{torch}``, ``{variant}`` filled in) is where the builds for a torch are;
    ``source_build``: the project builds (or fetches) the one for the installed torch when it
    is installed from source without build isolation."""

    names: Tuple[str, ...]
    label: Pattern[str]
    index: Optional[str]
    provenance: Provenance
    source_build: bool = False

    def built_for(self, local: str) -> Optional[BuiltFor]:
        """BuiltFor("2.1", "cu121", 12) for the label "pt21cu121"; None for other labels."""
        match = self.label.match(local)
        if match is None or len(match["minor"]) > 4:  # not a torch minor (nor one for int())
            return None
        groups = match.groupdict()
        cuda = groups.get("cuda")
        if cuda is not None:  # "12": a CUDA major; "118": a major and its minor
            label = f"cu{cuda}"
            short = Variant.maybe(label) if len(cuda) == 3 else None
            major = (
                int(cuda) if len(cuda) <= 2 else short.cuda.major if short and short.cuda else None
            )
        else:
            label = groups["variant"]
            variant = Variant.maybe(label)
            major = variant.cuda.major if variant is not None and variant.cuda else None
        return BuiltFor(f"{match['major']}.{int(match['minor'])}", label, major)


@record(frozen=True)
class NumpyAbi:
    """The torch builds (``torch`` specifier, on ``platforms``; None: every platform) that
    were compiled against a NumPy this ``numpy`` specifier holds: another NumPy major fails."""

    torch: SpecifierSet
    platforms: Optional[Tuple[str, ...]]
    numpy: SpecifierSet
    provenance: Provenance

    def applies(self, torch: Version, platform: Optional[str]) -> bool:
        if not self.torch.contains(torch, prereleases=True):
            return False
        return self.platforms is None or platform in self.platforms


def cuda_major(digits: str) -> int:
    """The CUDA major a name's digits give: "12" is 12; "102" (a major and a minor) is 10."""
    return int(digits[:-1]) if len(digits) == 3 else int(digits)


@record(frozen=True)
class CudaBuild:
    """Packages built for one CUDA major that load that major's libraries themselves: the
    major is in the name (``name``, its ``cuda`` group: cupy-cuda12x) or, for ``names``, in
    their requirement on NVIDIA's CUDA runtime wheel. ``replacement`` (``{major}`` filled in)
    is the project's build for another major; ``fails`` says what happens without them."""

    name: Optional[Pattern[str]]
    names: Tuple[str, ...]
    replacement: Optional[str]
    fails: str
    provenance: Provenance

    def major_in(self, package: str) -> Optional[int]:
        """The CUDA major ``package``'s name records (None: not this entry's, or not a name
        that records one)."""
        match = self.name.match(package) if self.name is not None else None
        return cuda_major(match["cuda"]) if match else None

    def knows(self, package: str) -> bool:
        return package in self.names or self.major_in(package) is not None


@record(frozen=True)
class PackageBuilds:
    """package_builds.json: labelled package builds, torch's NumPy ABI, CUDA-major builds and
    how NVIDIA's CUDA runtime wheel names its major (``cuda_runtime``, its ``cuda`` group;
    a name without it carries the major in its version)."""

    labels: Tuple[PackageBuild, ...] = ()
    numpy_abi: Tuple[NumpyAbi, ...] = ()
    cuda_builds: Tuple[CudaBuild, ...] = ()
    cuda_runtime: Optional[Pattern[str]] = None

    def cuda_build(self, package: str) -> Optional[CudaBuild]:
        return next((b for b in self.cuda_builds if b.knows(package)), None)

    def numpy_for(self, torch: Version, platform: Optional[str]) -> Optional[NumpyAbi]:
        """The NumPy a torch build needs, where the table says it is not every NumPy."""
        return next((n for n in self.numpy_abi if n.applies(torch, platform)), None)
