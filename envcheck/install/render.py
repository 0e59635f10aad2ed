"""Render an InstallPlan as the command or project snippet for one package manager.

pip commands follow PyTorch's own install pages for the same choice: since 2.1,
pinned packages and ``--index-url https://download.pytorch.org/whl/<variant>``
unless the default index already serves that variant (2.0: the same, with the
default CUDA on PyPI); for 1.x, ``+variant`` local labels on torch and
torchvision with ``--extra-index-url`` (1.8.2, the LTS: its own index
``https://download.pytorch.org/whl/lts/1.8/<variant>``, without labels). (Before 1.11 the pages used
``-f .../torch_stable.html``; the ``--extra-index-url`` form works for them today.)
"""

from __future__ import annotations

import shlex
from typing import List, Optional, Sequence

from packaging.version import Version

from ..values import Platform, Variant
from .plan import InstallPlan, Package

MANAGERS = ("pip", "uv", "conda", "requirements", "uv-project", "poetry")


def _legacy(plan: InstallPlan) -> bool:
    """torch 1.x: local labels and --extra-index-url."""
    return Version(plan.torch or "0").major < 2


def _macos(plan: InstallPlan) -> bool:
    return plan.platform is not None and Platform.parse(plan.platform).is_macos


def pins(plan: InstallPlan) -> List[str]:
    """``name==version``, with the local label where the plan needs one: the 1.x
    commands (torch and torchvision as ``+cu116``), and a build replaced in place."""
    # The 1.8 LTS index holds only 1.8.2 and PyPI has no 1.8.2, so PyTorch's page pins
    # it without a label (index_base set); a labelled pin is not known to resolve there.
    label = _legacy(plan) and not plan.default_index and not _macos(plan) and not plan.index_base
    out = []
    for p in plan.packages:
        if p.local is None and label and p.name in ("torch", "torchvision"):
            p = Package(p.name, p.version, plan.variant)
        out.append(p.pin)
    return out


def index_args(plan: InstallPlan) -> List[str]:
    if plan.index_url is None:
        return []
    return ["--extra-index-url" if _legacy(plan) else "--index-url", plan.index_url]


def pip_args(plan: InstallPlan) -> List[str]:
    """Arguments after ``pip install`` (used for --run, without a shell)."""
    return pins(plan) + index_args(plan)


def uv_args(plan: InstallPlan, uv_backends: Sequence[str] = ()) -> List[str]:
    """`uv pip install` arguments: ``--torch-backend`` where uv knows the variant
    (it then picks the index for every torch-family package), else the index URL."""
    if plan.variant in uv_backends and not _legacy(plan) and not _macos(plan):
        return [*pins(plan), f"--torch-backend={plan.variant}"]
    return pip_args(plan)


def venv_python(plan: InstallPlan) -> str:
    """The interpreter of a new ``.venv`` in the current folder, on the plan's platform."""
    windows = plan.platform is not None and Platform.parse(plan.platform).is_windows
    return ".venv\\Scripts\\python.exe" if windows else ".venv/bin/python"


def plan_argv(
    plan: InstallPlan, manager: str, uv_backends: Sequence[str] = (), python: Optional[str] = None
) -> List[str]:
    """The pip or uv command as an argument list (empty for project files and conda).

    It installs into ``python`` when given (``--run``: the interpreter envcheck checked),
    else into the plan's: a bare ``pip`` when the ``python`` first on PATH is it, else the
    interpreter by path (``PATH -m pip``; uv: ``--python PATH``), and for an externally
    managed one (PEP 668, where pip refuses) the new venv that :func:`render` makes first."""
    interpreter = python or (venv_python(plan) if plan.externally_managed else plan.interpreter)
    if manager == "pip":
        head = [interpreter, "-m", "pip"] if interpreter else ["pip"]
        return [*head, "install", *pip_args(plan)]
    if manager == "uv":
        target = ["--python", interpreter] if interpreter else []
        return ["uv", "pip", "install", *target, *uv_args(plan, uv_backends)]
    return []


def plan_steps(plan: InstallPlan, manager: str, uv_backends: Sequence[str] = ()) -> List[List[str]]:
    """The pip or uv commands to run in order, each an argument list: the install, after
    the venv an externally managed interpreter needs first. Empty for conda and files."""
    install = plan_argv(plan, manager, uv_backends)
    if not install or not plan.externally_managed:
        return [install] if install else []
    if manager == "uv":
        make = [
            "uv",
            "venv",
            ".venv",
            *(["--python", plan.interpreter] if plan.interpreter else []),
        ]
    else:
        make = [plan.interpreter or "python3", "-m", "venv", ".venv"]
    return [make, install]


def render(plan: InstallPlan, manager: str, uv_backends: Sequence[str] = ()) -> str:
    """The command or snippet for ``manager``; ``uv_backends`` from the installers table."""
    if not plan.ok or not plan.torch:
        raise ValueError("nothing to render: the plan has no solution")
    if manager in ("pip", "uv"):  # the display string is the steps, joined as a shell would
        return " && ".join(
            " ".join(shlex.quote(a) for a in step)
            for step in plan_steps(plan, manager, uv_backends)
        )
    if manager == "requirements":
        lines = []
        if plan.index_url:
            lines.append(
                f"{'--extra-index-url' if _legacy(plan) else '--index-url'} {plan.index_url}"
            )
        return "\n".join(lines + pins(plan))
    if manager == "conda":
        return _conda(plan)
    if manager == "uv-project":
        return _uv_project(plan)
    if manager == "poetry":
        return _poetry(plan)
    raise ValueError(f"unknown manager {manager!r}")


def _conda(plan: InstallPlan) -> str:
    """PyTorch's own channel as its pages give it (the plan carries the channels and the
    build package from tables.conda: ``cudatoolkit=11.3 -c pytorch -c conda-forge``,
    ``pytorch-cuda=12.1 -c pytorch -c nvidia``); after that channel's last release
    (a plan without ``conda``), conda-forge, which builds torch itself."""
    names = {"torch": "pytorch"}
    specs = [f"{names.get(p.name, p.name)}=={p.version}" for p in plan.packages]
    if plan.conda is not None:
        extra = [plan.conda.package] if plan.conda.package else []
        channels = [arg for c in plan.conda.channels for arg in ("-c", c)]
        return " ".join(["conda", "install", *specs, *extra, *channels])
    variant = Variant.parse(plan.variant or "cpu")
    if not (variant.is_cpu or variant.is_cuda):
        return f"# conda has no {variant} builds of torch; use pip:\n" + render(plan, "pip")
    build = "cpu*" if variant.is_cpu or _macos(plan) else f"cuda{str(variant)[2:]}*"
    specs[0] = f'"pytorch=={plan.torch}={build}"'
    return (
        "conda install -c conda-forge "
        + " ".join(specs)
        + "\n# conda-forge builds torch itself; its versions can lag PyTorch's releases"
    )


def _uv_project(plan: InstallPlan) -> str:
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


def _poetry(plan: InstallPlan) -> str:
    lines = []
    name = f"pytorch-{plan.variant}"
    if plan.index_url:
        lines += [
            "[[tool.poetry.source]]",
            f'name = "{name}"',
            f'url = "{plan.index_url}"',
            'priority = "explicit"',
            "",
        ]
    lines.append("[tool.poetry.dependencies]")
    for p, pin in zip(plan.packages, pins(plan)):
        version = pin.split("==", 1)[1]
        if plan.index_url:
            lines.append(f'{p.name} = {{ version = "{version}", source = "{name}" }}')
        else:
            lines.append(f'{p.name} = "{version}"')
    return "\n".join(lines)
