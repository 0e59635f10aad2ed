"""installers.json's uv torch backends as values: the variants ``uv pip install
--torch-backend`` accepts (parsed once, when the table is read), and whether it accepts
``auto``, which names no variant."""

from __future__ import annotations

from typing import Iterator, Tuple

from .._record import record
from ..values import Variant

AUTO = "auto"  # uv picks the backend from the machine's driver: not a variant


@record(frozen=True)
class UvBackends:
    """The values of ``--torch-backend``, in the table's order. ``variant in backends`` asks
    whether uv selects that variant's index itself; iterating gives the names uv accepts."""

    variants: Tuple[Variant, ...]
    auto: bool = False

    def __contains__(self, variant: object) -> bool:
        return variant in self.variants

    def __iter__(self) -> Iterator[str]:
        """The names, as uv's command line spells them (``auto`` first where accepted)."""
        if self.auto:
            yield AUTO
        yield from (str(v) for v in self.variants)

    def __len__(self) -> int:
        return len(self.variants) + self.auto


NO_UV_BACKENDS = UvBackends(())  # no table at hand: every command names the index
