"""`install --online` against real HTTP: a local index served by http.server on 127.0.0.1.

The index holds fake wheels of tests/localindex.py renamed to the platform tags PyTorch's
wheels carry. It is served three ways: /html/ as the PEP 503 folders build_index writes (a
static server that ignores Accept), /neg/ with PEP 691 JSON for a client that asks for it
(and the same HTML otherwise), /hang/ that answers after the client's timeout. A closed
port stands for an index that is down. pip's configuration is read from files in a tmp
folder named through PIP_CONFIG_FILE and the XDG variables, never the machine's.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from envcheck.install import Package, Planned, pip_config
from envcheck.install.index_query import (
    IndexFiles,
    IndexUnavailable,
    ask_index,
    match_pin,
    supported_tags,
)
from envcheck.install.online import check_plan
from envcheck.install.pip_config import PipConfig, read_pip_config
from envcheck.report.plan_text import index_check_lines
from envcheck.values import Variant
from tests.fixtures import FIXTURE_TABLES_DIR, TABLES
from tests.localindex import build_index, make_wheel
from tests.runner import envcheck

LINUX = "manylinux_2_28_x86_64"
SEEN: List[Dict[str, str]] = []  # the headers of every request the local index answered
NEWER = "2.99.0"  # newer than any release the tables know
# variant -> project -> wheel file names
WHEELS = {
    "cu126": {
        "torch": [
            f"torch-2.13.0+cu126-cp311-cp311-{LINUX}.whl",
            f"torch-2.13.0+cu126-cp313-cp313-{LINUX}.whl",
            f"torch-{NEWER}+cu126-cp311-cp311-{LINUX}.whl",
            "torch-2.13.0+cu126-cp311-cp311-win_amd64.whl",
        ],
        # cp311 only: a plan for Python 3.13 lacks its torchvision
        "torchvision": [f"torchvision-0.28.0+cu126-cp311-cp311-{LINUX}.whl"],
    }
}


def _wheels(tmp: Path, names: List[str]) -> List[Path]:
    """Fake wheels (tests/localindex.py) under the names an index lists."""
    out = []
    for name in names:
        project, version = name.split("-")[:2]
        made = make_wheel(tmp / "_made", project, version)
        out.append(made.rename(tmp / "_made" / name))
    return out


class _Index(BaseHTTPRequestHandler):
    """/html/<index>/<project>/, /neg/<index>/<project>/, /hang/...: see the module."""

    root: Path  # the folder of the build_index trees, one per index
    hang_s = 3.0

    def do_GET(self) -> None:
        SEEN.append(dict(self.headers))
        way, _, rest = self.path.strip("/").partition("/")
        if way == "hang":
            time.sleep(self.hang_s)
        index, _, project = rest.partition("/")
        page = self.root / index / "simple" / project.strip("/") / "index.html"
        if not page.is_file():
            self.send_error(404)
            return
        json_asked = "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", "")
        if way == "neg" and json_asked:
            names = sorted(p.name for p in page.parent.glob("*.whl"))
            files = [{"filename": n, "url": n, "hashes": {}, "yanked": False} for n in names]
            self._send(json.dumps({"meta": {"api-version": "1.0"}, "files": files}).encode(), True)
        else:
            self._send(page.read_bytes(), False)

    def _send(self, body: bytes, is_json: bool) -> None:
        kind = "application/vnd.pypi.simple.v1+json" if is_json else "text/html"
        try:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # /hang/: the client has gone
            pass

    def log_message(self, *args: object) -> None:
        pass


def serve(root: Path) -> Iterator[str]:
    handler = type("Handler", (_Index,), {"root": root})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def index_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("index")
    for variant, projects in WHEELS.items():
        build_index(root / variant, {p: _wheels(root, names) for p, names in projects.items()})
    return root


@pytest.fixture(scope="module")
def server(index_root) -> Iterator[str]:
    yield from serve(index_root)


@pytest.fixture
def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _plan(base: str, python: str = "3.11") -> Planned:
    """The cu126 plan for 2.13.0 with torchvision, from ``base`` + variant (as the 1.8 LTS
    plans take theirs)."""
    return Planned(
        platform="linux-x86_64",
        python=python,
        torch="2.13.0",
        variant=Variant.parse("cu126"),
        packages=(Package("torch", "2.13.0"), Package("torchvision", "0.28.0")),
        index_base=base,
    )


@pytest.mark.parametrize("way", ["html", "neg"])
def test_the_page_lists_the_wheels(server, way):
    answer = ask_index(f"{server}/{way}/cu126", "Torch")
    assert isinstance(answer, IndexFiles)
    assert sorted(answer.filenames) == sorted(WHEELS["cu126"]["torch"])


def test_json_is_asked_for_and_used(server):
    """The client sends PEP 691's Accept; /neg/ then answers JSON, which is parsed."""
    before = len(SEEN)
    answer = ask_index(f"{server}/neg/cu126", "torchvision")
    assert isinstance(answer, IndexFiles) and answer.filenames == tuple(
        WHEELS["cu126"]["torchvision"]
    )
    accept = SEEN[before]["Accept"]
    assert accept.startswith("application/vnd.pypi.simple.v1+json")


