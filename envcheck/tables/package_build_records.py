"""What the tables know of what builds were compiled against (package_builds.json): packages
labelled with the torch they were built for, the NumPy torch builds were built against, and
packages built for one CUDA major. Read by tables.read_package_builds; asked by envcheck.pins
(PKG007, PKG008, the plan) and envcheck.cuda_needs (PKG009)."""

from __future__ import annotations

from typing import Dict, Match, Optional, Pattern, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import record, replace
from ..values import Variant
from .versions import Provenance

GROUPS = {"major", "minor"}  # the label's named groups, and one of BUILD_GROUPS
BUILD_GROUPS = {"variant", "cuda"}  # the build (cpu, cu121), or its CUDA major alone ("12")
ABI_GROUP = "abi"  # optional: the C++ ABI it was built with, "true" (C++11) or "false"


@record(frozen=True)
class BuiltFor:
    """What a build label says: the torch minor (``2.1``), the build as labelled (``cu121``,
    ``cu12``) and its CUDA major where it names one (None: a CPU build, or not said)."""

    torch: str
    label: str
    cuda_major: Optional[int]
    cxx11_abi: Optional[bool] = None  # built with the C++11 ABI; None: not said


@record(frozen=True)
class BuildRecord:
    """A file a package writes when its extensions are built, naming the torch they were
    built against: ``file`` (relative to the site folder) is read by the static probe and
    ``pattern`` (groups as a label's; its ``cuda`` may be dotted, "12.1") read in it.
    ``bound_if``: the build is bound to that torch only when the file matches it (DeepSpeed
    compiles its ops at first use unless they were built at install time)."""

    file: str
    pattern: Pattern[str]
    bound_if: Optional[Pattern[str]] = None


@record(frozen=True)
class PackageBuild:
    """How a family of packages records the torch it was built for: ``label`` matches the
    local version label (of the installed version, or of the wheel file it was installed
    from), ``record`` a build-record file it ships; both name the torch ``major``, ``minor``
    and the ``variant`` (cpu, cu121) or ``cuda`` (12, 121, 12.1) it was built for. Neither:
    it records nothing (not checkable). ``index`` (``{torch}``, ``{variant}`` filled in) is
    where the builds for a torch are; ``source_build``: the project builds the one for the
    installed torch when installed from source without build isolation; ``cuda_minor``: the
    build needs torch's CUDA major and minor, not its major alone; ``fails``: what the
    project does under another torch (None: the usual 'undefined symbol')."""

    names: Tuple[str, ...]
    label: Optional[Pattern[str]]
    index: Optional[str]
    provenance: Provenance
    source_build: bool = False
    record: Optional[BuildRecord] = None
    cuda_minor: bool = False
    fails: Optional[str] = None  # what happens under another torch, where the project says

    def built_for(self, local: str) -> Optional[BuiltFor]:
        """BuiltFor("2.1", "cu121", 12) for the label "pt21cu121"; None for other labels."""
        return _built_for(self.label.match(local)) if self.label is not None else None

    def recorded(self, text: str) -> Optional[BuiltFor]:
        """What the build-record file's ``text`` says (None: nothing readable)."""
        return _built_for(self.record.pattern.search(text)) if self.record is not None else None

    def bound(self, text: Optional[str]) -> bool:
        """Whether the package's compiled code is bound to one torch: False only where its
        build record says nothing was compiled at install (it compiles at first use)."""
        rule = self.record.bound_if if self.record is not None else None
        return rule is None or text is None or rule.search(text) is not None


def _built_for(match: Optional[Match[str]]) -> Optional[BuiltFor]:
    if match is None or len(match["minor"]) > 4:  # not a torch minor (nor one for int())
        return None
    groups = match.groupdict()
    torch = f"{match['major']}.{int(match['minor'])}"
    made, abi = _built_for_build(groups, torch), groups.get(ABI_GROUP)
    return made if abi is None else replace(made, cxx11_abi=abi.lower() == "true")


def _built_for_build(groups: Dict[str, Optional[str]], torch: str) -> BuiltFor:
    cuda = groups.get("cuda")
    if cuda is not None:  # "12": a CUDA major; "118" or "11.8": a major and its minor
        digits = cuda.replace(".", "")
        if not digits.strip("0"):  # DeepSpeed's "0.0": built without CUDA
            return BuiltFor(torch, "cpu", None)
        label = f"cu{digits}"
        short = Variant.maybe(label) if len(digits) == 3 else None
        major = (
            int(digits) if len(digits) <= 2 else short.cuda.major if short and short.cuda else None
        )
        return BuiltFor(torch, label, major)
    label = groups["variant"] or ""
    variant = Variant.maybe(label)
    return BuiltFor(
        torch, label, variant.cuda.major if variant is not None and variant.cuda else None
    )


