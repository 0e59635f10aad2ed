"""requirements.txt: the index line, then one pin a line."""

from __future__ import annotations

from typing import Sequence

from ..commands import index_flag, pins
from ..plan import Planned


def render(plan: Planned, uv_backends: Sequence[str] = ()) -> str:
    lines = [f"{index_flag(plan)} {plan.index_url}"] if plan.index_url else []
    return "\n".join(lines + pins(plan))
