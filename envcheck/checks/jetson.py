"""NVIDIA Jetson boards on JetPack 4-6: their iGPU runs the CUDA that JetPack (L4T) ships.

PyTorch's aarch64 CUDA wheels (PyPI, download.pytorch.org) are built for SBSA, server ARM
with the standard CUDA toolkit (Grace: GH200, GB200), not for JetPack's CUDA on Jetson
(bitsandbytes-foundation/bitsandbytes#1941, rapidsai/cucim#527). NVIDIA publishes its own
torch wheels per JetPack release (jetpack.json); which JetPack needs them and where they are
is decided in one place, envcheck.tegra, which the resolver reads too. From JetPack 7 (Thor)
the CUDA 13 Arm toolkit is unified and no finding is needed.
"""

from __future__ import annotations

from typing import List

from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tegra import JETPACK_WHEELS as JETPACK_WHEELS  # checks.arch reads it here
from ..tegra import jetpack, needs_nvidia_wheels

JETPACK_FIX = (
    "Install NVIDIA's torch wheel for this board's JetPack release (NVIDIA's 'PyTorch for "
    f"Jetson' wheels: {JETPACK_WHEELS}); `envcheck install` names it where the tables know it."
)


def check(facts: Facts, tables: Tables) -> List[Finding]:
    board = needs_nvidia_wheels(facts, tables)
    if not board:
        return []
    release = jetpack(facts, tables)
    fix = JETPACK_FIX
    if release is not None and release.index:
        fix = (
            f"Install NVIDIA's torch build for JetPack {release.jetpack} from its index "
            f"({release.index}): `envcheck install` prints the command."
        )
    have = f"torch {facts.torch.version} is installed; " if facts.torch.installed else ""
    return [
        RULES["TRC005"](
            f"NVIDIA Jetson ({board}): PyTorch's own aarch64 CUDA wheels are SBSA builds, "
            "not verified on Jetson",
            [f"Jetson: {board}", f"{have}its iGPU runs JetPack's CUDA"],
            fix,
        )
    ]
