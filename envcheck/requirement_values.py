"""How each value of ``[tool.envcheck]`` (and of ``envcheck.require()``) is read: versions,
version specifiers and sizes, each refused with a one-line ConfigError that names the key and
shows how to write it. packaging's parsers load only when a project pins something."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._toml import ConfigError
from .probes.overrides import parse_size

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

# How each version key is written as a string (a TOML number loses digits: 3.10 is 3.1).
EXAMPLES = {"torch": '">=2.4"', "python": '">=3.10"', "cuda": '"12.1"'}


def kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({list: "a list", dict: "a table"})
    return names.get(type(value), type(value).__name__)


def version_text(value: Any, key: str, where: str) -> str:
    """A version key's text: a string, or a whole number (``python = 3`` is exact); a
    float is refused, since TOML reads ``python = 3.10`` as 3.1."""
    if isinstance(value, float):
        raise ConfigError(
            f"{where}: {key} = {value!r} is a number, and a number loses digits (3.10 reads as "
            f"3.1); write it as a string: {key} = {EXAMPLES[key]}"
        )
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ConfigError(
            f"{where}: {key} must be a string like {EXAMPLES[key]}, not {kind(value)}"
        )
    return str(value)


def cuda_version(value: Any, where: str) -> Version:
    from packaging.version import Version

    text = version_text(value, "cuda", where)  # raises its own ConfigError
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        raise ConfigError(f"{where}: cuda = {value!r} is not a version like '12.1'") from None


def specifier(value: Any, key: str, where: str) -> SpecifierSet:
    text = version_text(value, key, where).strip()
    if text and text[0].isdigit():
        text = f">={text}"
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ConfigError(
            f"{where}: {key} = {value!r} is not a version specifier like '>=2.4'"
        ) from None


def gpu_memory(value: Any, where: str) -> int:
    """Bytes per GPU: a size string ('40GiB'), or a number of GiB; more than zero."""
    bad = f"{where}: gpu_memory = {value!r} is not a size like '40GiB'"
    if isinstance(value, str):
        try:
            size = parse_size(value)
        except ValueError:
            raise ConfigError(bad) from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ConfigError(bad)
        try:
            size = int(value * 2**30)
        except OverflowError:  # a finite float too large for bytes (1e300)
            raise ConfigError(bad) from None
    else:
        raise ConfigError(f"{bad}, it is {kind(value)}")
    if size <= 0:
        raise ConfigError(
            f"{where}: gpu_memory = {value!r}: the memory per GPU must be more than 0"
        )
    return size
