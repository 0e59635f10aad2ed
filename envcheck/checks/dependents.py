"""PKG006: an installed package that requires another torch than the one installed.

xFormers, vLLM, flash-attn and PyG's extensions declare the torch they were built for
(``Requires-Dist: torch==2.4.1``); pip installs another torch over them with only a warning,
and the package then fails at import or with ``undefined symbol``. The requirement as it
applies here (markers for the target interpreter) comes from envcheck.pins.
"""

from __future__ import annotations

from typing import List

from ..compat import torch_version
from ..facts import Facts
from ..findings import Finding
from ..pins import torch_pins
from ..rules import RULES
from ..tables import Tables


def check(facts: Facts, tables: Tables) -> List[Finding]:
    current = torch_version(facts)
    if current is None:
        return []
    pins, _ = torch_pins(facts)
    findings = []
    for pin in pins:
        if pin.allows(current):
            continue
        name, version = pin.package.name, pin.package.version
        findings.append(
            RULES["PKG006"](
                f"{pin.text}, but torch {facts.torch.version} is installed",
                [
                    f"{name} {version}: Requires-Dist: {pin.requirement}",
                    f"torch {facts.torch.version}",
                ],
                f"Install a torch that meets it (torch{pin.requirement.specifier}: "
                f'`envcheck install --torch "{pin.requirement.specifier}"` picks the build for '
                f"this machine), or a release of {name} made for torch {current.base_version} "
                f"(its newer releases pin newer torch: `pip install -U {name}`, then check again). "
                "pip installs a torch over such a pin with only a warning; the package then fails "
                "at import or with 'undefined symbol'.",
            )
        )
    return findings
