"""requirements.txt: the index line, then one pin a line."""

from __future__ import annotations

from ...tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..commands import index_flag, pins
from ..plan import Planned


def render(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> str:
    lines = [f"{index_flag(plan)} {plan.index_url}"] if plan.index_url else []
    return "\n".join(lines + pins(plan))
