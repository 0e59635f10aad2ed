"""`install --online`: ask the index a plan installs from whether its pinned wheels exist for
the target Python and platform, and which releases it has that the tables do not know.

The tables say what PyTorch published when they were written; a mirror may lag, a wheel may
be pulled, a release may have come since. Only the index knows, so with --online (and
--run, which needs the index anyway) envcheck asks it, through its simple API: PEP 691 JSON
where the index speaks it, else the PEP 503 HTML page, as pip does. The index is the one the
command names (PyTorch's per-variant index, NVIDIA's Jetson index), else pip's configured
index-url; pip's extra-index-url, proxy, certificates and timeout count as pip would count
them (envcheck.install.pip_config).

An index that does not answer is never a finding about the machine: every failure (refused,
timed out, HTTP 404 or 5xx, a TLS error, a body that is no index page) is an
``IndexUnavailable`` value with a one-line reason, and its URL has any user and token
removed (envcheck._http.redact): index URLs carry credentials.
"""

from __future__ import annotations

import base64
import json
import os
import re
import ssl
import urllib.request
from html.parser import HTMLParser
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import unquote, urlsplit, urlunsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from .._http import FetchError, fetch, redact
from .._record import record
from .._text import one_line
from ..values import Platform
from .pip_config import PipConfig

__all__ = [
    "ACCEPT",
    "IndexCheck",
    "IndexFiles",
    "IndexUnavailable",
    "WheelAnswer",
    "ask_index",
    "supported_tags",
]

# PEP 691's negotiation, as pip sends it: JSON first, the HTML forms as fallbacks.
ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
TIMEOUT = 10.0  # seconds per page: an index that slow is reported, not waited for
LIMIT = 64 * 1024 * 1024  # torch's page on PyTorch's index is a few MiB; a bigger one is wrong
_JSON = "application/vnd.pypi.simple.v1+json"
NO_PIP_CONFIG = PipConfig()  # nothing configured: the system's certificates, no proxy set


@record(frozen=True)
class IndexFiles:
    """The file names an index lists for one project (url: redacted)."""

    url: str
    project: str
    filenames: Tuple[str, ...]


@record(frozen=True)
class IndexUnavailable:
    """An index that gave no usable answer: its URL (redacted) and why, in one line."""

    url: str
    reason: str


def project_url(index: str, project: str) -> str:
    """``<index>/<PEP 503 normalized name>/`` (``Torch_Vision`` -> ``torch-vision``)."""
    return index.rstrip("/") + "/" + canonicalize_name(project) + "/"


def _ssl_context(config: PipConfig, host: str) -> ssl.SSLContext:
    """pip's TLS: its ``cert`` bundle (file or folder) where set, else the system's; its
    ``client-cert``; no verification for a ``trusted-host``, as pip does."""
    cert = config.cert
    is_dir = cert is not None and os.path.isdir(cert)
    context = ssl.create_default_context(
        cafile=None if is_dir else cert, capath=cert if is_dir else None
    )
    if config.client_cert:
        context.load_cert_chain(config.client_cert)
    if host in config.trusted_hosts:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _opener(config: PipConfig, url: str) -> urllib.request.OpenerDirector:
    """An opener through pip's ``proxy`` for http and https alike, else the standard
    http(s)_proxy / no_proxy variables (urllib's ProxyHandler reads them, as requests does
    for pip)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    hostport = f"{host}:{parts.port}" if parts.port else host
    trusted = host if host in config.trusted_hosts else hostport
    proxies = {"http": config.proxy, "https": config.proxy} if config.proxy else None
    return urllib.request.build_opener(
        urllib.request.ProxyHandler(proxies),
        urllib.request.HTTPSHandler(context=_ssl_context(config, trusted)),
    )


def _credentials(url: str) -> Tuple[str, Dict[str, str]]:
    """The URL without its user information, and the headers that send it as pip does
    (HTTP basic auth): urllib would take ``user:token@host`` for the host name."""
    parts = urlsplit(url)
    headers = {"Accept": ACCEPT}
    if "@" not in parts.netloc:
        return url, headers
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    headers["Authorization"] = f"Basic {token}"
    return urlunsplit(parts._replace(netloc=host)), headers


def _local_page(url: str) -> str:
    """A file:// project folder is read as its index.html, as pip reads a local index."""
    parts = urlsplit(url)
    if parts.scheme == "file" and os.path.isdir(unquote(parts.path)):
        return url.rstrip("/") + "/index.html"
    return url


