"""What the tables know of what builds were compiled against (package_builds.json): packages
labelled with the torch they were built for, and the NumPy torch builds were built against.
Read by tables.read_package_builds; asked by envcheck.pins (PKG007, PKG008, the plan)."""

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


@record(frozen=True)
class PackageBuilds:
    """package_builds.json: labelled package builds, and torch's NumPy ABI."""

    labels: Tuple[PackageBuild, ...] = ()
    numpy_abi: Tuple[NumpyAbi, ...] = ()

    def numpy_for(self, torch: Version, platform: Optional[str]) -> Optional[NumpyAbi]:
        """The NumPy a torch build needs, where the table says it is not every NumPy."""
        return next((n for n in self.numpy_abi if n.applies(torch, platform)), None)
