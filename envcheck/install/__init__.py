"""The right install command for a machine: resolve a plan, then render it per manager."""

from .plan import InstallPlan, Package, Wish, WishError, check_wish, resolve
from .render import MANAGERS, pip_args, render

__all__ = [
    "MANAGERS",
    "InstallPlan",
    "Package",
    "Wish",
    "WishError",
    "check_wish",
    "pip_args",
    "render",
    "resolve",
]
