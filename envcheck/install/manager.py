"""The package managers envcheck renders a plan for: one small vocabulary, one value each.

A ``str`` enum, so JSON, text and comparisons with the CLI's strings stay as they were.
"""

from __future__ import annotations

import enum


class Manager(str, enum.Enum):
    PIP = "pip"
    UV = "uv"
    CONDA = "conda"
    REQUIREMENTS = "requirements"
    UV_PROJECT = "uv-project"
    POETRY = "poetry"

    def __str__(self) -> str:
        return self.value

    @property
    def runs_commands(self) -> bool:
        """Whether the plan renders as commands to run (pip, uv), not a file or conda line."""
        return self in (Manager.PIP, Manager.UV)
