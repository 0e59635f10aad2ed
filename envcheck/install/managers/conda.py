"""conda: PyTorch's own channel as its pages give it (the plan carries the channels and the
build package from tables.conda: ``cudatoolkit=11.3 -c pytorch -c conda-forge``,
``pytorch-cuda=12.1 -c pytorch -c nvidia``); after that channel's last release (a plan
without ``conda``), conda-forge, which builds torch itself."""

from __future__ import annotations

from typing import Sequence

from ...values import Variant
from ..commands import macos
from ..plan import Planned
from . import pip


def render(plan: Planned, uv_backends: Sequence[str] = ()) -> str:
    names = {"torch": "pytorch"}
    specs = [f"{names.get(p.name, p.name)}=={p.version}" for p in plan.packages]
    if plan.conda is not None:
        extra = [plan.conda.package] if plan.conda.package else []
        channels = [arg for c in plan.conda.channels for arg in ("-c", c)]
        return " ".join(["conda", "install", *specs, *extra, *channels])
    variant = Variant.parse(plan.variant or "cpu")
    if not (variant.is_cpu or variant.is_cuda):
        return f"# conda has no {variant} builds of torch; use pip:\n" + pip.render(plan)
    build = "cpu*" if variant.is_cpu or macos(plan) else f"cuda{str(variant)[2:]}*"
    specs[0] = f'"pytorch=={plan.torch}={build}"'
    return (
        "conda install -c conda-forge "
        + " ".join(specs)
        + "\n# conda-forge builds torch itself; its versions can lag PyTorch's releases"
    )
