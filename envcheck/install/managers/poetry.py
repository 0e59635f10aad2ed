"""Poetry (pyproject.toml): PyTorch's index as an explicit source, each package pinned
to it."""

from __future__ import annotations

from typing import List

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import pins
from ..plan import Planned


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    lines: List[str] = []
    name = f"pytorch-{plan.variant}"
    if plan.index_url:
        lines += [
            "[[tool.poetry.source]]",
            f'name = "{name}"',
            f'url = "{plan.index_url}"',
            'priority = "explicit"',
            "",
        ]
    lines.append("[tool.poetry.dependencies]")
    for p, pin in zip(plan.packages, pins(plan)):
        version = pin.split("==", 1)[1]
        if plan.index_url:
            lines.append(f'{p.name} = {{ version = "{version}", source = "{name}" }}')
        else:
            lines.append(f'{p.name} = "{version}"')
    return "\n".join(lines)
