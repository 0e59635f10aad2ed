"""The right install command for a machine, as values -> resolve -> render.

- the wish (wish.py): what the user asks for, one frozen value;
- resolve (resolve.py): Facts + Tables + Wish -> ``Planned | NoPlan`` (plan.py), with the
  release matching (releases.py), the variant choice (variant.py, cuda.py, rocm.py), the
  guards that stop every build (guards.py), companions, conda, and the ways out;
- render (render.py): a plan -> the command or snippet of one package manager, through the
  registry in managers/ (``MANAGERS``: the names the CLI's ``--manager`` offers).
"""

from .commands import pip_args, uv_args
from .cuda import driver_upgrade
from .manager import Manager
from .plan import CondaCommand, InstallPlan, NoPlan, Package, Planned
from .reasons import Blocker
from .releases import known_variants, variants_of
from .render import MANAGERS, plan_argv, plan_steps, render
from .resolve import resolve
from .wish import Wish, WishError, check_wish, installed_wish, parse_python, parse_torch_wish

__all__ = [
    "MANAGERS",
    "Blocker",
    "CondaCommand",
    "InstallPlan",
    "Manager",
    "NoPlan",
    "Package",
    "Planned",
    "Wish",
    "WishError",
    "check_wish",
    "driver_upgrade",
    "installed_wish",
    "known_variants",
    "parse_python",
    "parse_torch_wish",
    "pip_args",
    "plan_argv",
    "plan_steps",
    "render",
    "resolve",
    "uv_args",
    "variants_of",
]
