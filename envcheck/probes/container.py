"""Which container runtime this process lives in, if any, from its marker files and cgroups.

Its own module, with nothing but the file readers: the healthcheck asks it on every run (a
container that expects GPUs but was started without them) and must not load the rest of the
system probe.
"""

from __future__ import annotations

from ._files import exists, read_text

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Mapping, Optional

    from ._files import Root


def detect_container(root: Root, environ: Mapping[str, str]) -> Optional[str]:
    """Best-effort name of the container runtime this process lives in."""
    if environ.get("KUBERNETES_SERVICE_HOST") or exists(root, "/var/run/secrets/kubernetes.io"):
        return "kubernetes"
    if environ.get("APPTAINER_CONTAINER") or environ.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if exists(root, "/run/.containerenv"):
        return "podman"
    if exists(root, "/.dockerenv"):
        return "docker"
    marker = environ.get("container", "")  # set by systemd-nspawn, podman, lxc
    if marker:
        return "podman" if marker == "oci" else marker
    cgroups = read_text(root, "/proc/1/cgroup") or ""
    for needle, name in (
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ):
        if needle in cgroups:
            return name
    return None
