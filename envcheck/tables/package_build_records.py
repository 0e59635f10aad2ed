"""What the tables know of packages labelled with the torch they were built for
(package_builds.json): read by tables.read_package_builds; asked by checks.dependents."""

from __future__ import annotations

from typing import Optional, Pattern, Tuple

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
        if match is None:
            return None
        return f"{match['major']}.{int(match['minor'])}", match["variant"]
