"""Fixes worked out for the reporter: the facts a message carries, asked of the tables.

A catalogue entry's fix is written for everyone who meets the message ("install a build
that carries the GPU's architecture", "use a newer CUDA toolkit"). Where the message (or the
rest of the text) gives the facts that decide — the GPU's compute capability and the torch
release, the two CUDA versions of a mismatch, the architecture nvcc refused — the tables
say which builds, releases or toolkits those are, and the fix names them. What the tables
do not hold is said, never filled in: the catalogue's general fix stands beside it.

"No wheel" errors are the resolver's (no_wheel.py): this is the one place that decides
which explainer a message gets.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from .._patterns import compile_on_use
from ..compat import INDEX_URL, gpu_capabilities, platform_of, torch_version
from ..install.cuda import preferred_cuda
from ..install.releases import cuda_names
from ..install.render import replace_cpu_build
from ..tables import Tables
from ..tables.model import Release
from ..values import ComputeCapability, Platform, Variant
from . import no_wheel
from .reading import Reading
from .scanning import scan, search

Said = Tuple[str, str]  # (cause, fix)
Explainer = Callable[[re.Match[str], Reading, Tables, Said], Said]

_LINUX = Platform.parse("linux-x86_64")


def explain_all(
    found: Sequence[Tuple[str, re.Match[str], Said]], text: str, reading: Reading, tables: Tables
) -> List[Said]:
    """The (cause, fix) of each recognised message (rule, match, said) for this reporter:
    ``said`` (the catalogue's, or its case's) unless the facts decide more. No explainer changes
    the reading, so the "no wheel" family's answer (the same for each of its messages, and a
    search of the whole text for what the installer was asked) is worked out once."""
    no_wheel_said: Optional[Said] = None
    asked = False  # the installer's ask, and no_wheel_said, worked out
    out = []
    for rule_id, match, said in found:
        if rule_id in no_wheel.EXPLAINS:
            if not asked:
                no_wheel_said, asked = no_wheel.explain(text, reading, tables), True
            out.append(no_wheel_said or said)
            continue
        explainer = EXPLAINERS.get(rule_id)
        out.append(explainer(match, reading, tables, said) if explainer else said)
    return out


# --------------------------------------------------------------------------- the platform


def _platform(reading: Reading) -> Tuple[Platform, str]:
    """The reporter's platform where the text gives it, else Linux x86_64 — named in the
    fix ("on Linux x86_64") so that a Windows or ARM reader knows it was not theirs."""
    found = platform_of(reading.facts)
    return (found, "") if found is not None else (_LINUX, " on Linux x86_64")


def _variant_list(variants: List[Variant]) -> str:
    names = [str(v) for v in variants]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --------------------------------------------------------------------------- architectures


def _carrying(
    release: Release,
    platform: Platform,
    reading: Reading,
    tables: Tables,
    cc: ComputeCapability,
    fitted: bool = True,
) -> Optional[List[Variant]]:
    """The CUDA builds of ``release`` with kernels (SASS or PTX) for ``cc`` that the
    reporter can use: for their Python and driver where the text gives them. None when the
    tables hold no architecture list for one of its builds (then they cannot say).
    ``fitted=False``: every build, whoever runs it."""
    from ..compat import CoverageLevel, arch_coverage
    from ..driver_support import DriverLevel, machine_driver_verdict

    f = reading.facts
    python = _version(f.python.version) if fitted else None
    if python is not None and not release.supports_python(python, str(platform)):
        return []
    out = []
    for variant in cuda_names(release, platform) or ():
        arches = release.arch_list(variant, platform.machine, platform.is_windows)
        if arches is None:
            return None
        if arch_coverage(tables, arches, cc).level is CoverageLevel.NONE or variant.cuda is None:
            continue
        if fitted and _driver(reading):
            verdict = machine_driver_verdict(f, tables, variant.cuda)
            if verdict.level is DriverLevel.TOO_OLD:
                continue
        out.append(variant)
    return out


# the text shows an extension being built here: its kernels are for the architectures the
# build was told (TORCH_CUDA_ARCH_LIST) or saw, not torch's
_BUILT = compile_on_use(
    r"TORCH_CUDA_ARCH_LIST|setup\.py\s(?:install|build|develop)|BuildExtension|nvcc fatal"
    r"|building '[\w.]{1,80}' extension|\bbuilt (?:it )?with\b",
    re.IGNORECASE,
)


def _builds_for_gpu(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """Which builds carry kernels for the GPU (of the reporter's torch release when the text
    names it, else the first and the last releases that do); where the text shows an
    extension built here, the architecture to build it for."""
    cause, fix = _torch_builds_for_gpu(reading, tables, said)
    if not search(_BUILT, match.string):
        return cause, fix
    caps = gpu_capabilities(reading.facts)
    arch = f"TORCH_CUDA_ARCH_LIST={caps[0][1]}" if caps else "TORCH_CUDA_ARCH_LIST set to it"
    return cause, (
        f"{fix} If the kernel that failed is an extension's built here (the text shows a build), "
        f"rebuild it for the GPU's architecture: {arch} (its build/ folder deleted first)."
    )


def _torch_builds_for_gpu(reading: Reading, tables: Tables, said: Said) -> Said:
    caps = gpu_capabilities(reading.facts)
    if not caps:
        return said
    name, cc = caps[0]
    gpu = f"{name} ({cc.sm})" if cc.sm not in name else name
    platform, where = _platform(reading)
    version = torch_version(reading.facts)
    release = tables.release(version) if version is not None else None
    builds = _carrying(release, platform, reading, tables, cc) if release is not None else None
    if release is not None and builds:
        # the build the plan would choose among them (the driver's own CUDA, where known)
        pick = preferred_cuda(reading.facts, tables, builds[::-1], None).variant or builds[-1]
        return said[0], (
            f"torch {release.minor}'s {_variant_list(builds)} "
            f"build{'s carry' if len(builds) > 1 else ' carries'} kernels for {gpu}{where}: "
            f"install torch {release.newest} from {INDEX_URL}{pick} "
            "(its companions from the same index)."
        )
    span = _releases_carrying(reading, tables, platform, cc)
    if not span:
        oldest = min(tables.releases, key=lambda r: r.newest)
        return said[0], (
            f"No torch release the tables hold (torch {oldest.minor} and later) has a build "
            f"with kernels for {gpu}{where}{_for_whom(reading)}: build torch from source for "
            f"{cc.sm} (TORCH_CUDA_ARCH_LIST={cc}), or run on the CPU."
        )
    (first, first_builds), (last, last_builds) = span[0], span[-1]
    newest = tables.newest_release
    gone = not _carrying(newest, platform, reading, tables, cc, fitted=False)
    whom = _for_whom(reading)
    head = ""
    if release is not None and builds is not None:
        head = f"No torch {release.minor} build carries kernels for {gpu}{where}{whom}. "
    elif version is not None:
        head = f"The tables do not hold the architectures of torch {version}'s builds. "
    if gone:  # the GPU is too old for the newest release
        return said[0], (
            f"{head}The last torch release with kernels for {gpu}{where}{whom} is torch {last.minor} "
            f"({_variant_list(last_builds)}): install torch {last.newest} from "
            f"{INDEX_URL}{last_builds[-1]}, or run on the CPU."
        )
    return said[0], (
        f"{head}Builds with kernels for {gpu}{where}{whom}: from torch {first.minor} "
        f"({_variant_list(first_builds)}) to torch {last.minor} ({_variant_list(last_builds)}); "
        f"install one (e.g. torch {last.newest} from {INDEX_URL}{last_builds[-1]}) "
        "with its companions from the same index."
    )


def _driver(reading: Reading) -> Optional[str]:
    f = reading.facts.nvidia
    return f.driver_version or (f"CUDA {f.cuda_driver_version}" if f.cuda_driver_version else None)


def _for_whom(reading: Reading) -> str:
    """ " for Python 3.8 and driver 515": the reporter's facts that chose the builds."""
    python, driver = reading.facts.python.version, _driver(reading)
    said = ([f"Python {python}"] if python else []) + ([f"driver {driver}"] if driver else [])
    return f" for {' and '.join(said)}" if said else ""