def _local_project_absent(index: str, url: str) -> bool:
    """A file:// index that exists but has no folder for the project: pip finds nothing
    there, as a 404 from a server says (a missing index folder is an unavailable index)."""
    if urlsplit(index).scheme != "file":
        return False
    root, page = unquote(urlsplit(index).path), unquote(urlsplit(url).path)
    return os.path.isdir(root) and not os.path.exists(page)


def ask_index(
    index: str, project: str, config: PipConfig = NO_PIP_CONFIG, timeout: Optional[float] = None
) -> Union[IndexFiles, IndexUnavailable]:
    """The files ``index`` lists for ``project``; IndexUnavailable for any failure, never
    an exception. ``timeout``: seconds for the whole page (default: pip's timeout, at most
    TIMEOUT)."""
    url, headers = _credentials(project_url(index, project))
    seconds = timeout if timeout is not None else min(config.timeout or TIMEOUT, TIMEOUT)
    if _local_project_absent(index, url):
        return IndexFiles(redact(index), canonicalize_name(project), ())
    try:
        opener = _opener(config, url)
        body, kind = fetch(
            _local_page(url), timeout=seconds, limit=LIMIT, headers=headers, opener=opener
        )
        names = _parse_json(body) if kind.split(";")[0].strip() == _JSON else _parse_html(body)
    except FetchError as exc:
        return IndexUnavailable(redact(index), _without_url(str(exc), url))
    except (OSError, ValueError, ssl.SSLError) as exc:  # a bad cert file, a bad body
        return IndexUnavailable(redact(index), one_line(str(exc)) or type(exc).__name__)
    return IndexFiles(redact(index), canonicalize_name(project), tuple(names))


def _without_url(message: str, url: str) -> str:
    """FetchError's message names the page; the line names the index already."""
    prefix = _local_page(url) + ": "
    return message[len(prefix) :] if message.startswith(prefix) else message


def _parse_json(body: bytes) -> List[str]:
    """PEP 691: ``files[].filename``. Yanked files count: pip installs a yanked file when
    a pin names its version exactly (PEP 592), and every pin of a plan does."""
    page = json.loads(body.decode("utf-8"))
    files = page.get("files") if isinstance(page, dict) else None
    if not isinstance(files, list):
        raise ValueError("the answer is no PEP 691 project page (no files list)")
    return [
        f["filename"] for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)
    ]


class _Anchors(HTMLParser):
    """PEP 503: every ``<a href>``; the file name is the last path part of the link."""

    def __init__(self) -> None:
        super().__init__()
        self.names: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            path = urlsplit(href).path
            self.names.append(unquote(path.rsplit("/", 1)[-1]))


def _parse_html(body: bytes) -> List[str]:
    text = body.decode("utf-8", errors="replace")
    if "<" not in text:
        raise ValueError("the answer is no index page (no HTML)")
    parser = _Anchors()
    parser.feed(text)
    parser.close()
    return parser.names


def supported_tags(python: str, platform: str) -> FrozenSet[Tag]:
    """The wheel tags pip accepts for CPython ``python`` (3.11) on ``platform`` (envcheck's
    name, linux-x86_64), with the platform part by family (:func:`_family`): the target
    machine's glibc and macOS version are not known here, so no version of them is assumed
    (a list up to some version would call a newer manylinux wheel missing)."""
    major, minor = (int(p) for p in python.split(".")[:2])
    platforms = _platform_families(Platform.parse(platform))
    version = (major, minor)
    tags = set(cpython_tags(version, platforms=platforms))
    tags.update(compatible_tags(version, f"cp{major}{minor}", platforms))
    return frozenset(tags)


def _platform_families(platform: Platform) -> List[str]:
    arch = platform.machine
    if platform.is_linux:
        return [f"manylinux_{arch}", f"linux_{arch}"]
    if platform.is_macos:
        mac = "arm64" if arch == "aarch64" else arch
        extra = ["macosx_intel", "macosx_universal"] if mac == "x86_64" else []
        return [f"macosx_{mac}", "macosx_universal2", *extra]
    return ["win_arm64" if arch == "aarch64" else "win_amd64"]


_VERSIONED = re.compile(r"^(manylinux|macosx)(?:_?\d+)+_")


def _family(platform_tag: str) -> str:
    """``manylinux_2_28_x86_64``, ``manylinux2014_x86_64`` -> ``manylinux_x86_64``;
    ``macosx_11_0_arm64`` -> ``macosx_arm64``; others (``linux_x86_64``, ``win_amd64``,
    ``musllinux_1_2_x86_64``, which pip on glibc refuses) as they are."""
    return _VERSIONED.sub(r"\1_", platform_tag)


