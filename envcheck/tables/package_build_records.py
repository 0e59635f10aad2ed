"""What the tables know of what builds were compiled against (package_builds.json): packages
labelled with the torch they were built for, and the NumPy torch builds were built against.
Read by tables.read_package_builds; asked by envcheck.pins (PKG007, PKG008, the plan)."""

from __future__ import annotations

from typing import Optional, Pattern, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import record
from .versions import Provenance

GROUPS = {"major", "minor", "variant"}  # the label's named groups


@record(frozen=True)
class PackageBuild:
    """How a family of packages labels its builds: ``label`` matches the local version label
    and names the torch ``major``, ``minor`` and the ``variant`` (cpu, cu121) it was built
    for; ``index`` (``{torch}``, ``{variant}`` filled in) is where the builds for a torch are."""

    names: Tuple[str, ...]
    label: Pattern[str]
    index: Optional[str]
    provenance: Provenance

    def built_for(self, local: str) -> Optional[Tuple[str, str]]:
        """("2.1", "cu121") for the label "pt21cu121"; None when it is not such a label."""
        match = self.label.match(local)
        if match is None or len(match["minor"]) > 4:  # not a torch minor (nor one for int())
            return None
        return f"{match['major']}.{int(match['minor'])}", match["variant"]


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