def test_a_planned_wheel_the_index_lacks_is_said(server):
    check = check_plan(_plan(f"{server}/neg/", python="3.13"), TABLES, PipConfig())
    lines = index_check_lines(check)
    assert [w.pin for w in check.missing] == ["torchvision==0.28.0"]
    assert f"index check ({server}/neg/cu126): torch==2.13.0 has a wheel for cp313 {LINUX}" in lines
    (no,) = [line for line in lines if "NO wheel" in line]
    assert no.startswith(f"index check ({server}/neg/cu126): NO wheel of torchvision==0.28.0")
    assert "for cp313 on linux-x86_64 on that index" in no
    assert f"cp311 {LINUX}" in no  # what the index has instead


def test_a_release_the_tables_do_not_know_is_listed(server):
    check = check_plan(_plan(f"{server}/html/"), TABLES, PipConfig())
    newest = TABLES.newest_release.minor
    assert check.missing == ()
    assert check.unknown_releases == (("torch", (NEWER,), newest),)
    assert (
        f"torch {NEWER} is on the index but not in these tables (newest known: {newest}): "
        "run `envcheck tables update`"
    ) in index_check_lines(check)


def test_a_pinned_local_label_must_match_exactly(server):
    plan = _plan(f"{server}/neg/")
    labelled = Planned(**{**plan.__dict__, "packages": (Package("torch", "2.13.0", "cu128"),)})
    check = check_plan(labelled, TABLES, PipConfig())
    assert [w.pin for w in check.missing] == ["torch==2.13.0+cu128"]


@pytest.mark.parametrize(
    "platform, wheel, fits",
    [
        ("linux-x86_64", "cp311-cp311-manylinux_2_45_x86_64", True),  # a glibc newer than any list
        ("linux-x86_64", "cp311-cp311-manylinux2014_x86_64", True),
        ("linux-x86_64", "cp311-cp311-musllinux_1_2_x86_64", False),  # pip on glibc refuses it
        ("linux-x86_64", "cp311-cp311-manylinux_2_28_aarch64", False),
        ("linux-x86_64", "cp312-cp312-manylinux_2_28_x86_64", False),
        ("macos-arm64", "cp311-none-macosx_26_0_arm64", True),  # a macOS newer than any list
        ("macos-arm64", "cp311-cp311-macosx_10_9_universal2", True),
        ("macos-arm64", "cp311-cp311-macosx_10_9_x86_64", False),
        ("windows-x86_64", "py3-none-any", True),
    ],
)
def test_a_wheel_fits_by_platform_family_not_by_version(platform, wheel, fits):
    """The target's glibc and macOS version are not known: no version of them is assumed."""
    page = IndexFiles("http://index", "torch", (f"torch-2.13.0-{wheel}.whl",))
    answer = match_pin("torch==2.13.0", [page], supported_tags("3.11", platform))
    assert (answer.found is not None) is fits, answer