def _releases_carrying(
    reading: Reading, tables: Tables, platform: Platform, cc: ComputeCapability
) -> List[Tuple[Release, List[Variant]]]:
    """(release, its builds with kernels for ``cc`` the reporter can use), oldest first, of
    the releases whose architecture lists the tables hold."""
    out = []
    for release in sorted(tables.releases, key=lambda r: r.newest):
        builds = _carrying(release, platform, reading, tables, cc)
        if builds:
            out.append((release, builds))
    return out


# --------------------------------------------------------------------------- toolkits


def _version(raw: Optional[str]) -> Optional[Version]:
    try:
        return Version(raw) if raw else None
    except InvalidVersion:
        return None


def _builds_for_toolkit(
    tables: Tables, platform: Platform, cuda: Version
) -> Optional[Tuple[Variant, List[Release]]]:
    """The CUDA build nearest to toolkit ``cuda`` of its major (an extension builds against
    a torch of the same CUDA major: torch checks the major only), and the releases that
    publish it; None when no release does."""
    found: Dict[Variant, List[Release]] = {}
    for release in sorted(tables.releases, key=lambda r: r.newest):
        for variant in cuda_names(release, platform) or ():
            if variant.cuda is not None and variant.cuda.major == cuda.major:
                found.setdefault(variant, []).append(release)
    if not found:
        return None

    def distance(v: Variant) -> Tuple[int, int]:
        minor = v.cuda.minor if v.cuda is not None else 0
        return (0 if minor <= cuda.minor else 1, abs(cuda.minor - minor))

    best = min(found, key=distance)
    return best, found[best]


