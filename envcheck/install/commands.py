"""The pieces every rendered command shares: the pins (with a local label where the plan
needs one), the index arguments, and the interpreter of a new ``.venv``.

pip commands follow PyTorch's own install pages for the same choice: since 2.1, pinned
packages and ``--index-url https://download.pytorch.org/whl/<variant>`` unless the default
index already serves that variant (2.0: the same, with the default CUDA on PyPI); for 1.x,
``+variant`` local labels on torch and torchvision with ``--extra-index-url`` (1.8.2, the
LTS: its own index ``https://download.pytorch.org/whl/lts/1.8/<variant>``, without labels).
(Before 1.11 the pages used ``-f .../torch_stable.html``; the ``--extra-index-url`` form
works for them today.)
"""

from __future__ import annotations

from typing import List

from packaging.version import Version

from ..tables.uv_backends import NO_UV_BACKENDS, UvBackends
from ..values import Platform
from .plan import InstallPlan, Package, Planned


def planned(plan: InstallPlan) -> Planned:
    """The plan, when it is one to render; ValueError for a NoPlan."""
    if not isinstance(plan, Planned) or not plan.torch:
        raise ValueError("nothing to render: the plan has no solution")
    return plan


def legacy(plan: Planned) -> bool:
    """torch 1.x: local labels and --extra-index-url."""
    return Version(plan.torch or "0").major < 2


def macos(plan: Planned) -> bool:
    return plan.platform is not None and Platform.parse(plan.platform).is_macos


def pins(plan: Planned) -> List[str]:
    """``name==version``, with the local label where the plan needs one: the 1.x
    commands (torch and torchvision as ``+cu116``), and a build replaced in place."""
    # The 1.8 LTS index holds only 1.8.2 and PyPI has no 1.8.2, so PyTorch's page pins
    # it without a label (index_base set); a labelled pin is not known to resolve there.
    label = legacy(plan) and not plan.default_index and not macos(plan) and not plan.index_base
    out = []
    for p in plan.packages:
        if p.local is None and label and p.name in ("torch", "torchvision"):
            p = Package(p.name, p.version, str(plan.variant))
        out.append(p.pin)
    return out


def index_flag(plan: Planned) -> str:
    return "--extra-index-url" if legacy(plan) else "--index-url"


def index_args(plan: Planned) -> List[str]:
    if plan.index_url is None:
        return []
    return [index_flag(plan), plan.index_url]


def pip_args(plan: Planned) -> List[str]:
    """Arguments after ``pip install`` (used for --run, without a shell)."""
    return pins(plan) + index_args(plan)


def uv_args(plan: Planned, uv_backends: UvBackends = NO_UV_BACKENDS) -> List[str]:
    """`uv pip install` arguments: ``--torch-backend`` where uv knows the variant
    (it then picks the index for every torch-family package), else the index URL."""
    backend = plan.other_index is None and not legacy(plan) and not macos(plan)
    if plan.variant in uv_backends and backend:
        return [*pins(plan), f"--torch-backend={plan.variant}"]
    return pip_args(plan)


def venv_python(plan: Planned) -> str:
    """The interpreter of a new ``.venv`` in the current folder, on the plan's platform."""
    windows = plan.platform is not None and Platform.parse(plan.platform).is_windows
    return ".venv\\Scripts\\python.exe" if windows else ".venv/bin/python"
