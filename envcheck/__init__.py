"""envcheck: will this machine run my PyTorch code, and if not, what do I install?

The Python API mirrors the command line. Importing envcheck is cheap: nothing
here imports torch, NVML or click until a function is called.

    >>> import envcheck
    >>> facts = envcheck.probe(deep=False)   # static facts, milliseconds
    >>> facts.torch.version, facts.nvidia.driver_version
"""

from __future__ import annotations

import contextlib
import sys

from ._version import __version__

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Any

    from .core import Report
    from .core import require as require
    from .facts import Facts

__all__ = ["Facts", "Report", "RequirementError", "__version__", "check", "probe", "require"]


def check(**kwargs: Any) -> Report:
    """Check this machine (or ``facts=``) and decide once: findings, verdict, install advice.
    See :func:`envcheck.core.check`; ``envcheck check`` is a thin layer over it."""
    from .core import check as _check

    return _check(**kwargs)


def probe(**kwargs: Any) -> Facts:
    """Observe this machine; see :func:`envcheck.probes.probe` for the options."""
    from .probes import probe as _probe

    return _probe(**kwargs)


def _show_in_ipython() -> None:
    """Inside a running IPython (Jupyter, Colab, Kaggle), a Report, Facts or install advice
    shows itself as a card (envcheck.notebook); elsewhere this costs one dict lookup."""
    if "IPython" in sys.modules:
        from .notebook import register

        # an IPython we do not know: values still print as text
        with contextlib.suppress(Exception):
            register()


_show_in_ipython()


def __getattr__(name: str) -> Any:
    if name == "Facts":
        from .facts import Facts

        return Facts
    if name == "Report":
        from .core import Report

        return Report
    if name == "require":  # the function itself, so editors and help() see its keywords
        from .core import require

        return require
    if name == "RequirementError":
        from .requirements import RequirementError

        return RequirementError
    raise AttributeError(f"module 'envcheck' has no attribute {name!r}")
