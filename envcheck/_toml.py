"""Reading a TOML config file (pyproject.toml, envcheck.toml), bounded and with one-line errors.

The project's requirements (``envcheck.requirements``) and the toolchain probe (which reads
a project's build requirements) both read TOML: this is the one reader, low enough for both.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Tuple

from ._text import one_line

MAX_CONFIG = 1024 * 1024  # bytes: no pyproject.toml or envcheck.toml is anywhere near this


class ConfigError(ValueError):
    """A [tool.envcheck] table (or envcheck.toml) that cannot be used; names file and key,
    on one line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class Unreadable(ConfigError):
    """A config file that is not UTF-8 or not TOML (as opposed to one that cannot be opened)."""

    def __init__(self, message: str, mentions_envcheck: bool) -> None:
        super().__init__(message)
        self.mentions_envcheck = mentions_envcheck


def sys_version() -> Tuple[int, int]:
    return (sys.version_info[0], sys.version_info[1])


def read_toml(path: Path) -> Dict[str, Any]:
    """The TOML document in ``path``: at most MAX_CONFIG bytes of UTF-8, else ConfigError."""
    if sys_version() >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.9/3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG + 1)  # bounded: --config /dev/zero must not fill memory
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG // 1024} KiB; not a TOML config file")
    mentions = b"envcheck" in data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            f"{path}: not UTF-8 text (TOML files are UTF-8): byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start}",
            mentions,
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Unreadable(f"{path}: not valid TOML: {exc}", mentions) from None
    except RecursionError:
        raise Unreadable(f"{path}: not valid TOML: nested too deeply", mentions) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise Unreadable(f"{path}: not valid TOML: {exc}", mentions) from None


__all__ = ["MAX_CONFIG", "ConfigError", "Unreadable", "read_toml"]