@record(frozen=True)
class NumpyAbi:
    """The torch builds (``torch`` specifier, on ``platforms``; None: every platform) that
    were compiled against a NumPy this ``numpy`` specifier holds: another NumPy major fails."""

    torch: SpecifierSet
    platforms: Optional[Tuple[str, ...]]
    numpy: SpecifierSet
    provenance: Provenance

    def applies(self, torch: Version, platform: Optional[str]) -> bool:
        if not self.torch.contains(torch, prereleases=True):
            return False
        return self.platforms is None or platform in self.platforms


def cuda_major(digits: str) -> int:
    """The CUDA major a name's digits give: "12" is 12; "102" (a major and a minor) is 10."""
    return int(digits[:-1]) if len(digits) == 3 else int(digits)


@record(frozen=True)
class CudaBuild:
    """Packages built for one CUDA major that load that major's libraries themselves: the
    major is in the name (``name``, its ``cuda`` group: cupy-cuda12x) or, for ``names``, in
    their requirement on NVIDIA's CUDA runtime wheel. ``replacement`` (``{major}`` filled in)
    is the project's build for another major; ``fails`` says what happens without them."""

    name: Optional[Pattern[str]]
    names: Tuple[str, ...]
    replacement: Optional[str]
    fails: str
    provenance: Provenance

    def major_in(self, package: str) -> Optional[int]:
        """The CUDA major ``package``'s name records (None: not this entry's, or not a name
        that records one)."""
        match = self.name.match(package) if self.name is not None else None
        return cuda_major(match["cuda"]) if match else None

    def knows(self, package: str) -> bool:
        return package in self.names or self.major_in(package) is not None


@record(frozen=True)
class TorchRange:
    """Releases of a package (``names``, ``versions``) that work only under the torch in
    ``torch``, where their metadata does not require it (torchao's releases were each built
    against one torch and check it at import). ``fails``: what happens outside it;
    ``severity``: how bad that is (torchao only skips its C++ kernels)."""

    names: Tuple[str, ...]
    versions: SpecifierSet
    torch: SpecifierSet
    fails: str
    severity: str
    provenance: Provenance

    def applies(self, name: str, version: str) -> bool:
        """Whether the release ``version`` of ``name`` is one of these; a local build
        (``0.16.0+git1a2b3c``) is the user's own, not the release, and is not."""
        if name not in self.names:
            return False
        try:
            parsed = Version(version)
            local = parsed.local or ""
            return not local.startswith("git") and self.versions.contains(
                parsed.base_version, prereleases=True
            )
        except ValueError:  # InvalidVersion, or a number too long for int()
            return False


@record(frozen=True)
class TorchAbi:
    """The C++ ABI torch's wheels for ``platforms`` were built with (``cxx11``: the C++11 ABI,
    _GLIBCXX_USE_CXX11_ABI=1), for the ``torch`` releases and ``variants`` it names (None:
    every variant). An extension built with the other ABI fails with 'undefined symbol'."""

    torch: SpecifierSet
    platforms: Tuple[str, ...]
    variants: Optional[Tuple[str, ...]]
    cxx11: bool
    provenance: Provenance

    def applies(self, torch: Version, platform: Optional[str], variant: Optional[Variant]) -> bool:
        if platform not in self.platforms or not self.torch.contains(torch, prereleases=True):
            return False
        return self.variants is None or (variant is not None and str(variant) in self.variants)


@record(frozen=True)
class PackageBuilds:
    """package_builds.json: labelled package builds, torch's NumPy ABI, CUDA-major builds and
    how NVIDIA's CUDA runtime wheel names its major (``cuda_runtime``, its ``cuda`` group;
    a name without it carries the major in its version)."""

    labels: Tuple[PackageBuild, ...] = ()
    numpy_abi: Tuple[NumpyAbi, ...] = ()
    cuda_builds: Tuple[CudaBuild, ...] = ()
    cuda_runtime: Optional[Pattern[str]] = None
    torch_ranges: Tuple[TorchRange, ...] = ()
    torch_abi: Tuple[TorchAbi, ...] = ()

    def cxx11_abi(
        self, torch: Version, platform: Optional[str], variant: Optional[Variant]
    ) -> Optional[bool]:
        """Whether torch's wheel of that release, platform and variant was built with the
        C++11 ABI; None where the table does not say."""
        rule = next((a for a in self.torch_abi if a.applies(torch, platform, variant)), None)
        return rule.cxx11 if rule is not None else None

    def torch_range(self, name: str, version: str) -> Optional[TorchRange]:
        """The range of torch that release of ``name`` works under, where the table knows
        one its metadata does not state."""
        return next((r for r in self.torch_ranges if r.applies(name, version)), None)

    def cuda_build(self, package: str) -> Optional[CudaBuild]:
        return next((b for b in self.cuda_builds if b.knows(package)), None)

    def numpy_for(self, torch: Version, platform: Optional[str]) -> Optional[NumpyAbi]:
        """The NumPy a torch build needs, where the table says it is not every NumPy."""
        return next((n for n in self.numpy_abi if n.applies(torch, platform)), None)
