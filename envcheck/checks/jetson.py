"""NVIDIA Jetson boards: their iGPU runs the CUDA that JetPack (L4T) ships.

PyTorch's aarch64 CUDA wheels (PyPI, download.pytorch.org) are built for SBSA, server ARM
with the standard CUDA toolkit (Grace: GH200, GB200), not for JetPack's CUDA on Jetson
(bitsandbytes-foundation/bitsandbytes#1941, rapidsai/cucim#527). NVIDIA publishes its own
torch wheels per JetPack release. envcheck has no table of those, so it says where they are
and claims no install command it cannot verify. Where they are is known in one place,
install.jetson, which the resolver reads too.
"""

from __future__ import annotations

from typing import List

from ..facts import Facts
from ..findings import Finding
from ..install.jetson import JETPACK_WHEELS as JETPACK_WHEELS  # checks.arch reads it here
from ..install.jetson import board as jetson_board
from ..rules import RULES
from ..tables import Tables

JETPACK_FIX = (
    "Install NVIDIA's torch wheel for this board's JetPack release (NVIDIA's 'PyTorch for "
    f"Jetson' wheels: {JETPACK_WHEELS}). envcheck does not know those wheels and gives no "
    "install command for a Jetson."
)


def check(facts: Facts, tables: Tables) -> List[Finding]:
    board = jetson_board(facts, tables)
    if not board:
        return []
    have = f"torch {facts.torch.version} is installed; " if facts.torch.installed else ""
    return [
        RULES["TRC005"](
            f"NVIDIA Jetson ({board}): PyTorch's own aarch64 CUDA wheels are SBSA builds, "
            "not verified on Jetson",
            [f"Jetson: {board}", f"{have}its iGPU runs JetPack's CUDA"],
            JETPACK_FIX,
        )
    ]
