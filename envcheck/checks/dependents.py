"""PKG006: an installed package that requires another torch than the one installed; PKG007:
one whose compiled extension was built for another torch or build (its version's label).

xFormers, vLLM, flash-attn and PyG's extensions declare the torch they were built for
(``Requires-Dist: torch==2.4.1``); pip installs another torch over them with only a warning,
and the package then fails at import or with ``undefined symbol``. The requirement as it
applies here (markers for the target interpreter) comes from envcheck.pins.
"""

from __future__ import annotations

from typing import List

from packaging.version import Version

from ..compat import platform_name, torch_variant, torch_version
from ..facts import Facts
from ..findings import Finding
from ..pins import Pin, builds_for_other_torch, installed_cxx11_abi, numpy_mismatch, torch_pins
from ..rules import RULES
from ..tables import Tables
from ..tables.versions import parse_version


def check(facts: Facts, tables: Tables) -> List[Finding]:
    current = torch_version(facts)
    if current is None:
        return []
    found = _pinned(facts, tables, current) + _built_for(facts, tables, current)
    return found + _numpy(facts, tables, current)


_PIP_WARNS = (
    "pip installs a torch over such a pin with only a warning; the package then fails at "
    "import or with 'undefined symbol'."
)


def _pinned(facts: Facts, tables: Tables, current: Version) -> List[Finding]:
    pins, _ = torch_pins(facts, tables)
    findings = []
    for pin in pins:
        if pin.allows(current):
            continue
        name, version = pin.package.name, pin.package.version
        findings.append(
            RULES["PKG006"](
                f"{pin.text}, but torch {facts.torch.version} is installed",
                [f"{name} {version}: {pin.source}", f"torch {facts.torch.version}"],
                f"Install a torch that meets it (torch{pin.requirement.specifier}: "
                f'`envcheck install --torch "{pin.requirement.specifier}"` picks the build for '
                f"this machine), or a release of {name} made for torch {current.base_version}"
                + _other_release(name, _needs_newer_torch(pin, current))
                + ". "
                + (pin.rule.fails if pin.rule else _PIP_WARNS),
                severity=pin.rule.severity if pin.rule else None,
            )
        )
    return findings


def _needs_newer_torch(pin: Pin, current: Version) -> bool:
    """Whether ``current`` is below what the pin allows (a lower bound, or an == above it):
    then the package's older releases are the ones made for it, not its newer ones."""
    for spec in pin.requirement.specifier:
        if spec.contains(current, prereleases=True):
            continue
        if spec.operator in (">=", ">", "~="):
            return True
        pinned = parse_version(spec.version.rstrip(".*"))
        if spec.operator in ("==", "===") and pinned is not None and pinned > current:
            return True
    return False


def _other_release(name: str, older: bool) -> str:
    if older:  # it needs a newer torch: its older releases are for an older torch
        return f" (an older release: `pip index versions {name}` lists them; check its pin)"
    return (
        f" (a newer release: `pip install -U {name}` may bring its own torch pin, so check "
        "again after it)"
    )


def _built_for(facts: Facts, tables: Tables, current: Version) -> List[Finding]:
    findings = []
    abi = installed_cxx11_abi(facts, tables)
    for b in builds_for_other_torch(facts, tables, current, torch_variant(facts), abi):
        pkg = b.package
        fix = f"Reinstall {pkg.name} built for torch {current.major}.{current.minor}" + (
            f": {b.reinstall}" if b.reinstall else ""
        )
        findings.append(
            RULES["PKG007"](
                f"{pkg.name} {pkg.version} was built for {b.made_for}; {b.why}",
                [f"{pkg.name} {pkg.version}: {b.where}", f"torch {facts.torch.version}"],
                f"{fix}. "
                + (
                    b.fails
                    or "An extension built against another torch fails at import "
                    "('undefined symbol') or when it first runs on the GPU."
                ),
            )
        )
    return findings


def _numpy(facts: Facts, tables: Tables, current: Version) -> List[Finding]:
    """PKG008: NumPy 2 under a torch build compiled against NumPy 1 (or the reverse)."""
    found = numpy_mismatch(facts, tables, current, platform_name(facts))
    if found is None:
        return []
    numpy, rule = found
    needs = rule.numpy
    return [
        RULES["PKG008"](
            f"torch {facts.torch.version} was built against numpy{needs}; numpy {numpy.version} "
            "is installed",
            [f"numpy {numpy.version}", f"torch {facts.torch.version}"],
            f'Install a NumPy it was built for (pip install "numpy{needs}"), or a torch outside '
            f"{rule.torch}, the builds compiled against another NumPy here "
            "(package_builds.json). Until then importing "
            "torch warns 'A module that was compiled using NumPy 1.x cannot be run in NumPy 2', "
            "and torch.tensor(ndarray) and .numpy() fail ('Numpy is not available').",
        )
    ]
