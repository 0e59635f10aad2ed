"""Decide what to install: torch version, variant and matching companions, with reasons.

Pure: Facts + Tables + the user's wish -> InstallPlan. This is the only place that
picks a torch version, a variant and companions; rendering the plan as a pip, uv,
conda or project-file command is a separate step (render.py). Every command
envcheck prints (a finding's fix, `envcheck install`, `--run`) comes from here.

The decision: among the releases that satisfy the wish and have a wheel for this
Python and platform, the newest (or, with ``Wish.near``, the one nearest the
installed torch: the least change that fixes the machine); for it, the best
variant for this driver and *every* GPU (the newest CUDA the driver runs, by
minor-version compatibility, whose build still carries kernels for every GPU;
the installed variant first when it fits); CPU without a GPU; the default wheel
on macOS. When nothing satisfies everything, the plan says which constraint
conflicts and the nearest ways out.

A plan that keeps a version but changes its build (``2.13.0+cpu`` to the cu126
build) pins the local label (``torch==2.13.0+cu126``): pip and uv treat a plain
``torch==2.13.0`` as satisfied by the installed ``2.13.0+cpu`` and change nothing.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .. import builds
from ..compat import (
    INDEX_URL,
    DriverVerdict,
    arch_coverage,
    build_arch_list,
    driver_drops,
    driver_predates,
    driver_verdict,
    forward_compat_way_out,
    gpu_capabilities,
    has_amd_gpu,
    has_nvidia_gpu,
    platform_of,
    runtime_gfx_targets,
    sm_name,
    torch_variant,
    torch_version,
)
from ..facts import Facts
from ..tables import Tables
from ..tables.model import CondaChannel, Release, parse_driver, parse_version
from ..values import ComputeCapability, Platform, Variant

COMPANIONS = ("torchvision", "torchaudio")


class WishError(ValueError):
    """A --torch, --variant, --python-version or --platform value that cannot be understood."""


@dataclass(frozen=True)
class Wish:
    torch: str = "latest"  # latest, 2.5, 2.5.1, or a specifier like >=2.4,<2.7
    variant: str = "auto"  # auto, cpu, cuXYZ, rocmX.Y, xpu
    companions: Optional[Tuple[str, ...]] = None  # None: those installed now
    python: Optional[str] = None  # X.Y; None: this machine's
    platform: Optional[str] = None  # None: this machine's
    # Prefer this torch (the installed one): its version and build when they fit, else
    # the release nearest to it that does. `envcheck install --keep`.
    near: Optional[str] = None
    # The package manager the plan is for: with conda, the variants, companions and channels
    # are those of PyTorch's conda channel (tables.conda) up to its last release.
    manager: str = "pip"

    def __post_init__(self) -> None:
        if self.companions is not None and not isinstance(self.companions, tuple):
            object.__setattr__(self, "companions", tuple(self.companions))

    @property
    def cli_args(self) -> List[str]:
        """The `envcheck install` options that make the same plan (for reports and parity)."""
        args = [] if self.torch in ("", "latest") else ["--torch", self.torch]
        if self.near:
            args.append("--keep")
        if self.variant != "auto":
            args += ["--variant", self.variant]
        if self.companions is not None:
            args += ["--with", ",".join(self.companions) or "none"]
        if self.python:
            args += ["--python-version", self.python]
        if self.platform:
            args += ["--platform", self.platform]
        if self.manager != "pip":
            args += ["--manager", self.manager]
        return args


@dataclass
class Package:
    name: str
    version: str
    # The local label to pin (``cu126`` -> ``torch==2.13.0+cu126``): set when the
    # installed copy has this version in another build, which a public pin leaves alone.
    local: Optional[str] = None

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}" + (f"+{self.local}" if self.local else "")


@dataclass
class CondaCommand:
    """What a ``conda install`` from PyTorch's own channel needs besides the pins."""

    channels: List[str]  # in order: ["pytorch", "nvidia"]
    package: Optional[str] = (
        None  # the build selector: cudatoolkit=11.3, pytorch-cuda=12.1, cpuonly
    )


@dataclass
class InstallPlan:
    ok: bool
    platform: Optional[str]
    python: Optional[str]
    torch: Optional[str] = None
    variant: Optional[str] = None
    default_index: bool = False  # the default index (PyPI) serves this variant
    packages: List[Package] = field(default_factory=list)
    reasons: List[str] = field(default_factory=list)  # why this choice, one or two lines
    notes: List[str] = field(default_factory=list)  # companions left out, PTX-only GPUs, ...
    conflicts: List[str] = field(default_factory=list)  # when ok is False: what conflicts
    ways_out: List[str] = field(default_factory=list)
    changes: List[str] = field(default_factory=list)  # what changes against the installed torch
    replaces_build: bool = False  # same version, another build: the pins carry local labels
    # PyTorch's index for this version when it is not the usual one (the 1.8 LTS builds:
    # https://download.pytorch.org/whl/lts/1.8/); the variant is appended.
    index_base: Optional[str] = None
    # Facts the plan depends on that the tables do not hold ("kernels for sm_120 in
    # 2.5.1+cu124: the arch list of that build is not known"): said, never assumed.
    unverified: List[str] = field(default_factory=list)
    # When ok is False: why, as a value (no_wheel, driver, kernels, unknown: BLOCKERS).
    blocker: Optional[str] = None
    passed_over: List[Tuple[str, str]] = field(
        default_factory=list
    )  # (torch, why not), tried first
    wish: Wish = field(default_factory=Wish)
    # Set when the plan is for PyTorch's conda channel (Wish.manager conda, torch <= its last).
    conda: Optional[CondaCommand] = None
    # The interpreter the commands must name (`PATH -m pip`, `uv pip install --python PATH`):
    # set when the plan is for the described interpreter and a bare `pip` would not reach it.
    interpreter: Optional[str] = None
    # That interpreter is externally managed (PEP 668): pip refuses it, so the commands make
    # a virtual environment first.
    externally_managed: bool = False

    @property
    def installs(self) -> str:
        """The torch the command installs, as its version names it: ``2.15.0+cu128`` from
        PyTorch's index (and a pinned local label); the plain version where the default index
        serves it without one: macOS's one wheel (``2.15.0``), PyPI's default CUDA build up to
        2.0 (``2.0.1 (cu117 on the default index)``)."""
        if not self.torch:
            return ""
        labelled = any(p.local for p in self.packages if p.name == "torch")
        if self.default_index and not labelled:
            macos = self.platform is not None and Platform.parse(self.platform).is_macos
            return self.torch if macos else f"{self.torch} ({self.variant} on the default index)"
        return f"{self.torch}+{self.variant}"

    @property
    def index_url(self) -> Optional[str]:
        if self.default_index or not self.variant:
            return None
        return (self.index_base or INDEX_URL) + self.variant

    def to_dict(self) -> Dict[str, Any]:
        out = asdict(self)
        out["wish"] = asdict(self.wish)
        out["index_url"] = self.index_url
        return out