def test_an_index_that_hangs_is_unavailable_within_the_timeout(server):
    start = time.monotonic()
    answer = ask_index(f"{server}/hang/cu126", "torch", timeout=0.5)
    assert time.monotonic() - start < 2.5
    assert isinstance(answer, IndexUnavailable) and answer.url == f"{server}/hang/cu126"
    assert "\n" not in answer.reason and answer.reason


def test_a_closed_port_is_unavailable_and_no_wheel_is_said_missing(closed_port):
    check = check_plan(_plan(f"{closed_port}/"), TABLES, PipConfig(), timeout=2)
    assert check.missing == () and len(check.unavailable) == 1
    lines = index_check_lines(check)
    assert f"index check skipped: {closed_port}/cu126: Connection refused" in lines
    assert not any("NO wheel" in line for line in lines)


@pytest.mark.parametrize("where", ["html", "hang", "closed"])
def test_credentials_are_sent_but_never_shown(server, closed_port, where):
    base = closed_port if where == "closed" else f"{server}/{where}"
    secret = f"{base.replace('http://', 'http://alice:s3cr3t@')}/"
    check = check_plan(_plan(secret, python="3.13"), TABLES, PipConfig(), timeout=0.5)
    text = "\n".join(index_check_lines(check)) + repr(check)
    assert "s3cr3t" not in text and "alice" not in text and "***@127.0.0.1" in text
    if where == "html":
        assert check.wheels[0].found is not None  # the index answered through the credentials
        assert SEEN[-1]["Authorization"] == "Basic YWxpY2U6czNjcjN0"


def test_pip_configuration_files_and_variables(tmp_path, monkeypatch):
    """pip's order: global (XDG_CONFIG_DIRS, /etc), user (XDG_CONFIG_HOME), site,
    PIP_CONFIG_FILE; [install] over [global] whatever the file; PIP_* variables over every
    file. (/etc is a tmp folder here: the machine's pip.conf is no input.)"""
    monkeypatch.setattr(pip_config, "ETC", str(tmp_path / "etc"))
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "pip.conf").write_text("[global]\ncert = /etc-cert.pem\ntimeout = 1\n")
    (tmp_path / "xdg" / "pip").mkdir(parents=True)
    (tmp_path / "xdg" / "pip" / "pip.conf").write_text(
        "[install]\ntimeout = 7\n[global]\nindex-url = http://global/simple\n"
        "trusted-host = a.example\n  b.example\n"
    )
    (tmp_path / "home" / "pip").mkdir(parents=True)
    (tmp_path / "home" / "pip" / "pip.conf").write_text(
        "[global]\ntimeout = 3\nindex-url = http://user/simple\n"
        "extra-index-url =\n  http://extra1/simple\n  http://extra2/simple\n"
        "cert = /certs/ca.pem\nproxy = http://proxy:3128\n"
    )
    (tmp_path / "prefix").mkdir()
    (tmp_path / "prefix" / "pip.conf").write_text("[global]\nclient-cert = /certs/me.pem\n")
    env = {
        "HOME": str(tmp_path / "nohome"),
        "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
        "XDG_CONFIG_HOME": str(tmp_path / "home"),
    }
    config = read_pip_config(str(tmp_path / "prefix"), env)
    assert config == PipConfig(
        index_url="http://user/simple",
        extra_index_urls=("http://extra1/simple", "http://extra2/simple"),
        cert="/certs/ca.pem",
        client_cert="/certs/me.pem",
        proxy="http://proxy:3128",
        timeout=7.0,  # [install] in the global file beats [global] in the user's
        trusted_hosts=("a.example", "b.example"),
        files=config.files,
    )
    assert len(config.files) == 4
    named = tmp_path / "named.conf"
    named.write_text("[global]\nindex-url = http://named/simple\n")
    env.update(PIP_CONFIG_FILE=str(named), PIP_PROXY="http://envproxy:1")
    config = read_pip_config(str(tmp_path / "prefix"), env)
    # the named file exists: the user's files are not read, the named one beats the site's
    assert (config.index_url, config.extra_index_urls, config.proxy) == (
        "http://named/simple",
        (),
        "http://envproxy:1",
    )
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://env/simple")
    config = read_pip_config(str(tmp_path / "prefix"), env)
    assert (config.index_url, config.client_cert, config.files) == ("http://env/simple", None, ())


