"""pip's own settings for reaching an index (index URLs, proxy, certificates, timeout), read
the way pip reads them, without importing pip.

`install --online` asks an index whether the planned wheels exist. It must ask the index
pip would install from, through the proxy and with the certificates pip would use, or its
answer says nothing about what `pip install` will do. Importing pip is not an option: the
interpreter planned for may have another pip than envcheck's (or none), and pip's internals
are no API. So this module re-reads pip's configuration as pip 24-25 does
(pip/_internal/configuration.py and cli/parser.py):

* the files, lowest first: global (each folder of ``XDG_CONFIG_DIRS``, default
  ``/etc/xdg``, then ``/etc``), user (``~/.pip/pip.conf``, then
  ``$XDG_CONFIG_HOME/pip/pip.conf``), site (``<sys.prefix>/pip.conf`` of the interpreter
  planned for), then the file ``PIP_CONFIG_FILE`` names. When that file exists, the user
  files are not read; when it is ``os.devnull``, no file is read at all;
* every key of every file is merged first, then the sections rank: ``[global]``, then
  ``[install]``, then the ``PIP_*`` variables (so ``[install]`` in /etc beats ``[global]``
  in the user's file, as in pip); empty values are ignored;
* ``extra-index-url`` and ``trusted-host`` are lists separated by whitespace.

On Windows only the file ``PIP_CONFIG_FILE`` names and the ``PIP_*`` variables are read
(pip's pip.ini folders there are not followed).
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from .._record import record

__all__ = ["PipConfig", "config_files", "read_pip_config"]

CONFIG_BASENAME = "pip.conf"
ETC = "/etc"  # pip's last global folder on Linux (tests point it at a folder of their own)
# pip's sections in the order they override each other; ":env:" holds the PIP_* variables
_SECTIONS = ("global", "install", ":env:")
# pip's options answer to each of their long names: --timeout is also --default-timeout,
# --index-url also --pypi-url (pip looks keys up as "--" + key: -i is no key)
_ALIASES = {"default-timeout": "timeout", "pypi-url": "index-url"}
_KEYS = ("index-url", "extra-index-url", "cert", "client-cert", "proxy", "timeout", "trusted-host")


@record(frozen=True)
class PipConfig:
    """What pip would use to reach an index, and the files it was read from."""

    index_url: Optional[str] = None  # None: pip's built-in default index
    extra_index_urls: Tuple[str, ...] = ()
    cert: Optional[str] = None  # a CA bundle (PEM file) or a folder of them
    client_cert: Optional[str] = None  # a PEM file with the client key and certificate
    proxy: Optional[str] = None  # pip's --proxy: for http and https alike
    timeout: Optional[float] = None  # seconds; None: not set
    trusted_hosts: Tuple[str, ...] = ()  # hosts pip reaches without verifying TLS
    files: Tuple[str, ...] = ()  # the configuration files that existed and were read


def config_files(
    prefix: Optional[str] = None, environ: Optional[Mapping[str, str]] = None
) -> List[str]:
    """The files pip reads, lowest precedence first (pip's configuration.iter_config_files
    and the override order GLOBAL, USER, SITE, ENV). Empty when ``PIP_CONFIG_FILE`` is
    ``os.devnull``, which tells pip to read none."""
    env = os.environ if environ is None else environ
    named = env.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    if sys.platform == "win32":  # pip.ini in other folders: only the file named is read
        return [named] if named else []
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    files = [str(Path(d) / "pip" / CONFIG_BASENAME) for d in _global_dirs(env)]
    if sys.platform != "darwin":
        files.append(str(Path(ETC) / CONFIG_BASENAME))
    if not (named and os.path.exists(named)):  # pip reads no user file beside that one
        files += [str(home / ".pip" / CONFIG_BASENAME), str(_user_dir(env, home) / CONFIG_BASENAME)]
    files.append(str(Path(prefix or sys.prefix) / CONFIG_BASENAME))
    if named:
        files.append(named)
    return files


def _user_dir(env: Mapping[str, str], home: Path) -> Path:
    """pip's user_config_dir("pip"): on macOS ~/Library/Application Support/pip where it
    exists, else (and elsewhere) $XDG_CONFIG_HOME/pip, default ~/.config/pip."""
    if sys.platform == "darwin":
        support = home / "Library" / "Application Support" / "pip"
        if support.is_dir():
            return support
    return Path(env.get("XDG_CONFIG_HOME") or str(home / ".config")) / "pip"


def _global_dirs(env: Mapping[str, str]) -> List[str]:
    """XDG_CONFIG_DIRS as pip's appdirs reads it (default /etc/xdg); pip adds /etc after.
    (macOS: /Library/Application Support/pip instead.)"""
    if sys.platform == "darwin":
        return ["/Library/Application Support"]
    dirs = env.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    return [d for d in dirs.split(os.pathsep) if d]


def _read_file(path: str) -> Dict[Tuple[str, str], str]:
    """(section, key) -> value of one file; nothing for a missing or unreadable one (pip
    stops with an error there; the index check is no place to fail for it)."""
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return {}
    return {
        (section, key.lower().replace("_", "-")): value
        for section in parser.sections()
        for key, value in parser.items(section)
    }


def _merged(files: List[str], env: Mapping[str, str]) -> Dict[str, str]:
    """key -> value after pip's two rankings: by file (later wins within a section), then
    by section (global < install < PIP_* variables). Empty values are skipped, as pip does."""
    by_section: Dict[Tuple[str, str], str] = {}
    for path in files:
        by_section.update(_read_file(path))
    for name, value in env.items():
        if name.startswith("PIP_") and name not in ("PIP_CONFIG_FILE",):
            by_section[(":env:", name[4:].lower().replace("_", "-"))] = value
    out: Dict[str, str] = {}
    for section in _SECTIONS:
        for (sec, key), value in by_section.items():
            key = _ALIASES.get(key, key)
            if sec == section and key in _KEYS and value.strip():
                out[key] = value.strip()
    return out


def read_pip_config(
    prefix: Optional[str] = None, environ: Optional[Mapping[str, str]] = None
) -> PipConfig:
    """pip's settings for reaching an index, for the interpreter whose ``sys.prefix`` is
    ``prefix`` (its site pip.conf; default: this one's)."""
    env = os.environ if environ is None else environ
    files = config_files(prefix, env)
    values = _merged(files, env)
    try:
        timeout: Optional[float] = float(values["timeout"]) if "timeout" in values else None
    except ValueError:
        timeout = None
    return PipConfig(
        index_url=values.get("index-url"),
        extra_index_urls=tuple(values.get("extra-index-url", "").split()),
        cert=values.get("cert"),
        client_cert=values.get("client-cert"),
        proxy=values.get("proxy"),
        timeout=timeout,
        trusted_hosts=tuple(values.get("trusted-host", "").split()),
        files=tuple(f for f in files if os.path.isfile(f)),
    )