@record(frozen=True)
class WheelAnswer:
    """One pin of the plan against the indexes that answered."""

    pin: str  # torch==2.13.0+cu126
    found: Optional[str]  # the matching wheel's tags, "cp311 manylinux_2_28_x86_64"
    index: Optional[str]  # where it was found (redacted)
    detail: str = ""  # when not found: whether the version is there for other targets


@record(frozen=True)
class IndexCheck:
    """What the indexes said about one plan: each pin, releases the tables do not know, and
    the indexes that gave no answer. ``asked``: the index URLs, redacted."""

    asked: Tuple[str, ...]
    python: str
    platform: str
    wheels: Tuple[WheelAnswer, ...] = ()
    unknown_releases: Tuple[
        Tuple[str, Tuple[str, ...], str], ...
    ] = ()  # name, versions, newest known
    unavailable: Tuple[IndexUnavailable, ...] = ()
    skipped: Optional[str] = None  # why nothing was asked

    @property
    def missing(self) -> Tuple[WheelAnswer, ...]:
        """Pins no index has a wheel for, when every index pip would read answered (with one
        silent or not asked, the wheel may be there: not said to be missing)."""
        if self.unavailable or self.skipped:
            return ()
        return tuple(w for w in self.wheels if w.found is None)


def match_pin(pin: str, pages: Sequence[IndexFiles], tags: FrozenSet[Tag]) -> WheelAnswer:
    """The first wheel on ``pages`` that meets ``pin`` (pip's ``==``: a pin without a local
    label accepts any label) and has one of ``tags``."""
    requirement = Requirement(pin)
    name = canonicalize_name(requirement.name)
    other: List[str] = []
    for page in pages:
        if page.project != name:
            continue
        for filename, version, wheel_tags in _wheels(page.filenames):
            if not requirement.specifier.contains(version, prereleases=True):
                continue
            fit = sorted(str(t) for t in wheel_tags if _by_family(t) in tags)
            if fit:
                return WheelAnswer(pin, _tag_words(fit[0]), page.url)
            other.append(filename)
    detail = (
        f"that version is there only for other targets ({_targets(other)})"
        if other
        else "that version is not there"
    )
    return WheelAnswer(pin, None, None, detail)


def _by_family(tag: Tag) -> Tag:
    return Tag(tag.interpreter, tag.abi, _family(tag.platform))


def _tag_words(tag: str) -> str:
    """``cp311-cp311-manylinux_2_28_x86_64`` -> ``cp311 manylinux_2_28_x86_64``."""
    interpreter, _, platform = tag.split("-")
    return f"{interpreter} {platform}"


def _targets(filenames: List[str]) -> str:
    tags = sorted({_tag_words(str(t)) for f in filenames for t in parse_wheel_filename(f)[3]})
    return ", ".join(tags[:4]) + (f", {len(tags) - 4} more" if len(tags) > 4 else "")


def _wheels(filenames: Iterable[str]) -> Iterable[Tuple[str, Version, FrozenSet[Tag]]]:
    """(file, version, tags) of each wheel; sdists and names that are no wheel's skipped."""
    for filename in filenames:
        if not filename.endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, ValueError):
            continue
        yield filename, version, tags


def releases_on(pages: Sequence[IndexFiles], project: str) -> List[Version]:
    """The final releases (no pre- or dev releases) the pages list for ``project``, newest
    first, each once, without local labels."""
    name = canonicalize_name(project)
    found = {
        Version(version.public)
        for page in pages
        if page.project == name
        for _, version, _ in _wheels(page.filenames)
        if not version.is_prerelease and not version.is_devrelease
    }
    return sorted(found, reverse=True)


def pin_names(pins: Sequence[str]) -> List[str]:
    """The projects the pins name, in order, each once."""
    out: List[str] = []
    for pin in pins:
        try:
            name = canonicalize_name(Requirement(pin).name)
        except InvalidRequirement:
            continue
        if name not in out:
            out.append(name)
    return out


def ask_all(
    indexes: Sequence[str], projects: Sequence[str], config: PipConfig, timeout: Optional[float]
) -> Tuple[List[IndexFiles], List[IndexUnavailable]]:
    """Each project's page on each index; an index that fails once is not asked again (one
    unreachable index costs one timeout, not one per project). A project the index does not
    have (HTTP 404) is an empty page there, not an unavailable index."""
    pages: List[IndexFiles] = []
    down: Dict[str, IndexUnavailable] = {}
    for index in indexes:
        for project in projects:
            if index in down:
                break
            answer = ask_index(index, project, config, timeout)
            if isinstance(answer, IndexFiles):
                pages.append(answer)
            elif answer.reason.startswith("HTTP 404"):
                pages.append(IndexFiles(answer.url, canonicalize_name(project), ()))
            else:
                down[index] = answer
    return pages, list(down.values())
