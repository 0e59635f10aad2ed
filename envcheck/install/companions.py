"""The packages that come with torch: torchvision and torchaudio paired with the planned
torch (per variant where a build has its own pairing), an installed triton re-pinned, and
the local labels that make pip replace a build of the same version."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .. import builds
from .._record import replace
from ..compat import platform_of, torch_variant
from ..facts import Facts
from ..tables import Tables
from ..tables.model import Release, parse_version
from ..values import Platform, Variant
from .draft import Draft
from .plan import Package
from .wish import Wish

COMPANIONS = ("torchvision", "torchaudio")


def add_companions(
    plan: Draft,
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wish: Wish,
    variant: Optional[Variant] = None,
) -> None:
    """The companions asked for (those installed now, by default), each paired with torch."""
    names: Optional[Sequence[str]] = wish.companions
    if names is None:
        names = tuple(p.name for p in facts.torch.companions if p.name in COMPANIONS)
    for name in names:
        if name not in COMPANIONS:
            plan.notes.append(f"{name}: not a torch companion envcheck pins; install it separately")
            continue
        pin = release.companion(name, version, variant)
        usual = release.companion(name, version)
        if pin:
            plan.packages.append(Package(name, pin))
            if pin != usual:
                plan.notes.append(f"{name} {pin}: the {variant} build's own pairing")
        elif usual:
            why = release.provenance.notes.get(f"companions_by_variant.{variant}", "")
            plan.notes.append(
                f"{name} has no {variant} build for torch {version}: left out"
                + (f" ({why})" if why else "")
            )
        else:
            _compatible_instead(plan, tables, release, version, name)


def _compatible_instead(
    plan: Draft, tables: Tables, release: Release, version: Version, name: str
) -> None:
    """A companion with no release for this torch: the one its documented range allows."""
    also = release.compatible.get(name)
    pick = _compatible_companion(tables, name, also) if also else None
    if pick:  # e.g. torchaudio 2.11.1 (torch>=2.11) for torch 2.12-2.14
        plan.packages.append(Package(name, pick))
        plan.notes.append(
            f"{name} {pick}: {name} has no release for torch {version}; "
            f"{name} {also} is documented to work with it"
        )
    else:
        extra = f" ({name} {also} works with it)" if also else ""
        plan.notes.append(f"{name} has no release for torch {version}: left out{extra}")


def _compatible_companion(tables: Tables, name: str, wanted: SpecifierSet) -> Optional[str]:
    """The newest version of a companion that the tables pair with any release and that
    satisfies ``wanted``, the range a release's ``compatible`` field documents."""
    known = {
        Version(v)
        for r in tables.releases
        for v in (r.torchvision if name == "torchvision" else r.torchaudio).values()
        if v
    }
    fits = sorted(v for v in known if v in wanted)
    return str(fits[-1]) if fits else None


def add_triton(plan: Draft, facts: Facts, release: Release, variant: Variant) -> None:
    """An installed triton that is not the one this torch build pins comes along, pinned."""
    pinned = release.bundled.get(variant, {}).get("triton")
    have = next((p for p in facts.torch.companions if p.name in ("triton", "pytorch-triton")), None)
    exact = parse_version(pinned.lstrip("=")) if pinned and pinned[0] in "=0123456789" else None
    if have is None or exact is None or parse_version(have.version) == exact:
        return
    plan.packages.append(Package(have.name, str(exact)))


def for_installed(plan: Draft, facts: Facts) -> bool:
    """Whether the plan is for the interpreter whose torch the facts describe: its Python
    version and platform. A plan for another (``--platform macos-arm64`` on Linux,
    ``--python 3.13``) has no installed torch to compare with."""
    here = ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None
    target = platform_of(facts)
    return plan.python == here and target is not None and plan.platform == str(target)


def pin_local_labels(plan: Draft, facts: Facts, platform: Platform) -> None:
    """Pin ``+variant`` on each package whose installed copy is the same version in another
    build: pip and uv count ``torch==2.13.0`` as met by ``2.13.0+cpu`` and change nothing.
    PyTorch's own index publishes every such build under its label (macOS has one build).
    A plan for another Python or platform installs beside no installed copy."""
    variant = plan.variant
    if platform.is_macos or variant is None or not for_installed(plan, facts):
        return
    installed: Dict[str, str] = {p.name: p.version for p in facts.torch.companions}
    if facts.torch.installed and facts.torch.version:
        installed["torch"] = facts.torch.version
    for i, package in enumerate(plan.packages):
        have = parse_version(installed.get(package.name))
        if have is None or Version(have.public) != Version(package.version):
            continue  # another version (a pre-release, a nightly): pip replaces it anyway
        have_variant = (
            torch_variant(facts) if package.name == "torch" else builds.variant(str(have))
        )
        if package.name != "torch" and have.local is None:
            have_variant = torch_variant(facts)  # an unlabelled companion is torch's build
        if have_variant != variant:
            plan.packages[i] = replace(package, local=str(variant))
            plan.replaces_build = True
    if plan.replaces_build:
        plan.default_index = False  # only PyTorch's index has the labelled builds
