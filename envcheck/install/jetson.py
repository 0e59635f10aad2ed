"""NVIDIA Jetson boards, as the resolver needs to know them: their iGPU runs the CUDA that
JetPack (L4T) ships, and PyTorch's aarch64 CUDA wheels are SBSA builds (Grace: GH200,
GB200), not verified there (bitsandbytes-foundation/bitsandbytes#1941, rapidsai/cucim#527).
NVIDIA publishes its own torch wheels per JetPack release; envcheck has no table of those,
so it says where they are and claims no install command it cannot verify. The JTS check
(checks.jetson) says the same from this one place."""

from __future__ import annotations

JETPACK_WHEELS = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def no_command(board: str) -> str:
    """The resolver's conflict on a Jetson: why it gives no CUDA install command."""
    return (
        f"NVIDIA Jetson ({board}): PyTorch's aarch64 CUDA wheels are SBSA "
        "builds, not verified on Jetson; envcheck knows no install command for this board"
    )
