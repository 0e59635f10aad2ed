"""uv project (pyproject.toml): the pins as dependencies, PyTorch's index as an explicit
``[[tool.uv.index]]`` that each torch package is sourced from."""

from __future__ import annotations

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import pins
from ..plan import Planned


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    deps = ", ".join(f'"{p}"' for p in pins(plan))
    lines = ["[project]", f"dependencies = [{deps}]"]
    if plan.index_url:
        name = f"pytorch-{plan.variant}"
        lines += [
            "",
            "[[tool.uv.index]]",
            f'name = "{name}"',
            f'url = "{plan.index_url}"',
            "explicit = true",
            "",
            "[tool.uv.sources]",
        ]
        lines += [f'{p.name} = [{{ index = "{name}" }}]' for p in plan.packages]
    return "\n".join(lines)
