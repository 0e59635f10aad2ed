"""The plain values the tables are made of: versions, driver versions, platforms and where
each record comes from."""

from __future__ import annotations

import enum
from typing import Mapping, Optional, Tuple

from packaging.version import Version

from .._record import field, record
from ..values import ComputeCapability

PLATFORMS = (
    "linux-x86_64",
    "linux-aarch64",
    "windows-x86_64",
    "windows-arm64",
    "macos-arm64",
    "macos-x86_64",
)


def parse_version(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or an integer part too long to convert (4300+ digits)
        return None


class DriverVersion(Version):
    """A driver version that prints as written: 535.104.05, not packaging's 535.104.5."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._text = text.strip()

    def __str__(self) -> str:
        return self._text


def parse_driver(text: Optional[str]) -> Optional[DriverVersion]:
    if not text:
        return None
    try:
        return DriverVersion(text)
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        return None


def minor_of(version: Version) -> str:
    return f"{version.major}.{version.minor}"


def capability_key(cc: str) -> ComputeCapability:
    """The ordering value of a compute capability such as "8.9" (raises ValueError)."""
    return ComputeCapability.parse(cc)


@record(frozen=True)
class Provenance:
    sources: Tuple[str, ...]
    inferred: Tuple[str, ...] = ()
    notes: Mapping[str, str] = field(default_factory=dict)

    def inferred_at(self, field: str, key: object) -> bool:
        """Whether ``field`` (all of it) or its entry ``key`` was inferred, not read."""
        return bool({field, f"{field}.{key}"} & set(self.inferred))


class RowConfidence(str, enum.Enum):
    """What a release row of the tables was read from: the release's own build matrix and
    notes, only its released wheels (their metadata), or only nightlies of its time (a
    release not confirmed). A plan never takes a row of less than ``release`` as one."""

    RELEASE = "release"
    WHEEL = "wheel"
    NIGHTLY = "nightly"

    def __str__(self) -> str:
        return self.value
