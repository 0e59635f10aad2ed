"""The right install command for a machine: resolve a plan, then render it per manager."""

from .plan import InstallPlan, Package, Wish, WishError, check_wish, installed_wish, resolve
from .render import MANAGERS, pip_args, plan_argv, plan_steps, render, uv_args

__all__ = [
    "MANAGERS",
    "InstallPlan",
    "Package",
    "Wish",
    "WishError",
    "check_wish",
    "installed_wish",
    "pip_args",
    "plan_argv",
    "plan_steps",
    "render",
    "resolve",
    "uv_args",
]
