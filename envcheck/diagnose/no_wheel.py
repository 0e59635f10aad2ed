""" "No matching distribution", explained by the one resolver instead of guessed.

pip's, uv's and Poetry's "no wheel" errors have five usual causes (a Python too new for the
release, a 32-bit Python, an Intel Mac, a ``+cuXYZ`` version asked of an index that lacks
it, a version and variant pair never built). The text usually says which: the version and
variant asked for, the interpreter's platform tag or Python, the versions the index had.
With those, the resolver (install.resolve, the same that plans every install) says whether
that torch has a wheel for that platform, Python and variant, and why not; the reason that
holds for every machine the text allows is named. The error itself says this machine has
no wheel, so machines where one exists are left out (unless a ``+cuXYZ`` version was asked:
that exists only on PyTorch's index); a release the index listed rules out the machines
without it, while a list that merely ends early says nothing (the report may be older than
the releases after it). When the machines left disagree, the reasons are listed with the
fact that would decide between them.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from .._patterns import compile_on_use
from .._record import record
from ..compat import INDEX_URL
from ..facts import Facts
from ..install import Blocker, NoPlan, Wish, resolve
from ..tables import Tables
from ..tables.model import PLATFORMS
from ..values import Platform, Variant
from .reading import Reading
from .scanning import search

# the catalogue's "no wheel" messages that this explains
EXPLAINS = frozenset(
    {
        "pip-no-torch-version",
        "pip-no-matching-distribution",
        "uv-no-matching-platform",
        "uv-platform-hint",
        "uv-no-wheel-current-platform",
        "torch-placeholder-sdist",
        "poetry-no-installation-candidates",
    }
)
_NAMED = {
    "macos-x86_64": "macos-x86_64 (an Intel Mac, or an x86_64 Python under Rosetta)",
    "windows-arm64": "windows-arm64 (Windows on ARM)",
}
PYTHONS = tuple(f"3.{n}" for n in range(8, 15))

_ASKED = compile_on_use(
    r"(?:(?:requirement|for|Because|candidates for|require)\s|没有\s?|沒有\s?|找不到\s?)"
    r"`?torch(?:==|\s\(|\s\(v|==v)"
    r"(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)(?:\+(\w{2,12}))?"
)
_UV_TAG = compile_on_use(
    r"You're on \w{1,20} \(`([\w.]{1,60})`\)|matching platform tag \(e\.g\., `([\w.]{1,60})`\)"
)
_ABI_TAG = compile_on_use(r"matching Python ABI tag \(e\.g\., `cp3(\d{1,2})`\)")
_CURRENT_PY = compile_on_use(r"current Python version \((3\.\d{1,2})(?:\.\d{1,2})?\)")


@record(frozen=True)
class Ask:
    """What the installer was asked, and of which machine, as far as the text says."""

    version: Optional[str]
    variant: Optional[Variant]
    pythons: Tuple[str, ...]  # one when the text says it
    platforms: Tuple[str, ...]  # one when the text says it
    listed: Tuple[str, ...]  # the versions the index offered ("from versions: ...")


def asked(text: str, reading: Reading) -> Ask:
    """The ask, from the installer's words and the facts the readers took."""
    f = reading.facts
    match = search(_ASKED, text)
    version = match.group(1) if match else None
    variant = Variant.maybe(match.group(2)) if match and match.group(2) else None
    python = _python(text, f)
    platform = _platform(text, f)
    return Ask(
        version=version,
        variant=variant,
        pythons=(python,) if python else PYTHONS,
        platforms=(platform,) if platform else _of_family(f),
        listed=tuple(reading.extra.get("index_versions", ())),
    )


def _python(text: str, f: Facts) -> Optional[str]:
    abi = _ABI_TAG.search(text) or _CURRENT_PY.search(text)
    if abi:
        return abi.group(1) if abi.group(1).startswith("3.") else f"3.{abi.group(1)}"
    if f.python.version:
        return ".".join(f.python.version.split(".")[:2])
    return None