_PY = re.compile(r"^\d+\.\d+$")


def parse_torch_wish(text: str) -> Tuple[Optional[SpecifierSet], str]:
    """'latest' -> (None, ...), '2.5' -> ==2.5.*, '2.5.1' -> ==2.5.1, or a specifier."""
    text = text.strip()
    if text in ("", "latest"):
        return None, "the newest release"
    if re.fullmatch(r"\d+\.\d+", text):
        return SpecifierSet(f"=={text}.*"), f"torch {text}"
    if re.fullmatch(r"\d+\.\d+\.\d+", text):
        return SpecifierSet(f"=={text}"), f"torch {text}"
    try:
        return SpecifierSet(text), f"torch {text}"
    except InvalidSpecifier:
        raise WishError(
            f"--torch {text!r}: use latest, 2.5, 2.5.1 or a specifier like '>=2.4,<2.7'"
        ) from None


def check_wish(wish: Wish, platforms: Sequence[str], tables: Optional[Tables] = None) -> None:
    """Raise WishError for a wish no plan can answer: a malformed value, or (with
    ``tables``) a variant that no release of any platform or manager ever had."""
    parse_torch_wish(wish.torch)
    if wish.variant != "auto" and Variant.maybe(wish.variant) is None:
        raise WishError(f"--variant {wish.variant!r}: use auto, cpu, cuXYZ (cu128), rocmX.Y or xpu")
    if wish.variant != "auto" and tables is not None:
        known = known_variants(tables)
        if Variant.parse(wish.variant) not in known:
            raise WishError(
                f"--variant {wish.variant}: no torch release in the tables was built for it; "
                f"known: {', '.join(str(v) for v in sorted(known))}"
            )
    if wish.python is not None and not _PY.match(wish.python):
        raise WishError(f"--python-version {wish.python!r}: give a Python version like 3.12")
    if wish.platform is not None and wish.platform not in platforms:
        raise WishError(f"--platform {wish.platform!r}: one of {', '.join(platforms)}")
    if wish.near is not None and _parse(wish.near) is None:
        raise WishError(f"near {wish.near!r} is not a version")


def installed_wish(facts: Facts, torch: str = "latest", **kw: Any) -> Wish:
    """The wish behind a report's install advice: keep the installed torch (version, build,
    companions) where it fits, else change as little as fits. One place, for the core,
    the checks and `envcheck install --torch installed`."""
    version = torch_version(facts)
    return Wish(torch=torch, near=str(version) if version else None, **kw)


def _cuda(variant: Variant) -> Version:
    """The CUDA version of a variant taken from a table's CUDA list."""
    if variant.cuda is None:
        raise ValueError(f"{variant} is not a CUDA variant")
    return variant.cuda