def _toolkit_mismatch(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """nvcc's CUDA is not torch's: the two ways out, with the build that fits the toolkit."""
    groups = match.groupdict()
    nvcc = _version(groups.get("nvcc")) or _version(reading.facts.toolkit.nvcc_version)
    torch_cuda = _version(groups.get("torch_cuda")) or _version(reading.facts.torch.cuda)
    if nvcc is None:
        return said
    platform, where = _platform(reading)
    ways = []
    if torch_cuda is not None:
        ways.append(
            f"install the CUDA {torch_cuda.major}.{torch_cuda.minor} toolkit (torch's) and point "
            "CUDA_HOME at it"
        )
    builds = _builds_for_toolkit(tables, platform, nvcc)
    if builds is not None:
        variant, releases = builds
        span = (
            releases[0].minor if len(releases) == 1 else f"{releases[0].minor}-{releases[-1].minor}"
        )
        ways.append(
            f"install a torch built for the CUDA {nvcc.major}.{nvcc.minor} toolkit here: "
            f"torch {span} publish {variant} builds{where} (torch {releases[-1].newest} from "
            f"{INDEX_URL}{variant}), with companions and extensions from the same index"
        )
    else:
        ways.append(f"no torch release in the tables has a CUDA {nvcc.major}.x build{where}")
    return said[0], "Either " + "; or ".join(ways) + "."


_REFUSED = compile_on_use(r"(?:compute|sm)_(\d{2,3})a?")


def _toolkit_for_arch(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """The architecture nvcc refused, and the toolkits that compile for it: a toolkit older
    than its family, or one past the family's last CUDA major (Kepler after 11.x)."""
    found = _REFUSED.search(match.group(0))
    cc = ComputeCapability.from_number(found.group(1)) if found else None
    family = tables.family(cc) if cc is not None else None
    first = family.first_cuda_of(cc) if family is not None and cc is not None else None
    if cc is None or family is None or first is None:
        return said
    last = family.last_cuda_major
    span = f"CUDA {first} or newer" if last is None else f"CUDA {first} to {last}.x"
    nvcc = _version(reading.facts.toolkit.nvcc_version)
    if nvcc is None:
        why = "the toolkit that refused it is outside that (its version is not in the text)"
    elif nvcc < first:
        why = f"nvcc here is {nvcc}, older"
    elif last is not None and nvcc.major > last:
        why = f"nvcc here is {nvcc}, past its last CUDA major"
        cause = f"CUDA {last + 1} dropped {family.name} ({cc.sm}), so this nvcc refuses it."
        said = (cause, said[1])
    else:
        why = f"nvcc here is {nvcc}"
    return said[0], (
        f"{cc.sm} ({family.name}) compiles with {span}; {why}. Build with a toolkit in that "
        f"range (of torch's CUDA major, CUDA_HOME pointing at it), or leave {cc.sm} out of "
        "TORCH_CUDA_ARCH_LIST."
    )


# --------------------------------------------------------------------------- wheels


def _wheel_os(platform_tag: str) -> Tuple[Optional[str], Optional[str]]:
    """(OS, machine) of a wheel's platform tag: win_amd64 -> (Windows, x86_64); any -> Nones."""
    tag = platform_tag.lower()
    os_name = next((o for w, o in _TAG_OS if tag.startswith(w)), None)
    machine = next((m for w, m in _TAG_ARCH if tag.endswith(w)), None)
    return os_name, machine


_TAG_OS: Tuple[Tuple[str, str], ...] = (
    ("win", "Windows"),
    ("manylinux", "Linux"),
    ("musllinux", "Linux"),
    ("linux", "Linux"),
    ("macosx", "Darwin"),
)
_TAG_ARCH: Tuple[Tuple[str, str], ...] = (
    ("amd64", "x86_64"),
    ("x86_64", "x86_64"),
    ("aarch64", "aarch64"),
    ("arm64", "arm64"),
    ("win32", "x86"),
    ("i686", "x86"),
    ("universal2", "universal2"),
)


def _wheel_refused(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """pip refused a wheel: its tags against the Python and platform the text gives."""
    from urllib.parse import unquote

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    raw = unquote(match.groupdict().get("wheel") or "")
    try:
        _, _, _, tags = parse_wheel_filename(raw)
    except (InvalidWheelFilename, InvalidVersion):
        return said
    cps = sorted({t.interpreter for t in tags if re.fullmatch(r"cp3\d{1,2}", t.interpreter)})
    wanted = f"3.{cps[0][3:]}" if len(cps) == 1 else None
    plats = sorted({t.platform for t in tags})
    f = reading.facts
    here = ".".join(f.python.version.split(".")[:2]) if f.python.version else None
    if wanted and here and wanted != here:
        return said[0], (
            f"This wheel is for Python {wanted} ({cps[0]}) and the Python here is {here}: get "
            f"the cp{here.replace('.', '')} wheel of the same release, or run it with Python "
            f"{wanted} (or let pip choose from the index)."
        )
    wheel_os, wheel_machine = _wheel_os(plats[0]) if len(plats) == 1 else (None, None)
    for mine, theirs, what in (
        (f.system.os, wheel_os, "OS"),
        (f.system.machine, wheel_machine, "architecture"),
    ):
        if mine and theirs and theirs != "universal2" and _same_arch(mine) != _same_arch(theirs):
            return said[0], (
                f"This wheel is for {plats[0]} and this machine's {what} is {mine}: get the wheel "
                "built for this platform, or let pip choose from the index."
            )
    if wanted is None:
        return said
    fits = "its platform fits this machine; " if wheel_os and wheel_os == f.system.os else ""
    return said[0], (
        f"This wheel is for Python {wanted} ({cps[0]}) on {', '.join(plats)}: {fits}install it "
        f"with a Python {wanted} (the interpreter that refused it is another: its version is "
        "not in the text), or get the wheel built for that interpreter."
    )


def _same_arch(machine: str) -> str:
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine)


# --------------------------------------------------------------------------- companions

_REQUESTED = compile_on_use(
    r"(?:user requested|requirement) torch==(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)"
)
_DEPENDS = compile_on_use(
    r"\b(torchvision|torchaudio) (\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)(?:\+\w{1,12})? depends on "
    r"torch==(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)"
)


def _companion_pins(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """pip cannot pin torch and a companion together: the companion each torch pairs with."""
    text = match.string
    asked = search(_REQUESTED, text)
    torch = _version(asked.group(1)) if asked else torch_version(reading.facts)
    depends = list(dict.fromkeys(m.groups() for m in scan(_DEPENDS, text)))[:4]
    if torch is None or not depends:
        return said
    release = tables.release(torch)
    if release is None:
        return said
    names = list(dict.fromkeys(name for name, _, _ in depends))
    pairs = [(n, release.companion(n, torch)) for n in names]
    known = [(n, v) for n, v in pairs if v]
    if not known:
        return said
    ours = " and ".join(f"{n}=={v}" for n, v in known)
    theirs = "; ".join(f"{n} {v} is for torch {t}" for n, v, t in depends)
    other = " or ".join(f"torch=={t} with {n}=={v}" for n, v, t in depends if _version(t) != torch)
    return said[0], (
        f"torch {torch} pairs with {ours}; {theirs}. Pin one matching set: torch=={torch} with "
        f"{ours}" + (f", or {other}" if other else "") + ", all from the same index."
    )


# --------------------------------------------------------------------------- a CPU build


def _cpu_build(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """A CPU-only torch: the commands that replace it, with the CUDA build the driver runs
    where the text gives the driver (pip keeps an installed version unless it is removed)."""
    variant, pin, why = _variant_for_driver(reading, tables)
    name = str(variant) if variant is not None else "cuXYZ"
    return said[0], f"{said[1]} Replace it: {replace_cpu_build(pin, name)} ({why})."


def _variant_for_driver(reading: Reading, tables: Tables) -> Tuple[Optional[Variant], str, str]:
    """The newest CUDA build of the newest release (for the reporter's Python) that the
    driver runs with kernels for the GPUs, the pin it needs (empty for the newest release, whose
    build pip takes unpinned) and why; no variant when the text lacks the driver."""
    from ..install.cuda import choose_cuda

    driver = _driver(reading)
    if driver is None:
        return None, "", "XYZ: a CUDA your driver runs; the text does not give the driver"
    platform, where = _platform(reading)
    python = _version(reading.facts.python.version)
    releases = [
        r
        for r in tables.releases
        if str(platform) in r.platforms
        and (python is None or r.supports_python(python, str(platform)))
    ]
    if not releases:
        return None, "", f"no release in the tables has wheels for this Python{where}"
    newest = max(releases, key=lambda r: r.newest)
    for release in sorted(releases, key=lambda r: r.newest, reverse=True):
        variant = choose_cuda(reading.facts, tables, release, platform).variant
        if variant is None:
            continue
        why = f"torch {release.minor}'s newest CUDA build that driver {driver} runs{where}"
        if release is newest:
            return variant, "", why
        why += f"; torch {newest.minor}'s builds need a newer driver"
        return variant, f"=={release.minor}.*", why
    return None, "", f"no CUDA build of torch in the tables{where} runs on driver {driver}"


# --------------------------------------------------------------------------- a replaced torch


def _replaced(match: re.Match[str], reading: Reading, tables: Tables, said: Said) -> Said:
    """pip's log names the torch it took away: the command that puts that build back."""
    replaced = match.groupdict().get("replaced")
    if not replaced:
        return said
    version, _, label = replaced.partition("+")
    variant = Variant.from_label(label) if label else None
    if variant is None or not variant.is_cuda:  # PyPI's build, or one the label does not name
        back = f"pip install torch=={version} puts PyPI's build of it back"
        return said[0], f"{said[1]} The torch taken away was {replaced} ({back})."
    back = f"pip install torch=={replaced} --index-url {INDEX_URL}{variant}"
    return said[0], f"{said[1]} The torch taken away was {replaced}: {back}."


EXPLAINERS: Dict[str, Explainer] = {
    "no-kernel-image": _builds_for_gpu,
    "capability-not-compatible": _builds_for_gpu,
    "gpu-too-old-for-torch": _builds_for_gpu,
    "min-capability": _builds_for_gpu,
    "cuda-version-mismatch": _toolkit_mismatch,
    "nvcc-unsupported-arch": _toolkit_for_arch,
    "wheel-not-supported": _wheel_refused,
    "pip-companion-pins-conflict": _companion_pins,
    "not-compiled-with-cuda": _cpu_build,
    "install-replaced-torch": _replaced,
}
