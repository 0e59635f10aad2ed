"""A container that expects NVIDIA GPUs but was started without them.

Every CUDA base image sets ``NVIDIA_VISIBLE_DEVICES=all`` (and ``NVIDIA_REQUIRE_CUDA``,
``CUDA_VERSION``): the NVIDIA Container Toolkit reads them when the container starts
and mounts the GPUs and the driver's libraries. Started without the toolkit
(``docker run`` without ``--gpus``, a pod without a ``nvidia.com/gpu`` limit) the
variables are still set, but there is no ``/dev/nvidia*`` and no NVML, and torch
silently runs on the CPU. The check (SYS006) and the healthcheck both ask this module,
so they agree on what "expects GPUs" means and on the fix; the install resolver asks
:func:`started_without_gpus` too, so it plans no build from a machine whose GPUs are
hidden (never the CPU wheel as the fix for a CUDA image). Standard library only: the
healthcheck imports it on every run.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:  # the healthcheck imports this module: nothing more at run time
    from typing import Mapping, Optional

    from .facts import Facts

# Set by NVIDIA's CUDA images (nvidia/cuda Dockerfiles: ENV NVIDIA_REQUIRE_CUDA, CUDA_VERSION,
# NV_CUDA_LIB_VERSION), so a container built from one was meant for GPUs.
IMAGE_MARKERS = ("NVIDIA_REQUIRE_CUDA", "NV_CUDA_LIB_VERSION", "CUDA_VERSION")
# NVIDIA_VISIBLE_DEVICES values that ask for no GPU (the toolkit's "void"/"none"; empty is void).
NO_GPUS = ("", "void", "none")

FIX = (
    "Start the container with its GPUs: `docker run --gpus all ...` (Docker with the NVIDIA "
    "Container Toolkit installed; `--runtime=nvidia` on older setups, `--device "
    "nvidia.com/gpu=all` with CDI or Podman); in Kubernetes, request `nvidia.com/gpu` under the "
    "pod's resources.limits (the NVIDIA device plugin must run on the node). If this container "
    "is meant to run without GPUs, set NVIDIA_VISIBLE_DEVICES=void."
)
SHORT_FIX = (
    "start it with `docker run --gpus all` (NVIDIA Container Toolkit) or a nvidia.com/gpu limit"
)


def gpus_expected(environ: Mapping[str, str], container: Optional[str]) -> Optional[str]:
    """Why this process's container expects NVIDIA GPUs (e.g. "NVIDIA_VISIBLE_DEVICES=all"),
    or None when nothing says it does. Outside a detected container only an image's own
    markers count: ``NVIDIA_VISIBLE_DEVICES`` alone means nothing on a host."""
    visible = environ.get("NVIDIA_VISIBLE_DEVICES")
    if visible is not None and visible.strip().lower() in NO_GPUS:
        return None
    markers = [m for m in IMAGE_MARKERS if environ.get(m)]
    if container is None and not markers:
        return None
    if visible is not None:
        return f"NVIDIA_VISIBLE_DEVICES={visible.strip()}"
    if markers:
        return f"{markers[0]}={environ[markers[0]]} (a CUDA image)"
    return None


def started_without_gpus(facts: Facts) -> Optional[str]:
    """Why this machine is a container that expects NVIDIA GPUs but was started without
    them (SYS006), or None: something says it expects GPUs, there is no GPU and no GPU
    device, and NVML was tried (not simulated) and failed. A pasted report that says
    nothing of NVML is not judged."""
    nv = facts.nvidia
    why = gpus_expected(facts.environment, facts.system.container)
    gpu_nodes = [n for n in nv.device_nodes if n.rstrip("0123456789") == "/dev/nvidia" != n]
    if why is None or nv.gpus or gpu_nodes or nv.nvml.ok or nv.nvml.error is None:
        return None
    return why