def _parse(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        return None


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


def resolve(
    facts: Facts,
    tables: Tables,
    wish: Wish,
    platform: Union[Platform, str, None] = None,
) -> InstallPlan:
    spec, wanted = parse_torch_wish(wish.torch)
    target = _platform(wish, facts, platform)
    python = wish.python or (
        ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None
    )
    plan = InstallPlan(ok=False, platform=str(target) if target else None, python=python, wish=wish)
    plan.interpreter, plan.externally_managed = _interpreter(facts, python, target)
    if plan.externally_managed:
        plan.notes.append(
            f"{plan.interpreter} is externally managed (PEP 668): pip refuses to install into "
            "it, so the command makes a virtual environment (.venv) first"
        )
    if target is None:
        plan.conflicts.append("PyTorch publishes no wheels for this platform")
        plan.blocker = NO_WHEEL
        plan.ways_out.append("use Linux (x86_64, aarch64), Windows x86_64 or macOS arm64")
        return plan
    pyv = parse_version(python) if python else None  # None for a mangled one: unknown

    matching = [r for r in reversed(tables.releases) if _versions(r, spec)]
    if not matching:
        plan.conflicts.append(f"no release in the tables matches {wanted}")
        plan.blocker = UNKNOWN
        plan.ways_out.append(
            f"releases known: {tables.releases[0].minor} to {tables.newest_release.minor}"
        )
        return plan
    usable = [
        r
        for r in matching
        if str(target) in r.platforms
        and _versions(r, spec, target)
        and (pyv is None or r.supports_python(pyv, str(target)))
    ]
    if not usable:
        _python_conflict(plan, matching, target, python, wanted, tables, spec)
        plan.blocker = NO_WHEEL
        return plan
    if _unpublished_variant(plan, tables, usable, target, pyv, wish, wanted):
        return plan  # asked for a build no matching release has: said before any driver
    near = _parse(wish.near)
    if near is not None:
        usable = _nearest_first(usable, near)

    gpu = has_nvidia_gpu(facts) and not target.is_macos
    hidden = _hidden_gpus(facts, target)
    if hidden and wish.variant == "auto":
        # Planned from what is visible, a CUDA image would get the CPU wheel: no plan until
        # its GPUs are there (SYS006 says how), or the build asked for, marked as unchecked.
        from ..containers import SHORT_FIX

        plan.conflicts.append(
            f"this container expects NVIDIA GPUs ({hidden}) but was started without them: "
            "which build fits depends on its GPUs and driver, which are not visible"
        )
        plan.ways_out.append(f"{SHORT_FIX}, then ask again")
        plan.ways_out.append(
            "name the CUDA build the image is for (--variant cuXYZ): planned without its GPUs"
        )
        plan.ways_out.append("use the CPU build (--variant cpu) if it is meant to run without GPUs")
        plan.blocker = UNKNOWN
        return plan
    if facts.system.jetson and (wish.variant == "auto" or Variant.parse(wish.variant).is_cuda):
        # Jetson's iGPU runs JetPack's CUDA; PyTorch's aarch64 wheels are SBSA builds.
        from ..checks.jetson import JETPACK_WHEELS

        plan.conflicts.append(
            f"NVIDIA Jetson ({facts.system.jetson}): PyTorch's aarch64 CUDA wheels are SBSA "
            "builds, not verified on Jetson; envcheck knows no install command for this board"
        )
        plan.ways_out.append(f"NVIDIA's torch wheels for your JetPack release: {JETPACK_WHEELS}")
        plan.ways_out.append("use the CPU build (--variant cpu)")
        plan.blocker = UNKNOWN
        return plan
    dropped = driver_drops(facts, tables) if gpu else []
    if dropped and (wish.variant == "auto" or Variant.parse(wish.variant).is_cuda):
        # The driver no longer runs a GPU here: no build can help until the driver changes.
        plan.conflicts.append(
            "; ".join(
                f"driver {facts.nvidia.driver_version} no longer supports {name} ({family}): "
                f"R{branch} is the last driver branch for it"
                for _, name, _, family, branch in dropped
            )
        )
        branch = min(b for *_, b in dropped)
        plan.ways_out.append(f"install an R{branch} driver, then ask again")
        plan.ways_out.append("use the CPU build (--variant cpu)")
        plan.blocker = DRIVER
        return plan
    predates = _driver_predates(facts, tables) if gpu else ""
    if predates and (wish.variant == "auto" or Variant.parse(wish.variant).is_cuda):
        # No release can help: say it once, with the driver that sees the GPU first.
        plan.conflicts.append(predates)
        need = driver_predates(facts, tables)[0][2]
        plan.ways_out.append(f"upgrade the NVIDIA driver to {need} or newer, then ask again")
        needed = driver_upgrade(facts, tables, usable[0], target)
        if needed:
            plan.ways_out.append(
                f"driver {needed[1]} or newer also runs {needed[0]} of torch {usable[0].newest}"
            )
        plan.ways_out.append("use the CPU build (--variant cpu)")
        plan.blocker = DRIVER
        return plan
    tried = plan.passed_over
    picks = []
    skipped_patches: List[str] = []
    for release in usable:
        version = _version_in(release, spec, near, target)
        channel = _conda_channel(tables, wish, release)
        if channel is not None:
            found, why_not, skipped = _conda_version(channel, release, spec, near, pyv)
            if found is None:
                tried.append((str(version), why_not))
                continue
            version = found
            skipped_patches = skipped
        variant, why = _pick_variant(facts, tables, release, version, wish, target, gpu)
        if variant is None:
            tried.append((str(version), why))
            continue
        # What the tables do not hold about this platform (its Python range, Windows CUDA
        # builds) counts like unknown kernels: a release known to fit is preferred.
        why = list(why) + [Unknown(u) for u in platform_unknowns(release, target, pyv, variant)]
        picks.append((release, version, variant, why))
        if not _unknown(why):
            break
    # A release known to fit comes before one the tables cannot judge; with none known
    # to fit, the first that may fit is planned, and what is not known is said.
    known = [p for p in picks if not _unknown(p[3])]
    for release, version, variant, why in known[:1] or picks[:1]:
        plan.ok = True
        plan.torch, plan.variant = str(version), str(variant)
        plan.index_base = release.pip_index.get(str(version))
        # A version served from its own index (1.8.2 LTS) is not on the default one.
        plan.default_index = plan.index_base is None and default_index(
            version, variant, target, tables
        )
        plan.reasons = [w for w in why if not isinstance(w, Unknown)]
        plan.unverified = [str(w) for w in why if isinstance(w, Unknown)]
        if hidden and variant.is_cuda:
            plan.unverified.append(
                f"{variant} against this container's GPUs and driver: it was started without "
                f"them ({hidden}), so the build is planned as asked, unchecked"
            )
        for _, other, _, reasons in picks:
            if other != version:
                unknown = next(str(w) for w in reasons if isinstance(w, Unknown))
                plan.notes.append(f"passed over torch {other}, not known to fit: {unknown}")
        plan.packages = [Package("torch", str(version))]
        _companions(plan, facts, tables, release, version, wish, variant)
        _conda_plan(plan, tables, release, version, variant, target, skipped_patches)
        _triton(plan, facts, release, variant)
        _local_labels(plan, facts, target)
        _ptx_notes(plan, facts, tables, release, variant)
        _changes(plan, facts, tables, release, version, variant)
        if tried:
            which = "nearer" if near is not None else "newer"
            n = len(tried) - 1
            verb, noun = ("does", "release") if n == 1 else ("do", "releases")
            more = f"; neither {verb} {n} more {which} {noun}" if n else ""
            plan.notes.append(
                f"{which} releases do not fit: torch {tried[0][0]}: {tried[0][1]}{more}"
            )
        return plan
    plan.conflicts.extend(f"torch {v}: {why}" for v, why in tried)
    plan.blocker = blocker_of(tried[0][1]) if tried else UNKNOWN
    if wish.manager == "conda" and tried and all(isinstance(w, Unknown) for _, w in tried):
        # Only what the tables do not know stands in the way: say what is known instead.
        plan.unverified.extend(str(why) for _, why in tried)
        releases = tables.conda.releases if tables.conda is not None else ()
        listed = [
            str(r.torch)
            for r in releases
            if str(target) in r.covers and any(r.torch in m.versions for m in matching)
        ]
        if listed:
            plan.ways_out.append(f"torch {', '.join(listed)}: PyTorch's pages give conda commands")
        plan.ways_out.append("install the pip wheels into the conda environment (--manager pip)")
        return plan
    newest = usable[0] if near is None else max(usable, key=lambda r: Version(r.minor))
    asked = Variant.parse(wish.variant) if wish.variant not in ("auto", "cpu") else None
    only = asked if asked is not None and asked.is_cuda else None
    # A ROCm or XPU build asked for: no NVIDIA driver makes it, so none is proposed.
    needed = driver_upgrade(facts, tables, newest, target, only) if asked is None or only else None
    have = parse_driver(facts.nvidia.driver_version)
    floor = parse_driver(needed[1]) if needed else None
    if _conda_channel(tables, wish, newest) is not None:
        needed = None  # the wheels' variants: not what the conda channel offers
    if needed and (have is None or floor is None or have < floor):  # only a real upgrade
        plan.ways_out.append(
            f"upgrade the NVIDIA driver to {needed[1]} or newer ({needed[0]} of torch {newest.newest})"
        )
        package, _ = forward_compat_way_out(facts, tables, _cuda(needed[0]))
        if package is not None:  # a data-center GPU on a branch NVIDIA lists for the package
            plan.ways_out.append(
                f"or keep the driver and install {package} (NVIDIA forward compatibility) "
                f"for {needed[0]} of torch {newest.newest}"
            )
    if gpu and needed is None and (wish.variant == "auto" or Variant.parse(wish.variant).is_cuda):
        with_kernels = _releases_with_kernels(facts, tables, target, pyv, exclude=usable)
        low = min(Version(r.minor) for r in usable)
        newer = [m for m in with_kernels if Version(m) > low]
        older = [m for m in with_kernels if Version(m) < low]
        gpus = ", ".join(f"{g} ({cc.sm})" for g, cc in _gpu_names(facts))
        if newer:
            plan.ways_out.append(
                f"torch {newer[0]} is the first newer release with kernels for {gpus} "
                f"(--torch {newer[0]})"
            )
        elif older:
            plan.ways_out.append(
                f"torch {older[-1]} is the newest older release with kernels for {gpus} "
                f"(--torch {older[-1]})"
            )
    if wish.variant not in ("auto", "cpu"):
        plan.ways_out.append("let envcheck choose the variant (--variant auto)")
    plan.ways_out.append("use the CPU build (--variant cpu)")
    if wish.manager == "conda":
        plan.ways_out.append("install the pip wheels into the conda environment (--manager pip)")
    return plan


def _unpublished_variant(
    plan: InstallPlan,
    tables: Tables,
    usable: Sequence[Release],
    target: Platform,
    python: Optional[Version],
    wish: Wish,
    wanted: str,
) -> bool:
    """When the variant asked for (``--variant cu126``) is published for none of the releases
    that match the wish here, say that first (``torch 2.15 has no cu126 build``): the GPUs
    and the driver do not matter to a build that does not exist. True when it said so.
    PyTorch's conda channel has its own variants, judged per release (_pick_variant)."""
    if wish.variant == "auto" or wish.manager == "conda":
        return False
    asked = Variant.parse(wish.variant)
    if any(asked in variants_of(r, target) for r in usable):
        return False
    published = sorted({v for r in usable for v in variants_of(r, target)})
    plan.conflicts.append(
        f"{wanted} has no {asked} build for {target} "
        f"(published: {', '.join(str(v) for v in published)})"
    )
    having = [
        r
        for r in tables.releases
        if str(target) in r.platforms
        and asked in variants_of(r, target)
        and (python is None or r.supports_python(python, str(target)))
    ]
    if having:
        newest = having[-1]
        plan.ways_out.append(
            f"torch {newest.minor} is the newest release with a {asked} build for {target} "
            f"(--torch {newest.minor})"
        )
    plan.ways_out.append("let envcheck choose the variant (--variant auto)")
    if not asked.is_cpu:
        plan.ways_out.append("use the CPU build (--variant cpu)")
    plan.blocker = NO_WHEEL
    return True


def _hidden_gpus(facts: Facts, target: Platform) -> Optional[str]:
    """Why this machine's NVIDIA GPUs are expected but not visible (a container started
    without them, containers.started_without_gpus), for a plan for this machine's platform;
    None when they are visible, not expected, or the plan is for another platform."""
    from ..containers import started_without_gpus

    if target != platform_of(facts) or has_nvidia_gpu(facts) or has_amd_gpu(facts):
        return None
    return started_without_gpus(facts)


def _interpreter(
    facts: Facts, python: Optional[str], target: Optional[Platform]
) -> Tuple[Optional[str], bool]:
    """(the interpreter the commands must name, whether it is externally managed), for a
    plan that installs into the described interpreter; (None, False) for one made for
    another Python or platform, whose interpreter is not here."""
    py = facts.python
    here = ".".join(py.version.split(".")[:2]) if py.version else None
    if not py.executable or python != here or target != platform_of(facts):
        return None, False
    named = py.executable if py.on_path is False or py.externally_managed else None
    return named, py.externally_managed


def _platform(wish: Wish, facts: Facts, given: Union[Platform, str, None]) -> Optional[Platform]:
    if wish.platform:
        return Platform.parse(wish.platform)
    if isinstance(given, Platform):
        return given
    if isinstance(given, str):
        return Platform.parse(given)
    return platform_of(facts)


def _versions(
    release: Release, spec: Optional[SpecifierSet], platform: Optional[Platform] = None
) -> List[Version]:
    """The release's patch versions that satisfy the wish, those with wheels for
    ``platform`` where given."""
    have = release.versions if platform is None else release.versions_on(str(platform))
    if spec is None:
        return sorted(have)
    return sorted(v for v in have if spec.contains(v, prereleases=True))


def _version_in(
    release: Release,
    spec: Optional[SpecifierSet],
    near: Optional[Version],
    platform: Optional[Platform] = None,
) -> Version:
    """The installed patch release when it is this release's (``2.6.0a0`` is 2.6.0), else
    the newest that satisfies the wish (and has wheels for ``platform``)."""
    versions = _versions(release, spec, platform)
    if near is not None:
        base = Version(near.base_version)
        if base in versions:
            return base
    return versions[-1]


def _nearest_first(releases: List[Release], near: Version) -> List[Release]:
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


def _python_conflict(plan, matching, platform, python, wanted, tables, spec=None) -> None:
    """Why no release that matches the wish has a wheel here: none for this platform (or
    none of the wished patch versions), or none for this Python, with the releases that
    have one. Ranges are the platform's own where the tables hold them."""
    key = str(platform)
    on_platform = [r for r in matching if key in r.platforms and _versions(r, spec, platform)]
    if not on_platform:
        plan.conflicts.append(f"{wanted} has no wheels for {platform}")
        last = next(
            (r for r in reversed(tables.releases) if key in r.platforms and r.versions_on(key)),
            None,
        )
        if last:
            newest = max(last.versions_on(key))
            plan.ways_out.append(f"torch {newest} is the newest with {platform} wheels")
        return

    def span(r: Release) -> str:
        low, high = r.python_range(key)
        return f"{low}-{high}"

    ranges = sorted({span(r) for r in on_platform})
    plan.conflicts.append(
        f"{wanted} has no wheels for Python {python} on {platform} "
        f"(it supports {', '.join(ranges)})"
    )
    newest = on_platform[0]
    plan.ways_out.append(
        f"use Python {span(newest)} for torch {max(newest.versions_on(key))} on {platform}"
    )
    pyv = parse_version(python) or Version("0")
    other = next(
        (
            r
            for r in reversed(tables.releases)
            if key in r.platforms and r.versions_on(key) and r.supports_python(pyv, key)
        ),
        None,
    )
    if other:
        plan.ways_out.append(
            f"or torch {max(other.versions_on(key))}, the newest for Python {python} on {platform}"
        )
    unverified = [r.minor for r in on_platform if not r.python_verified(key)]
    if unverified:
        plan.unverified.append(
            Unknown(
                f"the Python range of torch {', '.join(unverified)} wheels for {platform} "
                "is not known to the tables: the release's range was used"
            )
        )


class Unknown(str):
    """A reason that is a fact the tables do not hold: the plan is not verified on it."""


# Why no build fits, as a value (InstallPlan.blocker): the compatibility grid colours its
# cells by it and scripts can branch on it without reading the sentences.
NO_WHEEL = "no_wheel"  # not published for this platform, Python or variant
DRIVER = "driver"  # the NVIDIA driver is too old: for the build's CUDA, or for the GPU
KERNELS = "kernels"  # the build has no kernels for a GPU here
UNKNOWN = "unknown"  # the tables cannot say
BLOCKERS = (NO_WHEEL, DRIVER, KERNELS, UNKNOWN)


class Why(str):
    """A reason a build does not fit, carrying its blocker (one of BLOCKERS)."""

    blocker: str

    def __new__(cls, text: str, blocker: str) -> Why:
        self = super().__new__(cls, text)
        self.blocker = blocker
        return self

    def __getnewargs__(self) -> Tuple[str, str]:  # type: ignore[override]  # copy, deepcopy
        return (str(self), self.blocker)


def blocker_of(why: Any) -> str:
    """The blocker a reason carries; UNKNOWN for what the tables do not hold (and for a
    reason nobody classified: never read as a known cause)."""
    return why.blocker if isinstance(why, Why) else UNKNOWN


def _unknown(why: Any) -> bool:
    return isinstance(why, list) and any(isinstance(w, Unknown) for w in why)


def _cuda_names(release: Release, platform: Platform) -> Optional[Tuple[str, ...]]:
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
        known |= {Variant.parse(b.variant) for c in tables.conda.releases for b in c.builds}
    return known


def variants_of(release: Release, platform: Platform) -> List[Variant]:
    """The variants PyTorch published for a release on a platform. ROCm builds are for
    Linux x86_64 only; Windows on ARM64 and macOS have CPU builds only."""
    if platform.is_macos:
        return [Variant("cpu")]
    names = ["cpu", *list(_cuda_names(release, platform) or [])]
    if str(platform) == "linux-x86_64":
        names += list(release.rocm_variants or [])
    if _xpu(release, platform):
        names.append("xpu")
    return [Variant.parse(n) for n in names]


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
    if key == "windows-x86_64" and str(variant) == "xpu" and release.windows_xpu is None:
        out.append(f"an XPU build of torch {release.minor} for Windows: not known to the tables")
    return out


def _pick_variant(facts, tables, release, version, wish, platform, gpu):
    """(variant, reasons) or (None, why not). With conda (up to the channel's last release)
    the variants offered are the conda channel's for this version and platform."""
    offered = variants_of(release, platform)
    where = ""
    channel = _conda_channel(tables, wish, release)
    if channel is not None:
        record = channel.release(version)
        builds = record.builds_for(str(platform)) if record is not None else None
        if builds is None:
            return None, Unknown(
                f"not known whether the {channel.name} conda channel has it for {platform}: "
                "PyTorch's pages give no conda command for that platform"
            )
        if not builds:
            return None, Why(
                f"the {channel.name} conda channel has no torch {version} for {platform}", NO_WHEEL
            )
        offered = [Variant.parse(b.variant) for b in builds]
        where = f" on the {channel.name} conda channel"
    variant, why = _pick_offered(facts, tables, release, version, wish, platform, gpu, offered)
    if variant is not None and where and variant not in offered:
        published = ", ".join(map(str, offered))
        return None, Why(
            f"no {variant} build{where} for {platform} (published there: {published})", NO_WHEEL
        )
    if variant is None and where and isinstance(why, str) and why.startswith("no "):
        why = Why(
            why.replace(
                f" for {platform} (published:", f"{where} for {platform} (published there:"
            ),
            blocker_of(why),
        )
    return variant, why


def _pick_offered(facts, tables, release, version, wish, platform, gpu, offered):
    if wish.variant != "auto":
        wanted = Variant.parse(wish.variant)
        if wanted not in offered:
            published = ", ".join(map(str, offered))
            return None, Why(f"no {wanted} build for {platform} (published: {published})", NO_WHEEL)
        # A driver older than a GPU here was decided once, in resolve, before any release.
        if wanted.is_cuda and gpu:
            verdict = driver_verdict(
                tables,
                _cuda(wanted),
                facts.nvidia.driver_version,
                facts.system.os,
                facts.nvidia.cuda_driver_version,
            )
            if verdict.level == "too_old":
                return None, Why(f"{wanted}: {verdict.basis}", DRIVER)
            kernels = _kernels(facts, tables, release, version, wanted, platform)
            if isinstance(kernels, str):
                return None, Why(f"{wanted}: {kernels}", KERNELS)
            return wanted, [f"{wanted} as asked", *_driver_unknown(verdict), *kernels]
        if wanted.is_rocm:
            rocm = _rocm_kernels(facts, release, version, wanted)
            if isinstance(rocm, str):
                return None, Why(f"{wanted}: {rocm}", KERNELS)
            return wanted, [f"{wanted} as asked", *rocm]
        return wanted, [f"{wanted} as asked"]
    if platform.is_macos:
        mps = "with MPS on Apple silicon" if platform.arch == "arm64" else "CPU only"
        return Variant("cpu"), [f"the default macOS wheel ({mps})"]
    if not gpu and has_amd_gpu(facts):
        return _rocm_variant(facts, release, version, platform)
    if not gpu:
        return Variant("cpu"), ["no NVIDIA GPU here, so the CPU build"]
    prefer = torch_variant(facts) if wish.near else None
    cuda_names = [str(v) for v in offered if v.is_cuda]
    variant, reasons = best_cuda_variant(
        facts, tables, release, platform, prefer, version, cuda_names
    )
    if variant is None:
        kinds = {blocker_of(r) for r in reasons}
        return None, Why(
            "; ".join(reasons) or "no CUDA variant fits",
            DRIVER if kinds == {DRIVER} else KERNELS if KERNELS in kinds else NO_WHEEL,
        )
    unknown = _kernels(facts, tables, release, version, variant, platform)
    if unknown:  # no variant of this release is known to fit: this one may
        assert not isinstance(unknown, str)
        return variant, [
            f"{variant}: no build of torch {version} is known to have kernels for this GPU",
            *unknown,
        ] + [f"skipped {r}" for r in reasons]
    cuda = _cuda(variant)
    verdict = driver_verdict(
        tables,
        cuda,
        facts.nvidia.driver_version,
        facts.system.os,
        facts.nvidia.cuda_driver_version,
        torch=version,
        platform=str(platform),
    )
    how = {
        "full": f"driver {facts.nvidia.driver_version or ''} runs CUDA {cuda}".replace("  ", " "),
        "minor": f"driver {facts.nvidia.driver_version} runs CUDA {cuda.major}.x through minor-version compatibility",
        "unknown": "the driver version is unknown",
    }.get(verdict.level, verdict.basis)
    caps = gpu_capabilities(facts)
    gpus = ", ".join(sorted({f"{n} ({sm_name(c)})" for n, c in caps})) or "the GPUs"
    kept = " (the installed build)" if prefer is not None and variant == prefer else ""
    return variant, [
        f"{how}; {gpus} covered by {variant}{kept} -> torch {version}+{variant}",
        *_driver_unknown(verdict),
    ] + [f"skipped {r}" for r in reasons]


def _driver_unknown(verdict: DriverVerdict) -> List[Unknown]:
    """A driver the tables cannot judge against a build's CUDA: said, never read as a pass."""
    if verdict.level != "unknown":
        return []
    return [Unknown(f"whether the driver runs CUDA {verdict.cuda}: {verdict.basis}")]


def _driver_predates(facts: Facts, tables: Tables) -> str:
    """Why no CUDA build can run: the driver is older than a GPU here ("" when it is not)."""
    gaps = driver_predates(facts, tables)
    return "; ".join(
        f"driver {facts.nvidia.driver_version} is older than {name} ({sm_name(cc)}), "
        f"which needs {need} or newer"
        for name, cc, need in gaps
    )


def best_cuda_variant(
    facts: Facts,
    tables: Tables,
    release: Release,
    platform: Platform,
    prefer: Optional[Variant] = None,
    version: Optional[Version] = None,
    names: Optional[Sequence[str]] = None,
) -> Tuple[Optional[Variant], List[str]]:
    """The CUDA variant of ``release`` this driver runs with kernels for every GPU: ``prefer``
    (the installed one) when it fits, else the newest CUDA that does. (variant, why others not).

    The installed build itself is judged by what it really carries (the deep probe's
    ``torch.cuda.get_arch_list()``) where that is known."""
    installed = torch_version(facts)
    this_build = (
        installed is not None
        and version is not None
        and Version(installed.base_version) == version
        and prefer is not None
    )
    if names is None:  # the wheels' variants (per platform); conda passes its channel's
        names = _cuda_names(release, platform)
    variants = sorted((Variant.parse(n) for n in names or ()), reverse=True)
    if prefer is not None and prefer in variants:
        variants.remove(prefer)
        variants.insert(0, prefer)
    reasons: List[str] = []
    caps = gpu_capabilities(facts)
    may_fit: Optional[Variant] = None  # the first whose arch list the tables lack
    for variant in variants:
        verdict = driver_verdict(
            tables,
            _cuda(variant),
            facts.nvidia.driver_version,
            facts.system.os,
            facts.nvidia.cuda_driver_version,
        )
        if verdict.level == "too_old":
            reasons.append(Why(f"{variant}: {verdict.basis}", DRIVER))
            continue
        arches: Optional[Sequence[str]] = release.arch_list(
            str(variant), platform.machine, platform.is_windows
        )
        if this_build and variant == prefer:
            arches = build_arch_list(facts, tables)[0] or arches
        if arches is not None:
            missing = [
                f"{name} ({sm_name(cc)})"
                for name, cc in caps
                if arch_coverage(tables, arches, cc).level == "none"
            ]
            if missing:
                reasons.append(Why(f"{variant}: no kernels for {', '.join(missing)}", KERNELS))
                continue
        elif caps:
            may_fit = may_fit or variant
            continue
        return variant, reasons
    return may_fit, reasons


def _kernels(
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Optional[Version],
    variant: Variant,
    platform: Platform,
) -> Union[str, List[str]]:
    """Whether ``variant`` of ``release`` has kernels for every GPU here: a reason it
    has not (str), or the facts that are not known ([] when all are)."""
    caps = gpu_capabilities(facts)
    if not caps or not variant.is_cuda:
        return []
    arches: Optional[Sequence[str]] = release.arch_list(
        str(variant), platform.machine, platform.is_windows
    )
    installed = torch_version(facts)
    if (
        installed is not None
        and version is not None
        and Version(installed.base_version) == version
        and torch_variant(facts) == variant
    ):
        arches = build_arch_list(facts, tables)[0] or arches
    if arches is None:
        gpus = ", ".join(sorted({f"{n} ({sm_name(c)})" for n, c in caps}))
        return [
            Unknown(
                f"kernels for {gpus} in torch {version or release.minor}+{variant}: "
                "the tables do not hold this build's architecture list"
            )
        ]
    missing = sorted(
        {f"{n} ({sm_name(c)})" for n, c in caps if arch_coverage(tables, arches, c).level == "none"}
    )
    return f"no kernels for {', '.join(missing)}" if missing else []


def _releases_with_kernels(
    facts: Facts,
    tables: Tables,
    platform: Platform,
    python: Optional[Version],
    exclude: Sequence[Release] = (),
) -> List[str]:
    """The minors (oldest first) outside ``exclude`` with a CUDA build for this platform and
    Python whose arch list has kernels for every GPU here: the way out when the release asked
    for has none (an RTX 5090 with torch 2.5). A build without a list is not counted."""
    caps = gpu_capabilities(facts)
    out = []
    for release in tables.releases:
        if release in exclude or str(platform) not in release.platforms:
            continue
        if python is not None and not release.supports_python(python, str(platform)):
            continue
        for name in _cuda_names(release, platform) or ():
            arches = release.arch_list(name, platform.machine, platform.is_windows)
            if arches is not None and all(
                arch_coverage(tables, arches, cc).level != "none" for _, cc in caps
            ):
                out.append(release.minor)
                break
    return out


def _gpu_names(facts: Facts) -> List[Tuple[str, ComputeCapability]]:
    """(name, compute capability) of each distinct NVIDIA GPU model here."""
    seen: Dict[str, ComputeCapability] = {}
    for gpu in facts.nvidia.gpus:
        if gpu.compute_capability:
            seen.setdefault(gpu.name or f"GPU {gpu.index}", gpu.compute_capability)
    return list(seen.items())


def driver_upgrade(
    facts: Facts,
    tables: Tables,
    release: Release,
    platform: Platform,
    only: Optional[Variant] = None,
) -> Optional[Tuple[Variant, str]]:
    """(variant, minimum driver) of the variant of ``release`` with kernels for every GPU
    that needs the lowest driver: the smallest driver upgrade that makes a build of it run
    (not the newest build's floor). Between equal floors, the newer CUDA. ``only``: the
    variant the user asked for, the one build to judge."""
    caps = gpu_capabilities(facts)
    names = offered = _cuda_names(release, platform)
    if only is not None:  # only a build published there (none on macOS): no driver makes one
        names = (str(only),) if offered is None or str(only) in offered else ()
    best: Optional[Tuple[Variant, Version]] = None
    for variant in sorted((Variant.parse(n) for n in names or ()), reverse=True):
        arches = release.arch_list(str(variant), platform.machine, platform.is_windows)
        if arches is None:
            continue
        if any(arch_coverage(tables, arches, cc).level == "none" for _, cc in caps):
            continue
        floor = tables.minor_compat_floor(_cuda(variant), facts.system.os)
        if floor is not None and (best is None or floor < best[1]):
            best = (variant, floor)
    return (best[0], str(best[1])) if best else None


def _rocm_variant(facts, release, version, platform):
    """The newest ROCm build of ``release`` whose gfx list has every AMD GPU here (Linux
    x86_64 only); else the newest whose list the tables lack, with that said; else why not.
    The installed build itself is judged by what it carries (get_arch_list()) when known."""
    gfx = _amd_targets(facts)
    shown = ", ".join(gfx) or "an AMD GPU"
    if str(platform) != "linux-x86_64":
        return None, Why(
            f"ROCm builds exist for linux-x86_64 only ({shown} on {platform})", NO_WHEEL
        )
    if not release.rocm_variants:
        if release.rocm_variants is None:
            return None, Unknown(f"ROCm builds of {release.minor}: not known")
        return None, Why(f"ROCm builds of {release.minor}: none", NO_WHEEL)
    reasons: List[str] = []
    may_fit: Optional[Variant] = None
    for variant in sorted((Variant.parse(v) for v in release.rocm_variants), reverse=True):
        kernels = _rocm_kernels(facts, release, version, variant)
        if isinstance(kernels, str):
            reasons.append(Why(f"{variant}: {kernels}", KERNELS))
        elif kernels:
            may_fit = may_fit or variant
        else:
            return variant, [
                f"AMD GPU ({shown}) -> {variant}, whose gfx list has it: torch {version}+{variant}"
            ] + [f"skipped {r}" for r in reasons]
    if may_fit is None:
        return None, Why("; ".join(reasons), KERNELS)
    unknown = _rocm_kernels(facts, release, version, may_fit)
    assert isinstance(unknown, list)
    return may_fit, [
        f"AMD GPU ({shown}) -> {may_fit}, the newest ROCm build of torch {version} "
        "not known to lack it",
        *unknown,
    ] + [f"skipped {r}" for r in reasons]


def _amd_targets(facts: Facts) -> List[str]:
    return sorted({g.gfx for g in facts.amd.gpus if g.gfx})


def _rocm_kernels(
    facts: Facts, release: Release, version: Optional[Version], variant: Variant
) -> Union[str, List[str]]:
    """Whether ROCm ``variant`` of ``release`` has kernels for every AMD GPU here: a reason
    it has not (str), or the facts that are not known ([] when all are)."""
    if not variant.is_rocm or not has_amd_gpu(facts):
        return []
    gfx = _amd_targets(facts)
    targets: Optional[Sequence[str]] = release.gfx_list(str(variant))
    installed = torch_version(facts)
    if (
        installed is not None
        and version is not None
        and Version(installed.base_version) == version
        and torch_variant(facts) == variant
        and runtime_gfx_targets(facts) is not None
    ):
        targets = runtime_gfx_targets(facts)
    if not gfx:
        return [Unknown("the gfx target of the AMD GPU here: not read")]
    if targets is None:
        return [
            Unknown(
                f"kernels for {', '.join(gfx)} in torch {version or release.minor}+{variant}: "
                "the tables do not hold this build's gfx list"
            )
        ]
    missing = [g for g in gfx if g not in targets]
    return f"no kernels for {', '.join(missing)} (carries {' '.join(targets)})" if missing else []


def _companions(
    plan: InstallPlan,
    facts: Facts,
    tables: Tables,
    release: Release,
    version: Version,
    wish: Wish,
    variant: Optional[Variant] = None,
) -> None:
    names: Optional[Sequence[str]] = wish.companions
    if names is None:
        names = tuple(p.name for p in facts.torch.companions if p.name in COMPANIONS)
    for name in names:
        if name not in COMPANIONS:
            plan.notes.append(f"{name}: not a torch companion envcheck pins; install it separately")
            continue
        pin = release.companion(name, version, str(variant) if variant else None)
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


def _conda_channel(tables: Tables, wish: Wish, release: Release) -> Optional[CondaChannel]:
    """PyTorch's conda channel when the plan is for conda and it published this minor."""
    channel = tables.conda
    if wish.manager != "conda" or channel is None or not channel.publishes(release.minor):
        return None
    return channel


def _conda_version(
    channel: CondaChannel,
    release: Release,
    spec: Optional[SpecifierSet],
    near: Optional[Version],
    python: Optional[Version],
) -> Tuple[Optional[Version], str, List[str]]:
    """(version, "", newer versions left out) among those the conda view knows, or
    (None, why, []). A version PyTorch's pages give no conda command for is not known."""
    versions = _versions(release, spec)
    known = [v for v in versions if channel.release(v) is not None]
    if not known:
        return (
            None,
            Unknown(
                f"not known whether the {channel.name} conda channel has it: "
                "PyTorch's pages give no conda command for it"
            ),
            [],
        )
    pick = known[-1]
    if near is not None and Version(near.base_version) in known:
        pick = Version(near.base_version)
    record = channel.release(pick)
    assert record is not None
    limit = record.python_max
    if (
        limit is not None
        and python is not None
        and Version(f"{python.major}.{python.minor}") > limit
    ):
        return (
            None,
            Why(
                f"the conda build of torch {pick} supports Python {limit} and older only "
                "(PyTorch's page)",
                NO_WHEEL,
            ),
            [],
        )
    skipped = [str(v) for v in versions if v > pick and channel.release(v) is None]
    return pick, "", skipped


def _conda_plan(
    plan: InstallPlan,
    tables: Tables,
    release: Release,
    version: Version,
    variant: Variant,
    platform: Platform,
    skipped: Sequence[str],
) -> None:
    """The channels, build package and companions of the conda command, from the tables."""
    if plan.wish.manager != "conda":
        return
    channel = tables.conda
    if channel is None:
        plan.unverified.append("the conda command: the tables hold no view of PyTorch's channel")
        return
    if not channel.publishes(release.minor):
        plan.notes.append(
            f"the {channel.name} conda channel ended with torch {channel.last}; "
            f"conda-forge builds torch {release.minor} itself"
        )
        plan.unverified.append(
            f"a conda-forge build of pytorch {version} ({variant}): the tables do not list "
            "conda-forge's builds"
        )
        return
    record = channel.release(version)
    builds = record.builds_for(str(platform)) if record is not None else None
    build = next((b for b in builds or () if b.variant == str(variant)), None)
    if record is None or build is None:  # _pick_variant refused these
        raise AssertionError(f"no conda build of {version} {variant} for {platform}")
    plan.conda = CondaCommand(list(build.channels), build.package)
    for package in plan.packages:
        if package.name not in COMPANIONS:
            continue
        pinned = record.companion(package.name)
        if pinned and pinned != package.version:
            plan.notes.append(
                f"conda pairs {package.name} {pinned} with torch {version} "
                f"(the pip wheels: {package.version})"
            )
            package.version = pinned
    for other in skipped:
        plan.notes.append(
            f"torch {other} left out: PyTorch's pages give no conda command for it, so whether "
            f"the {channel.name} channel has it is not known"
        )
    plan.unverified.append(
        f"that the {channel.name} channel still serves these packages: PyTorch deprecated it "
        f"after {channel.last} (pytorch/pytorch#138506); the tables hold PyTorch's published "
        "commands, not the channel's current files"
    )


def _triton(plan: InstallPlan, facts: Facts, release: Release, variant: Variant) -> None:
    """An installed triton that is not the one this torch build pins comes along, pinned."""
    pinned = release.bundled.get(str(variant), {}).get("triton")
    have = next((p for p in facts.torch.companions if p.name in ("triton", "pytorch-triton")), None)
    exact = _parse(pinned.lstrip("=")) if pinned and pinned[0] in "=0123456789" else None
    if have is None or exact is None or _parse(have.version) == exact:
        return
    plan.packages.append(Package(have.name, str(exact)))


def _local_labels(plan: InstallPlan, facts: Facts, platform: Platform) -> None:
    """Pin ``+variant`` on each package whose installed copy is the same version in another
    build: pip and uv count ``torch==2.13.0`` as met by ``2.13.0+cpu`` and change nothing.
    PyTorch's own index publishes every such build under its label (macOS has one build).
    A plan for another Python or platform installs beside no installed copy."""
    if platform.is_macos or not plan.variant or not _for_installed(plan, facts):
        return
    installed = {p.name: p.version for p in facts.torch.companions}
    if facts.torch.installed and facts.torch.version:
        installed["torch"] = facts.torch.version
    variant = Variant.parse(plan.variant)
    for package in plan.packages:
        have = _parse(installed.get(package.name))
        if have is None or Version(have.public) != Version(package.version):
            continue  # another version (a pre-release, a nightly): pip replaces it anyway
        have_variant = (
            torch_variant(facts) if package.name == "torch" else builds.variant(str(have))
        )
        if package.name != "torch" and have.local is None:
            have_variant = torch_variant(facts)  # an unlabelled companion is torch's build
        if have_variant != variant:
            package.local = str(variant)
            plan.replaces_build = True
    if plan.replaces_build:
        plan.default_index = False  # only PyTorch's index has the labelled builds


def _ptx_notes(plan, facts, tables, release, variant) -> None:
    windows = bool(plan.platform) and Platform.parse(plan.platform).is_windows
    arches = release.arch_list(str(variant), facts.system.machine.lower(), windows)
    if not arches:
        return
    for name, cc in sorted(set(gpu_capabilities(facts))):
        if arch_coverage(tables, arches, cc).level == "ptx":
            plan.notes.append(f"{name} ({sm_name(cc)}) is covered only by PTX: slow first start")


def _for_installed(plan: InstallPlan, facts: Facts) -> bool:
    """Whether the plan is for the interpreter whose torch the facts describe: its Python
    version and platform. A plan for another (``--platform macos-arm64`` on Linux,
    ``--python 3.13``) has no installed torch to compare with."""
    here = ".".join(facts.python.version.split(".")[:2]) if facts.python.version else None
    target = platform_of(facts)
    return plan.python == here and target is not None and plan.platform == str(target)


def _changes(plan, facts, tables, release, version, variant) -> None:
    """What an upgrade (or downgrade) changes for this machine (read before you upgrade)."""
    current = torch_version(facts)
    if current is None or not _for_installed(plan, facts):
        return
    old_variant = torch_variant(facts)
    if Version(current.base_version) == version and old_variant == variant:
        if all(not p.local for p in plan.packages):
            plan.notes.append(f"torch {version} ({variant}) is already installed")
        return
    old = tables.release(current)
    plan.changes.append(f"torch {current} -> {plan.installs}")
    if old is None:
        return
    if release.python_min > old.python_min:
        plan.changes.append(f"Python floor raised: {old.python_min} -> {release.python_min}")
    platform = Platform.parse(plan.platform) if plan.platform else None
    if old_variant and platform and old_variant not in variants_of(release, platform):
        plan.changes.append(f"{old_variant} is no longer published; {variant} replaces it")
    machine = facts.system.machine.lower()
    windows = platform is not None and platform.is_windows
    for name, cc in sorted(set(gpu_capabilities(facts))):
        old_list = old.arch_list(str(old_variant or ""), machine, windows)
        new_list = release.arch_list(str(variant), machine, windows)
        if (
            old_list
            and new_list
            and arch_coverage(tables, old_list, cc).level != "none"
            and arch_coverage(tables, new_list, cc).level == "none"
        ):
            plan.changes.append(f"{name} ({sm_name(cc)}) loses its kernels")
    for p in facts.torch.companions:
        if p.name in COMPANIONS and not release.companion(p.name, version):
            plan.changes.append(f"{p.name} has no release for torch {version}")
    old_cuda = old_variant.cuda if old_variant else None
    new_cuda = variant.cuda
    if old_cuda and new_cuda and new_cuda.major > old_cuda.major:
        floor = tables.minor_compat_floor(new_cuda, facts.system.os)
        if floor:
            plan.changes.append(
                f"driver minimum raised: CUDA {new_cuda.major}.x needs {floor} or newer"
            )


def parse_python(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    try:
        v = Version(text)
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        raise WishError(f"--python-version {text!r}: give a Python version like 3.12") from None
    return f"{v.major}.{v.minor}"