def _platform(text: str, f: Facts) -> Optional[str]:
    """The interpreter's platform: uv's tag first (an x86_64 Python on an Apple-silicon Mac
    is an Intel Mac to pip), then the facts."""
    tag = _UV_TAG.search(text)
    if tag:
        raw = tag.group(1) or tag.group(2)
        for word, name in (("macosx", "macos"), ("win", "windows"), ("linux", "linux")):
            if raw.startswith(word):
                arch = "arm64" if "arm64" in raw and name != "linux" else "x86_64"
                arch = "aarch64" if name == "linux" and "aarch64" in raw else arch
                return f"{name}-{arch}"
    if f.system.os and f.system.machine:
        found = Platform.of(f.system.os, f.system.machine)
        return str(found) if found else None
    return None


def _of_family(f: Facts) -> Tuple[str, ...]:
    """The platforms of the OS the text names (its architecture unknown), else all."""
    family = {"Linux": "linux-", "Windows": "windows-", "Darwin": "macos-"}.get(f.system.os or "")
    return tuple(p for p in PLATFORMS if p.startswith(family)) if family else PLATFORMS


def explain(text: str, reading: Reading, tables: Tables) -> Optional[Tuple[str, str]]:
    """(cause, fix) for a "no wheel" error, or None when the text gives nothing to ask."""
    ask = asked(text, reading)
    knows = len(ask.pythons) == 1 or len(ask.platforms) < len(PLATFORMS) or ask.listed
    if not knows or (ask.version is None and not ask.listed):
        return None  # the catalogue's candidates stand, with the facts that decide
    groups: Dict[str, List[Tuple[str, str]]] = {}
    for platform, python, why in _verdicts(ask, tables):
        groups.setdefault(why.replace(platform, "{platform}"), []).append((platform, python))
    if "" in groups and len(groups) > 1 and (ask.variant is None or ask.variant.is_cpu):
        # the error says this machine has no wheel: where one exists, it is not this machine
        # (a +cuXYZ version is another matter: it exists only on PyTorch's index)
        del groups[""]
    if not groups:
        return None
    if len(groups) == 1:
        why, machines = next(iter(groups.items()))
        return _decided(ask, why, machines, tables) if why else _on_index(ask)
    return _undecided(ask, groups) if len(groups) <= 3 else None


def _on_index(ask: Ask) -> Optional[Tuple[str, str]]:
    """The wheel exists for every machine the text allows: a +cuXYZ version asked of an
    index that does not carry it."""
    if ask.variant is None or ask.variant.is_cpu:
        return None
    return (
        f"torch {ask.version}+{ask.variant} exists for this machine, but only on PyTorch's "
        f"index: the default index has no +{ask.variant} versions.",
        f"Install from PyTorch's index: --index-url {INDEX_URL}{ask.variant}.",
    )


def _verdicts(ask: Ask, tables: Tables) -> List[Tuple[str, str, str]]:
    """(platform, python, why not or "") for every machine the text allows; with a versions
    list, only the machines that have a wheel of every listed release."""
    out = []
    for platform in ask.platforms:
        for python in ask.pythons:
            if ask.listed and not _lists_alike(ask.listed, platform, python, tables):
                continue
            out.append((platform, python, _why_not(ask, platform, python, tables)))
    return out


def _why_not(ask: Ask, platform: str, python: str, tables: Tables) -> str:
    wish = Wish(
        torch=ask.version or "latest",
        variant=str(ask.variant) if ask.variant else "auto",
        python=python,
        platform=platform,
    )
    plan = resolve(Facts(source="text"), tables, wish)
    if isinstance(plan, NoPlan) and plan.blocker is Blocker.NO_WHEEL:
        return plan.conflicts[0] if plan.conflicts else "no wheel"
    return ""


def _lists_alike(listed: Sequence[str], platform: str, python: str, tables: Tables) -> bool:
    """Whether this platform and Python have a wheel of every release the index listed (pip
    lists only what fits the interpreter, so a listed release rules out the machines without
    it). A list that merely ends early says nothing: the report may be older than the
    releases after it. Releases older than the tables are not compared."""
    minors = set()
    for v in listed:
        try:
            minors.add(Version(v).release[:2])
        except InvalidVersion:
            continue
    pyv = Version(python)
    oldest = Version(tables.releases[0].minor).release[:2]
    having = {
        Version(r.minor).release[:2]
        for r in tables.releases
        if platform in r.platforms and r.versions_on(platform) and r.supports_python(pyv, platform)
    }
    return {m for m in minors if m >= oldest} <= having