def test_pips_proxy_is_used(server, closed_port):
    """pip's proxy carries the request: through a proxy that is down, the index is not
    reached, though it is up."""
    config = PipConfig(proxy=closed_port)
    answer = ask_index(f"{server}/html/cu126", "torch", config, timeout=2)
    assert isinstance(answer, IndexUnavailable)
    assert isinstance(
        ask_index(f"{server}/html/cu126", "torch", PipConfig(), timeout=2), IndexFiles
    )


# ---------------------------------------------------------------- the CLI, end to end


def _cli_env(index_url: str) -> Dict[str, str]:
    env = {k: "" for k in os.environ if k.startswith("PIP_") or k.lower().endswith("_proxy")}
    env.update(
        PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=index_url, ENVCHECK_TABLES=str(FIXTURE_TABLES_DIR)
    )
    return env


MAC = ("install", "--platform", "macos-arm64", "--python-version", "3.11", "--variant", "cpu")


@pytest.fixture(scope="module")
def mac_index(tmp_path_factory, index_root):
    """pip's configured index for the macOS plan (which takes the default index): torch as
    planned and a newer one, its torchvision only for another Python."""
    plan = json.loads(envcheck(*MAC, "--with", "torchvision", "--json").stdout)
    torch, vision = (p["version"] for p in plan["packages"])
    names = {
        "torch": [
            f"torch-{torch}-cp311-none-macosx_11_0_arm64.whl",
            f"torch-{NEWER}-cp311-none-macosx_11_0_arm64.whl",
        ],
        "torchvision": [f"torchvision-{vision}-cp310-cp310-macosx_11_0_arm64.whl"],
    }
    build_index(index_root / "mac", {p: _wheels(index_root, n) for p, n in names.items()})
    return torch, vision


def test_cli_online_says_the_missing_wheel_and_the_unknown_release(server, mac_index):
    torch, vision = mac_index
    index = f"{server.replace('http://', 'http://bob:t0ken@')}/neg/mac"
    run = envcheck(*MAC, "--with", "torchvision", "--online", env=_cli_env(index), timeout=60)
    shown = f"{server.replace('http://', 'http://***@')}/neg/mac"
    assert run.returncode == 1, run.stdout + run.stderr  # the index lacks a planned wheel
    assert (
        f"index check ({shown}): torch=={torch} has a wheel for cp311 macosx_11_0_arm64"
        in run.stdout
    )
    assert (
        f"index check ({shown}): NO wheel of torchvision=={vision} for cp311 on macos-arm64"
        in run.stdout
    )
    assert f"torch {NEWER} is on the index but not in these tables" in run.stdout
    assert "t0ken" not in run.stdout + run.stderr
    assert f"pip install torch=={torch} torchvision=={vision}" in run.stdout  # the plan stays


def test_cli_online_with_the_index_down_changes_nothing(closed_port):
    plain = envcheck(*MAC, env=_cli_env(f"{closed_port}/simple"), timeout=60)
    online = envcheck(*MAC, "--online", env=_cli_env(f"{closed_port}/simple"), timeout=60)
    assert online.returncode == plain.returncode == 0, online.stdout + online.stderr
    assert online.stdout.startswith(plain.stdout)
    assert f"index check skipped: {closed_port}/simple: Connection refused" in online.stdout
    assert "index check" not in plain.stdout
    assert "wheel" not in online.stdout.split("index check", 1)[1]  # no index answered


def test_cli_json_keeps_stdout_a_document(server, mac_index):
    run = envcheck(*MAC, "--json", "--online", env=_cli_env(f"{server}/html/mac"), timeout=60)
    assert json.loads(run.stdout)["ok"] is True
    assert "index check" in run.stderr and run.returncode == 0  # torch alone: it is there
