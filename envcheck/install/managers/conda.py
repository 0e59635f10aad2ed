"""conda: PyTorch's own channel as its pages give it (the plan carries the channels and the
build package from tables.conda: ``cudatoolkit=11.3 -c pytorch -c conda-forge``,
``pytorch-cuda=12.1 -c pytorch -c nvidia``); after that channel's last release (a plan
without ``conda``), conda-forge, which builds torch itself."""

from __future__ import annotations

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import macos
from ..plan import Planned
from . import pip


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    names = {"torch": "pytorch"}
    specs = [f"{names.get(p.name, p.name)}=={p.version}" for p in plan.packages]
    if plan.conda is not None:
        extra = [plan.conda.package] if plan.conda.package else []
        channels = [arg for c in plan.conda.channels for arg in ("-c", c)]
        return " ".join(["conda", "install", *specs, *extra, *channels])
    cuda = plan.variant.cuda
    if plan.other_index is not None:
        return f"# conda has no {plan.other_index.builds} of torch; use pip:\n" + pip.render(plan)
    if not (plan.variant.is_cpu or cuda is not None):
        return f"# conda has no {plan.variant} builds of torch; use pip:\n" + pip.render(plan)
    build = "cpu*" if cuda is None or macos(plan) else f"cuda{cuda.major}{cuda.minor}*"
    specs[0] = f'"pytorch=={plan.torch}={build}"'
    return (
        "conda install -c conda-forge "
        + " ".join(specs)
        + "\n# conda-forge builds torch itself; its versions can lag PyTorch's releases"
    )
