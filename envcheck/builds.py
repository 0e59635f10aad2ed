"""What kind of torch build a version string and torch/version.py describe.

Wheels from PyTorch's index carry the variant as a local label (``+cu128``,
``+cpu``, ``+rocm6.2``, ``+xpu``); the default-index Linux wheel has none, and
NGC or source builds carry a git hash there (``2.6.0a0+ecf3bae40a``). The CUDA
or HIP version recorded in version.py is the reliable fallback.
"""

from __future__ import annotations

from typing import Optional

from .values import Variant


def local_label(version: Optional[str]) -> Optional[str]:
    """``2.8.0+cu128`` -> ``cu128``; None without a ``+``."""
    if not version or "+" not in version:
        return None
    return version.split("+", 1)[1] or None


def variant(
    version: Optional[str],
    cuda: Optional[str] = None,
    hip: Optional[str] = None,
    xpu: Optional[str] = None,
) -> Optional[Variant]:
    """The wheel variant a build corresponds to: cpu, cu128, rocm6.2, xpu, or None.

    A label such as ``cpu.cxx11.abi`` (old Linux CPU builds) counts as ``cpu``.
    """
    return Variant.of_build(version, cuda, hip, xpu)


def describe(
    version: Optional[str],
    cuda: Optional[str] = None,
    hip: Optional[str] = None,
    xpu: Optional[str] = None,
) -> str:
    """A short human description: ``CUDA 12.8 build``, ``CPU-only build``, ``ROCm build``."""
    kind = variant(version, cuda, hip, xpu)
    if kind is None:
        return "unknown build"
    if cuda:
        return f"CUDA {cuda} build"
    if kind.is_cuda:
        return f"CUDA build ({kind})"
    if kind.is_rocm:
        return f"ROCm build (HIP {hip})" if hip else f"ROCm build ({kind})"
    if kind.is_xpu:
        return "Intel XPU build"
    return "CPU-only build"