def _decided(
    ask: Ask, why: str, machines: Sequence[Tuple[str, str]], tables: Tables
) -> Tuple[str, str]:
    platforms = sorted({p for p, _ in machines})
    pythons = sorted({py for _, py in machines}, key=Version)
    where = (
        " and ".join(_NAMED.get(p, p) for p in platforms)
        if len(platforms) <= 3
        else "any platform the text allows"
    )
    reason = why.replace("{platform}", " and ".join(platforms) if len(platforms) <= 3 else where)
    python = f", Python {pythons[0]}" if len(pythons) == 1 else ""
    said = f"The text decides it: {reason} (the Python that ran the installer: {where}{python})."
    if ask.variant is not None and f"no {ask.variant} build" in why:
        return said, (
            f"Install torch {ask.version} without the +{ask.variant} label (pip install "
            f"torch=={ask.version}): {where} has only the builds published for it (the "
            "default index)."
        )
    return said, _nearest(ask, platforms, pythons, tables, python_is_why="Python" in why)


def _nearest(
    ask: Ask,
    machines: Sequence[str],
    pythons: Sequence[str],
    tables: Tables,
    python_is_why: bool = True,
) -> str:
    """The nearest torch that does have a wheel for that machine, or what to change."""
    if len(machines) == 1 and len(pythons) == 1:
        platform, python = machines[0], pythons[0]
        pyv = Version(python)
        having = [
            r
            for r in tables.releases
            if platform in r.platforms and r.supports_python(pyv, platform)
        ]
        if having:
            newest = having[-1]
            other = (
                f"or use a Python that torch {ask.version or 'release'} supports"
                if python_is_why
                else f"torch {ask.version} needs another platform (on Apple silicon, an arm64 Python)"
            )
            return (
                f"torch {max(newest.versions_on(platform))} is the newest with a wheel for Python "
                f"{python} on {platform}; {other}."
            )
        return f"PyTorch publishes no wheels for Python {python} on {platform}: use another Python or machine."
    if len(machines) == 1:
        platform = machines[0]
        with_wheels = [
            r for r in tables.releases if platform in r.platforms and r.versions_on(platform)
        ]
        last = (
            f"torch {max(with_wheels[-1].versions_on(platform))} is the newest with wheels for it; "
            if with_wheels
            else ""
        )
        return f"{last}use a Python and torch version that have wheels for {platform}, or another machine."
    return "Use a torch version, Python and platform that have wheels (envcheck install --torch ... --python-version ... --platform ...)."


def _undecided(ask: Ask, groups: Dict[str, List[Tuple[str, str]]]) -> Tuple[str, str]:
    """Each reason with the machines it holds for, and the fact that would decide."""
    parts = []
    for why, machines in list(groups.items())[:5]:
        platforms = ", ".join(sorted({p for p, _ in machines}))
        pythons = sorted({py for _, py in machines}, key=Version)
        on = platforms + (f" with Python {pythons[0]}" if len(pythons) == 1 else "")
        text = (
            why.replace("{platform}", "it")
            if why
            else "a wheel exists"
            + (
                f" (+{ask.variant} only on PyTorch's index)"
                if ask.variant and not ask.variant.is_cpu
                else ""
            )
        )
        parts.append(f"on {on}: {text}")
    all_platforms = {p for ms in groups.values() for p, _ in ms}
    all_pythons = {py for ms in groups.values() for _, py in ms}
    needs = [
        n
        for n, many in (
            ("the Python version", len(all_pythons) > 1),
            (
                "the OS and architecture of the Python that ran the installer",
                len(all_platforms) > 1,
            ),
        )
        if many
    ]
    return (
        "Which cause holds depends on the machine: " + "; ".join(parts) + ".",
        f"The text does not say {' and '.join(needs) or 'enough of the machine'}, which would decide it.",
    )
