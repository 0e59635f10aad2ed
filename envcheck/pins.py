"""What installed packages require of torch: each dependent's Requires-Dist on torch (read
by the static probe, PackageFacts.requires), evaluated for the target interpreter's markers.

One place for the question both the check (PKG006: a package pinned to another torch) and
the install plan (what an install breaks) ask, so they never disagree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from packaging.version import Version

from ._record import record
from .compat import platform_name, torch_variant, torch_version
from .facts import Facts, PackageFacts
from .tables import Tables
from .tables.package_build_records import BuiltFor, NumpyAbi, PackageBuild, TorchRange
from .values import Variant

if TYPE_CHECKING:  # packaging's requirement and marker parsers load when a line is read
    from packaging.requirements import Requirement

_SYS_PLATFORM = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}


@record(frozen=True)
class Pin:
    """One installed package's requirement on torch, as it applies on this machine."""

    package: PackageFacts
    requirement: Requirement
    # Where the tables, not its metadata, say it (package_builds.json torch_ranges): the
    # entry, with what happens outside it. None: its own Requires-Dist.
    rule: Optional[TorchRange] = None

    @property
    def source(self) -> str:
        """Where the requirement comes from, for a finding's evidence."""
        if self.rule is None:
            return f"Requires-Dist: {self.requirement}"
        return f"needs torch{self.requirement.specifier} (package_builds.json)"

    @property
    def text(self) -> str:
        return (
            f"{self.package.name} {self.package.version} requires torch{self.requirement.specifier}"
        )

    def allows(self, torch: Version) -> bool:
        """Whether ``torch`` (local label and all: 2.4.1+cu121 meets ==2.4.1) meets it; a pin
        that cannot be compared (a version too long for int()) is not held against it."""
        try:
            return self.requirement.specifier.contains(torch, prereleases=True)
        except ValueError:
            return True


def marker_environment(facts: Facts) -> Dict[str, str]:
    """The PEP 508 marker variables of the target interpreter, from its facts (it may not be
    the one envcheck runs in). No extra is selected: a requirement of an extra is not one."""
    version = facts.python.version or ""
    major_minor = ".".join(version.split(".")[:2])
    implementation = facts.python.implementation or "CPython"
    return {
        "python_version": major_minor,
        "python_full_version": version,
        "implementation_name": implementation.lower(),
        "implementation_version": version,
        "platform_python_implementation": implementation,
        "sys_platform": _SYS_PLATFORM.get(facts.system.os, facts.system.os.lower()),
        "platform_system": facts.system.os,
        "platform_machine": facts.system.machine,
        "platform_release": facts.system.kernel or "",
        "platform_version": "",
        "os_name": "nt" if facts.system.os == "Windows" else "posix",
        "extra": "",
    }


def torch_pins(facts: Facts, tables: Tables) -> Tuple[List[Pin], List[str]]:
    """(the requirements on torch that apply here, the lines that could not be read). A
    requirement whose markers do not hold here (another Python, an extra) is left out; a
    release the tables know a range of torch for, its metadata stating none, gets that one
    (package_builds.json torch_ranges)."""
    env = marker_environment(facts)
    pins: List[Pin] = []
    unread: List[str] = []
    for package in facts.torch.dependents:
        own = _requirements(package, env, unread)
        pins += [Pin(package, r) for r in own]
        rule = tables.package_builds.torch_range(package.name, package.version)
        if rule is not None and not own:
            from packaging.requirements import Requirement

            pins.append(Pin(package, Requirement(f"torch{rule.torch}"), rule))
    return pins, unread


