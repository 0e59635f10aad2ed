"""Render an InstallPlan as the command or project snippet for one package manager.

pip commands follow PyTorch's own install pages for the same choice: since 2.1,
pinned packages and ``--index-url https://download.pytorch.org/whl/<variant>``
unless the default index already serves that variant (2.0: the same, with the
default CUDA on PyPI); for 1.x, ``+variant`` local labels on torch and
torchvision with ``--extra-index-url``. (Before 1.11 the pages used
``-f .../torch_stable.html``; the ``--extra-index-url`` form works for them today.)
"""

from __future__ import annotations

from typing import List, Sequence

from packaging.version import Version

from .plan import InstallPlan

MANAGERS = ("pip", "uv", "conda", "requirements", "uv-project", "poetry")


def _legacy(plan: InstallPlan) -> bool:
    """torch 1.x: local labels and --extra-index-url."""
    return Version(plan.torch or "0").major < 2


def pins(plan: InstallPlan) -> List[str]:
    out = []
    label = (
        _legacy(plan) and not plan.default_index and not (plan.platform or "").startswith("macos")
    )
    for p in plan.packages:
        labelled = label and p.name in ("torch", "torchvision")
        out.append(
            f"{p.name}=={p.version}+{plan.variant}" if labelled else f"{p.name}=={p.version}"
        )
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
    if (
        plan.variant in uv_backends
        and not _legacy(plan)
        and not (plan.platform or "").startswith("macos")
    ):
        return [p for p in pins(plan)] + [f"--torch-backend={plan.variant}"]
    return pip_args(plan)


def render(plan: InstallPlan, manager: str, uv_backends: Sequence[str] = ()) -> str:
    """The command or snippet for ``manager``; ``uv_backends`` from the installers table."""
    if not plan.ok or not plan.torch:
        raise ValueError("nothing to render: the plan has no solution")
    if manager == "pip":
        return "pip install " + " ".join(pip_args(plan))
    if manager == "uv":
        return "uv pip install " + " ".join(uv_args(plan, uv_backends))
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
    """The pytorch channel stopped after 2.5; conda-forge builds after that."""
    version = Version(plan.torch)
    names = {"torch": "pytorch"}
    specs = [f"{names.get(p.name, p.name)}=={p.version}" for p in plan.packages]
    variant = plan.variant or "cpu"
    macos = (plan.platform or "").startswith("macos")
    if (version.major, version.minor) <= (2, 5):  # the pytorch channel's own builds
        if macos:
            return "conda install " + " ".join(specs) + " -c pytorch"
        if variant == "cpu":
            return "conda install " + " ".join(specs) + " cpuonly -c pytorch"
        if variant.startswith("cu"):
            cuda = f"{variant[2:-1]}.{variant[-1]}"
            if version >= Version("1.13"):
                return (
                    "conda install "
                    + " ".join(specs)
                    + f" pytorch-cuda={cuda} -c pytorch -c nvidia"
                )
            # Before pytorch-cuda: the cudatoolkit package; the 11.x toolkits after 11.3
            # came from conda-forge (PyTorch's own commands for 1.12).
            forge = " -c conda-forge" if Version(cuda) >= Version("11.6") else ""
            return "conda install " + " ".join(specs) + f" cudatoolkit={cuda} -c pytorch" + forge
    if variant.startswith("rocm") or variant == "xpu":
        return f"# conda has no {variant} builds of torch; use pip:\n" + render(plan, "pip")
    build = "cpu*" if variant == "cpu" or macos else f"cuda{variant[2:]}*"
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
