"""Are there torch wheels for this Python on this platform?"""

from __future__ import annotations

from typing import List

from packaging.version import Version

from ..compat import platform_key
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tables.model import parse_version
from ..values import Platform
from ._util import torch_version


def check(facts: Facts, tables: Tables) -> List[Finding]:
    py = parse_version(facts.python.version)
    if py is None:
        return []
    findings = _installed_release(facts, tables, py)
    if facts.python.bits == 32:  # no platform has 32-bit wheels
        findings.append(
            RULES["PY003"](
                "PyTorch publishes no wheels for a 32-bit Python",
                [f"Python {py} (32-bit)"],
                "Install a 64-bit Python (on Windows the x86-64 installer) and torch into it.",
            )
        )
        return findings
    if not facts.system.os or not facts.system.machine:
        return findings  # which wheels exist is unknown (a report that names no architecture)
    platform = platform_key(facts.system)
    if platform is None:
        machine = f"{facts.system.os} {facts.system.machine}"
        bits = f" ({facts.python.bits}-bit)" if facts.python.bits else ""
        findings.append(
            RULES["PY003"](
                f"PyTorch publishes no wheels for {machine}",
                [f"{machine}, Python {py}{bits}"],
                "Use a 64-bit Python on Linux (x86_64 or aarch64), Windows x86_64 or macOS arm64, "
                "or build torch from source.",
            )
        )
        return findings
    return findings + _releases_for(facts, tables, py, platform)


def _installed_release(facts: Facts, tables: Tables, py: Version) -> List[Finding]:
    """PY001: the installed torch's release has no wheels for this Python."""
    version = torch_version(facts)
    release = tables.release(version) if version else None
    if release is None or release.supports_python(py):
        return []
    return [
        RULES["PY001"](
            f"torch {release.minor} has no wheels for Python {py.major}.{py.minor}",
            [
                f"torch {version}: Python {release.python_min} to {release.python_max}",
                f"Python {py}",
            ],
            f"Use Python {release.python_min}-{release.python_max} with torch {release.minor}, "
            "or a torch release that supports this Python.",
        )
    ]


def _releases_for(facts: Facts, tables: Tables, py: Version, platform: Platform) -> List[Finding]:
    """PY003 when no release has wheels for this Python here, PY002 when only older ones do."""
    usable = [r for r in tables.releases if r.supports_python(py) and str(platform) in r.platforms]
    newest = tables.newest_release
    oldest = tables.releases[0]
    if not usable and py < oldest.python_min:  # older than the tables: older torch had wheels
        return [
            RULES["PY002"](
                f"The newest torch for Python {py.major}.{py.minor} on {platform} is older than "
                f"{oldest.minor}, the oldest release the tables know",
                [
                    f"torch {oldest.minor} needs Python {oldest.python_min} or newer",
                    f"Python {py}, {platform}",
                ],
                "Releases before the tables may have wheels for it; which is not known here. "
                + _python_advice(tables, platform),
                severity="info" if facts.torch.installed else "warning",
            )
        ]
    if not usable:
        return [
            RULES["PY003"](
                f"No torch release has wheels for Python {py.major}.{py.minor} on {platform}",
                [f"Python {py}, {platform}"],
                _python_advice(tables, platform),
                severity="error" if not facts.torch.installed else "warning",
            )
        ]
    if usable[-1] is newest:
        return []
    last = usable[-1]
    why = []
    if not newest.supports_python(py):
        why.append(f"torch {newest.minor} needs Python {newest.python_min}-{newest.python_max}")
    if str(platform) not in newest.platforms:
        why.append(f"torch {newest.minor} has no {platform} wheels")
    return [
        RULES["PY002"](
            f"The newest torch for Python {py.major}.{py.minor} on {platform} is {last.newest}",
            [*why, f"Python {py}, {platform}"],
            f"torch {last.newest} is the last release you can install here. "
            + _python_advice(tables, platform),
            severity="info" if facts.torch.installed else "warning",
        )
    ]


def _python_advice(tables: Tables, platform: Platform) -> str:
    newest = next((r for r in reversed(tables.releases) if platform in r.platforms), None)
    if newest is None:
        return "Use another platform."
    if platform.is_macos and platform.arch == "x86_64":
        return (
            f"Intel Macs get no wheels after torch {newest.newest}: use that, "
            "or an Apple-silicon Mac or Linux machine."
        )
    return f"Use Python {newest.python_min}-{newest.python_max} for torch {newest.minor}."