def _requirements(
    package: PackageFacts, env: Dict[str, str], unread: List[str]
) -> List[Requirement]:
    """``package``'s requirements on torch whose markers hold in ``env``; the lines that
    cannot be read are added to ``unread``."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    out = []
    for line in package.requires:
        requirement = parse_requirement(line)
        if requirement is None:
            unread.append(f"{package.name} {package.version}: {line}")
            continue
        if requirement.name.lower() != "torch":  # NVIDIA's wheels: envcheck.cuda_needs
            continue
        try:
            if requirement.marker is not None and not requirement.marker.evaluate(env):
                continue
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError):
            # ValueError: InvalidVersion from older packaging (a "3.12.1+" Python, a kernel
            # release), or a number too long for int()
            unread.append(f"{package.name} {package.version}: {line}")
            continue
        if any(not spec.version for spec in requirement.specifier):  # "torch ===": older
            unread.append(f"{package.name} {package.version}: {line}")  # packaging took it
        elif requirement.specifier:
            out.append(requirement)
    return out


def unmet_pins(facts: Facts, tables: Tables, torch: Optional[str]) -> List[Pin]:
    """The pins ``torch`` (a version, such as the installed or a planned one) does not meet."""
    try:
        version = Version(torch) if torch else None
    except ValueError:  # InvalidVersion, or a number too long for int()
        return []
    if version is None:
        return []
    return [p for p in torch_pins(facts, tables)[0] if not p.allows(version)]


@lru_cache(maxsize=4096)  # the check, the plan and --keep read the same lines
def parse_requirement(line: str) -> Optional[Requirement]:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


@record(frozen=True)
class LabelledBuild:
    """An installed package whose build label says it was built for another torch (or
    build) than ``torch``: which, why that does not fit, and the command that reinstalls it
    for the torch it runs with (None: the tables know no way that does not guess)."""

    package: PackageFacts
    torch: str  # the torch minor it was built for, "2.1"
    variant: str  # the build it was made for, as labelled: "cu121", "cu12" ("": not said)
    why: str
    reinstall: Optional[str]
    fails: Optional[str] = None  # what the project does under another torch (the table's)
    where: str = ""  # what said so: "its version", the wheel's name, the build-record file

    @property
    def made_for(self) -> str:
        """ "torch 2.1 (cu121)"; "torch 2.6" where its record names no build."""
        return f"torch {self.torch}" + (f" ({self.variant})" if self.variant else "")


def build_label(package: PackageFacts) -> Optional[str]:
    """The local label that records what ``package`` was built for: its version's
    (``2.1.2+pt21cu121``), else the one of the wheel file it was installed from (flash-attn's
    release wheels label only the file name: ``flash_attn-2.8.1+cu12torch2.7cxx11abiTRUE-...``)."""
    if "+" in package.version:
        return package.version.partition("+")[2].lower()
    if package.wheel and package.wheel.count("-") >= 4:  # name-version[-build]-py-abi-platform
        return package.wheel.split("-")[1].partition("+")[2].lower() or None
    return None


@record(frozen=True)
class RecordedBuild:
    """An installed package the table (package_builds.json) knows as built for one torch:
    its entry, what its install says it was built for (None: nothing readable) and what
    said so (its version's label, the wheel it was installed from, its build-record file)."""

    package: PackageFacts
    build: PackageBuild
    made: Optional[BuiltFor]
    where: str


def recorded_builds(facts: Facts, tables: Tables) -> List[RecordedBuild]:
    """Each installed package the table knows as built for one torch, with what its label or
    build-record file says. A package whose build record says nothing was compiled at
    install (DeepSpeed's ops built at first use) is bound to no torch and left out."""
    by_name = {name: build for build in tables.package_builds.labels for name in build.names}
    out = []
    for pkg in facts.torch.dependents:
        build = by_name.get(pkg.name)
        if build is not None and build.bound(pkg.record):
            out.append(_recorded(pkg, build))
    return out


def _recorded(package: PackageFacts, build: PackageBuild) -> RecordedBuild:
    """The first record that reads: the version's label, the wheel's, the build-record file."""
    label = build_label(package)
    made = build.built_for(label) if label else None
    if made is not None:
        own = "+" in package.version
        where = "its version's label" if own else f"installed from {package.wheel}"
        return RecordedBuild(package, build, made, where)
    if package.record is not None and build.record is not None:
        return RecordedBuild(package, build, build.recorded(package.record), build.record.file)
    return RecordedBuild(package, build, None, "")


def builds_for_other_torch(
    facts: Facts,
    tables: Tables,
    torch: Version,
    variant: Optional[Variant],
    abi: Optional[bool] = None,
) -> List[LabelledBuild]:
    """The packages built for another torch minor than ``torch``, for a build ``variant``
    cannot load (CUDA under a CPU torch, another CUDA major), or for the other C++ ABI than
    ``abi`` (torch's: True the C++11 one; None: not known, not compared)."""
    out = []
    for r in recorded_builds(facts, tables):
        made = r.made
        why = _mismatch(made, torch, variant, r.build.cuda_minor, abi) if made else None
        if made is not None and why is not None:
            reinstall = _reinstall(r.package.name, r.build, torch, variant)
            out.append(
                LabelledBuild(
                    r.package, made.torch, made.label, why, reinstall, r.build.fails, r.where
                )
            )
    return out


def torch_cxx11_abi(
    facts: Facts,
    tables: Tables,
    torch: Version,
    variant: Optional[Variant],
    platform: Optional[str],
    planned: bool = False,
) -> Optional[bool]:
    """Whether that torch was built with the C++11 ABI (None: not known). A ``planned`` one
    is a wheel of the index, as the table says; the installed one only where pip or uv
    installed it from a wheel (a conda or source build may differ), its label first
    (``+cpu.cxx11.abi``)."""
    if not planned:
        label = (facts.torch.version or "").partition("+")[2]
        if (facts.torch.installer or "").lower() not in ("pip", "uv") or label.startswith("git"):
            return None
        if "cxx11" in label:
            return True
    return tables.package_builds.cxx11_abi(torch, platform, variant)


def installed_cxx11_abi(facts: Facts, tables: Tables) -> Optional[bool]:
    """torch_cxx11_abi of the installed torch."""
    version = torch_version(facts)
    if version is None:
        return None
    return torch_cxx11_abi(facts, tables, version, torch_variant(facts), platform_name(facts))


def abi_not_compared(facts: Facts, tables: Tables) -> List[PackageFacts]:
    """The installed packages whose label names the C++ ABI they were built with while the
    installed torch's is not known: that part of PKG007 is not judged, never taken as fine."""
    if installed_cxx11_abi(facts, tables) is not None:
        return []
    return [
        r.package
        for r in recorded_builds(facts, tables)
        if r.made is not None and r.made.cxx11_abi is not None
    ]


def unrecorded_builds(facts: Facts, tables: Tables) -> List[PackageFacts]:
    """The installed packages the table knows as built for one torch whose install records
    no label envcheck can read (flash-attn built from source): not checkable, never fine."""
    return [r.package for r in recorded_builds(facts, tables) if r.made is None]


def _reinstall(
    name: str, build: PackageBuild, torch: Version, variant: Optional[Variant]
) -> Optional[str]:
    """The command that puts the build for ``torch`` in place: from the project's index of
    builds per torch (which holds CPU and CUDA builds only), or built from source against
    the installed torch (no build isolation: an isolated build would fetch another torch)."""
    served = variant is not None and (variant.is_cpu or variant.is_cuda)
    if served and build.index:
        index = build.index.format(torch=f"{torch.major}.{torch.minor}.0", variant=variant)
        return f"pip install --force-reinstall --no-deps {name} -f {index}"
    if build.source_build:
        return f"pip install --force-reinstall --no-deps --no-build-isolation {name}"
    return None


def _mismatch(
    made: BuiltFor,
    torch: Version,
    variant: Optional[Variant],
    cuda_minor: bool = False,
    abi: Optional[bool] = None,
) -> Optional[str]:
    """Why a build ``made`` for one torch minor, build and C++ ABI does not fit ``torch``, or
    None (``cuda_minor``: the build needs torch's CUDA minor too, not only its major)."""
    if made.torch != f"{torch.major}.{torch.minor}":
        return f"torch {torch} is installed"
    why = _cuda_mismatch(made, variant, cuda_minor)
    if why is None and None not in (made.cxx11_abi, abi) and made.cxx11_abi != abi:
        return f"torch {torch} was built with the {_abi(abi)} ABI, and it with the {_abi(made.cxx11_abi)} one"
    return why


def _abi(cxx11: Optional[bool]) -> str:
    return "C++11" if cxx11 else "pre-C++11"


def _cuda_mismatch(made: BuiltFor, variant: Optional[Variant], cuda_minor: bool) -> Optional[str]:
    if variant is None or made.label == str(variant) or made.cuda_major is None:
        return None
    if not variant.is_cuda:
        return f"the installed torch is a {variant} build"
    theirs = variant.cuda
    if theirs is not None and made.cuda_major != theirs.major:
        return f"torch's CUDA is {theirs}, another major"
    if theirs is not None and cuda_minor:
        return f"torch's CUDA is {theirs}, and its build needs the same CUDA minor"
    return None


def numpy_mismatch(
    facts: Facts, tables: Tables, torch: Version, platform: Optional[str]
) -> Optional[Tuple[PackageFacts, NumpyAbi]]:
    """(the installed numpy, the table's rule for ``torch``: the NumPy it needs) where the build of ``torch`` for
    ``platform`` was compiled against a NumPy major the installed one is not (package_builds
    .json: torch < 2.3 and Windows 2.3-2.4.0 were built against NumPy 1)."""
    numpy = next((p for p in facts.torch.companions if p.name == "numpy"), None)
    rule = tables.package_builds.numpy_for(torch, platform)
    if numpy is None or rule is None:
        return None
    try:
        fits = rule.numpy.contains(Version(numpy.version), prereleases=True)
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None
    return None if fits else (numpy, rule)


__all__ = [
    "LabelledBuild",
    "Pin",
    "RecordedBuild",
    "abi_not_compared",
    "build_label",
    "builds_for_other_torch",
    "installed_cxx11_abi",
    "marker_environment",
    "numpy_mismatch",
    "parse_requirement",
    "recorded_builds",
    "torch_cxx11_abi",
    "torch_pins",
    "unmet_pins",
    "unrecorded_builds",
]
