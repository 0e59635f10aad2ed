"""Release matching: which releases and patch versions satisfy a wish, which variants
PyTorch published for a release on a platform, and what the tables do not hold about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Set, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..tables.model import Release, RowConfidence
from ..values import Platform, Variant

if TYPE_CHECKING:
    from ..tables import Tables


def matching_versions(
    release: Release, spec: Optional[SpecifierSet], platform: Optional[Platform] = None
) -> List[Version]:
    """The release's patch versions that satisfy the wish, those with wheels for
    ``platform`` where given."""
    have = release.versions if platform is None else release.versions_on(str(platform))
    if spec is None:
        return sorted(have)
    return sorted(v for v in have if spec.contains(v, prereleases=True))


def version_in(
    release: Release,
    spec: Optional[SpecifierSet],
    near: Optional[Version],
    platform: Optional[Platform] = None,
) -> Version:
    """The installed patch release when it is this release's (``2.6.0a0`` is 2.6.0), else
    the newest that satisfies the wish (and has wheels for ``platform``)."""
    versions = matching_versions(release, spec, platform)
    if near is not None:
        base = Version(near.base_version)
        if base in versions:
            return base
    return versions[-1]


def nearest_first(releases: List[Release], near: Version) -> List[Release]:
    """The release of ``near`` first, then by distance in releases, the older first on a tie
    (a driver too old for one torch runs the one before; a GPU too new needs the next)."""
    order = sorted(releases, key=lambda r: Version(r.minor))
    minor = Version(f"{near.major}.{near.minor}")
    below = [r for r in order if Version(r.minor) <= minor]
    here = len(below) - 1 if below and Version(below[-1].minor) == minor else len(below) - 0.5

    def distance(item: Tuple[int, Release]) -> Tuple[float, int]:
        i, r = item
        return (abs(i - here), 0 if Version(r.minor) <= minor else 1)

    return [r for _, r in sorted(enumerate(order), key=distance)]


def cuda_names(release: Release, platform: Platform) -> Optional[Tuple[Variant, ...]]:
    """The CUDA builds of a release on a platform (None: not known). Windows has its own
    list where the tables hold it, else the Linux one stands in (said: platform_unknowns)."""
    if platform.is_macos or str(platform) == "windows-arm64":
        return ()
    if platform.arch == "aarch64":
        return release.cuda_aarch64_variants
    if platform.is_windows and release.windows_cuda is not None:
        return release.windows_cuda
    return release.cuda_variants


def _xpu(release: Release, platform: Platform) -> Optional[bool]:
    if str(platform) == "windows-x86_64":
        return release.windows_xpu if release.windows_xpu is not None else release.xpu
    return release.xpu if str(platform) == "linux-x86_64" else False


def known_variants(tables: Tables) -> Set[Variant]:
    """Every variant any release was published in, on any platform, by pip or conda."""
    known = {
        v for r in tables.releases for p in r.platforms for v in variants_of(r, Platform.parse(p))
    }
    if tables.conda is not None:
        known |= {b.variant for c in tables.conda.releases for b in c.builds}
    return known


def variants_of(release: Release, platform: Platform) -> List[Variant]:
    """The variants PyTorch published for a release on a platform. ROCm builds are for
    Linux x86_64 only; Windows on ARM64 and macOS have CPU builds only."""
    if platform.is_macos:
        return [Variant("cpu")]
    found = [Variant("cpu"), *(cuda_names(release, platform) or ())]
    if str(platform) == "linux-x86_64":
        found += release.rocm_variants or ()
    if _xpu(release, platform):
        found.append(Variant("xpu"))
    return found


def platform_unknowns(
    release: Release, platform: Platform, python: Optional[Version], variant: Variant
) -> List[str]:
    """What the plan assumes about this platform that the tables do not hold: the Python
    range of its wheels, and (Windows) whether this CUDA or XPU build exists there."""
    out: List[str] = []
    key = str(platform)
    if python is not None and not release.python_verified(key):
        low, high = release.python_range(key)
        out.append(
            f"Python {python} wheels of torch {release.minor} for {key}: the tables hold no "
            f"range for this platform (torch {release.minor} supports {low}-{high} elsewhere)"
        )
    if platform.is_windows and variant.is_cuda and release.windows_cuda is None:
        out.append(
            f"a {variant} build of torch {release.minor} for Windows: the tables do not list "
            "the Windows CUDA builds of this release"
        )
    if key == "windows-x86_64" and variant.is_xpu and release.windows_xpu is None:
        out.append(f"an XPU build of torch {release.minor} for Windows: not known to the tables")
    return out + row_unknowns(release, variant)


def row_unknowns(release: Release, variant: Variant) -> List[str]:
    """What a row read from less than its release's own matrix leaves open (the row's
    confidence): a nightly row, the release itself; a row read from its wheels, a CUDA
    build inferred from nightlies rather than seen among them (the default one is)."""
    read = f"as read on {release.source_date}" if release.source_date else "date not recorded"
    if release.confidence is RowConfidence.NIGHTLY:
        return [
            f"torch {release.minor} as released: the tables hold it from nightly builds only "
            f"({read})"
        ]
    inferred = "variants.cuda" in release.provenance.inferred
    seen = variant in release.default_variant.values()
    if release.confidence is RowConfidence.WHEEL and variant.is_cuda and inferred and not seen:
        return [
            f"a {variant} build of torch {release.minor}: the tables read this release from its "
            f"released wheels ({read}), not from its build matrix, and infer {variant} from "
            "the nightlies before it"
        ]
    return []


def default_index(version: Version, variant: Variant, platform: Platform, tables: Tables) -> bool:
    """Whether PyTorch's install page gives the plain default-index command.

    It does on macOS, and up to 2.0 for the default CUDA of Linux x86_64; from 2.1
    it gives ``--index-url`` for every Linux and Windows variant, even the one PyPI
    also serves (an explicit index cannot pick another variant).
    """
    if platform.is_macos:
        return True
    release = tables.release(version)
    default = release.default_variant.get(str(platform)) if release else None
    return (
        default is not None
        and variant == default
        and str(platform) == "linux-x86_64"
        and version < Version("2.1")
    )
