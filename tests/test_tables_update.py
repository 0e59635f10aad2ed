"""`envcheck tables update` against a real HTTP server on 127.0.0.1 started by the test.

Each bundle is the repository's tables, changed the way a real update or a real failure
changes them, with a manifest made by envcheck.tables.bundle (the publishing pipeline's
own function). After every refusal the tables in use are the ones before it, and the
exit code says which kind of refusal it was (4 unreachable, 5 refused, 6 not newer).
"""

from __future__ import annotations

import copy
import functools
import http.server
import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from envcheck import exitcodes
from envcheck.tables import builtin_dir, load_tables
from envcheck.tables.bundle import MANIFEST, make_manifest
from tests.runner import envcheck

PLAN = ("install", "--python-version", "3.12", "--platform", "linux-x86_64", "--variant", "cpu")


# --------------------------------------------------------------------------- bundles


def make_bundle(
    folder: Path, change: Optional[Callable[[dict], None]] = None, as_of: str = "2027-01-20"
) -> Path:
    """The repository's tables under folder/v1/, torch_releases.json dated ``as_of`` and
    changed by ``change``, with its manifest."""
    out = folder / "v1"
    out.mkdir(parents=True)
    for path in builtin_dir().glob("*.json"):
        shutil.copy(path, out / path.name)
    releases = json.loads((out / "torch_releases.json").read_text())
    releases["as_of"] = as_of
    if change:
        change(releases)
    (out / "torch_releases.json").write_text(json.dumps(releases, indent=1) + "\n")
    (out / MANIFEST).write_text(json.dumps(make_manifest(out), indent=2) + "\n")
    return out


def add_release(releases: dict) -> None:
    """A torch 2.16 the built-in tables do not know: 2.15's record under a new name."""
    new = copy.deepcopy(releases["releases"][-1])
    new.update(minor="2.16", versions=["2.16.0"], released="2027-01-15")
    new["torchvision"] = {"2.16.0": "0.30.0"}
    new["torchaudio"] = {"2.16.0": "2.12.0"}
    releases["releases"].append(new)


# --------------------------------------------------------------------------- servers


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


class _Hangs(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        time.sleep(5)

    def log_message(self, *args: object) -> None:
        pass


class _Trickles(http.server.BaseHTTPRequestHandler):
    """Answers at once, then sends its body a byte every 0.2 s: each read is in time, the
    whole answer never is."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        for _ in range(1000):
            try:
                self.wfile.write(b"{")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """serve(folder) or serve(handler=...): a real server on 127.0.0.1, its URL."""
    servers = []

    def start(folder: Optional[Path] = None, handler: Optional[type] = None) -> str:
        made = handler or functools.partial(_Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), made)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cache(tmp_path: Path) -> dict:
    """The environment of a user whose cache folder is tmp_path/cache."""
    return {"ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}


def newest_planned(env: dict) -> str:
    run = envcheck(*PLAN, "--json", env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["torch"]


def in_use(env: dict) -> str:
    run = envcheck("tables", "--json", env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["tables"]["torch_releases"]["path"]


# --------------------------------------------------------------------------- tests


def test_a_newer_bundle_is_used_by_the_next_install(tmp_path, serve, cache):
    before = newest_planned(cache)
    make_bundle(tmp_path / "site", add_release)
    url = serve(tmp_path / "site")
    run = envcheck("tables", "update", "--from", url, env=cache)
    assert run.returncode == 0, run.stderr
    assert "tables updated" in run.stdout and "new torch releases: 2.16" in run.stdout
    assert before.startswith("2.15") and newest_planned(cache) == "2.16.0"
    assert in_use(cache).startswith(cache["ENVCHECK_CACHE_DIR"])
    closing = " ".join(envcheck("check", "--no-deep", env=cache).stdout.split())
    assert re.search(rf"\(tables as of [-\d]+, updated [-\d]+ from {re.escape(url)}\)", closing)
    again = envcheck("tables", "update", "--from", url, env=cache)
    assert again.returncode == 0 and "up to date" in again.stdout, again.stdout + again.stderr


def test_remove_goes_back_to_the_builtin_tables(tmp_path, serve, cache):
    make_bundle(tmp_path / "site", add_release)
    assert (
        envcheck("tables", "update", "--from", serve(tmp_path / "site"), env=cache).returncode == 0
    )
    run = envcheck("tables", "update", "--remove", env=cache)
    assert run.returncode == 0 and "removed" in run.stdout
    assert in_use(cache).startswith(str(builtin_dir()))
    assert not list((tmp_path / "cache").iterdir())


def _truncate(site: Path) -> None:
    path = site / "v1" / "gpu_arches.json"
    path.write_bytes(path.read_bytes()[:5000])


def _tamper(site: Path) -> None:
    path = site / "v1" / "links.json"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"as_of"', b'"as_oF"', 1))  # same size, another hash


def _future_schema(site: Path) -> None:
    path = site / "v1" / MANIFEST
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 2
    path.write_text(json.dumps(manifest))


def _invalid_table(site: Path) -> None:
    """A bundle whose manifest matches but whose table this envcheck refuses."""
    out = site / "v1"
    releases = json.loads((out / "torch_releases.json").read_text())
    releases["releases"][-1]["python"]["min"] = "three"
    (out / "torch_releases.json").write_text(json.dumps(releases))
    (out / MANIFEST).write_text(json.dumps(make_manifest(out)))  # the headers are fine


@pytest.mark.parametrize(
    "spoil, code, says",
    [
        (_truncate, exitcodes.REFUSED, "truncated"),
        (_tamper, exitcodes.REFUSED, "checksum does not match"),
        (_future_schema, exitcodes.REFUSED, "upgrade envcheck"),
        (_invalid_table, exitcodes.REFUSED, "do not validate"),
    ],
    ids=["truncated", "bad-checksum", "future-schema", "invalid-table"],
)
def test_a_bad_bundle_leaves_the_old_tables(tmp_path, serve, cache, spoil, code, says):
    make_bundle(tmp_path / "old", add_release, as_of="2027-01-10")
    assert (
        envcheck("tables", "update", "--from", serve(tmp_path / "old"), env=cache).returncode == 0
    )
    before = in_use(cache)
    make_bundle(tmp_path / "site", add_release)
    spoil(tmp_path / "site")
    run = envcheck("tables", "update", "--from", serve(tmp_path / "site"), env=cache)
    assert run.returncode == code, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "the tables in use stay" in lines[0], lines
    assert "Traceback" not in run.stderr
    assert in_use(cache) == before


def test_an_older_bundle_is_not_taken(tmp_path, serve, cache):
    make_bundle(tmp_path / "site", as_of="2026-01-01")
    run = envcheck("tables", "update", "--from", serve(tmp_path / "site"), env=cache)
    assert run.returncode == exitcodes.NOT_NEWER, run.stderr
    assert "not newer" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert in_use(cache).startswith(str(builtin_dir()))
    assert not (tmp_path / "cache").exists()


def test_a_server_that_hangs_is_given_up_on(serve, cache):
    url = serve(handler=_Hangs)
    started = time.monotonic()
    run = envcheck("tables", "update", "--from", url, "--timeout", "1", env=cache)
    assert run.returncode == exitcodes.UNREACHABLE, run.stderr
    assert time.monotonic() - started < 4.5
    assert "no answer" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_a_server_that_trickles_is_given_up_on(serve, cache):
    started = time.monotonic()
    run = envcheck(
        "tables", "update", "--from", serve(handler=_Trickles), "--timeout", "1", env=cache
    )
    assert run.returncode == exitcodes.UNREACHABLE, run.stderr
    assert time.monotonic() - started < 4.5
    assert "no complete answer within 1 s" in run.stderr


def test_no_server_at_all(cache):
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = envcheck("tables", "update", "--from", f"http://127.0.0.1:{port}/", env=cache)
    assert run.returncode == exitcodes.UNREACHABLE, run.stderr
    assert "refused" in run.stderr.lower() and len(run.stderr.strip().splitlines()) == 1


def test_credentials_in_the_url_are_never_printed(cache):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = envcheck("tables", "update", "--from", f"http://me:s3cret@127.0.0.1:{port}/", env=cache)
    assert run.returncode == exitcodes.UNREACHABLE
    assert "s3cret" not in run.stdout + run.stderr and "***@127.0.0.1" in run.stderr


def test_a_folder_source_and_the_manifest_at_its_top(tmp_path, cache):
    folder = make_bundle(tmp_path / "site", add_release)  # --from names v1/ itself
    run = envcheck("tables", "update", "--from", str(folder), env=cache)
    assert run.returncode == 0, run.stderr
    assert newest_planned(cache) == "2.16.0"


def test_the_tables_url_variable(tmp_path, serve, cache):
    make_bundle(tmp_path / "site", add_release)
    env = dict(cache, ENVCHECK_TABLES_URL=serve(tmp_path / "site"))
    assert envcheck("tables", "update", env=env).returncode == 0
    assert newest_planned(cache) == "2.16.0"


def test_a_linked_cache_folder_is_refused(tmp_path, serve):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cachelink").symlink_to(elsewhere)
    make_bundle(tmp_path / "site", add_release)
    env = {"ENVCHECK_CACHE_DIR": str(tmp_path / "cachelink")}
    run = envcheck("tables", "update", "--from", serve(tmp_path / "site"), env=env)
    assert run.returncode == exitcodes.INTERNAL, run.stdout + run.stderr
    assert "link" in run.stderr and not list(elsewhere.iterdir())


def test_unusable_updated_tables_are_said_and_the_builtin_ones_used(tmp_path, serve, cache):
    make_bundle(tmp_path / "site", add_release)
    assert (
        envcheck("tables", "update", "--from", serve(tmp_path / "site"), env=cache).returncode == 0
    )
    root = Path(cache["ENVCHECK_CACHE_DIR"])
    (bundle,) = [p for p in root.iterdir() if p.is_dir()]
    (bundle / MANIFEST).write_text("{not json")
    check = envcheck("check", "--no-deep", env=cache)
    assert "TBL003" in check.stdout and "not valid JSON" in check.stdout, check.stdout
    assert newest_planned(cache).startswith("2.15")
    pointer = root / "current"
    os.unlink(pointer)
    pointer.symlink_to(bundle / "torch_releases.json")  # a link envcheck did not make
    assert "TBL003" in envcheck("check", "--no-deep", env=cache).stdout


def test_the_age_finding_says_how_old_and_how_to_refresh(cache):
    t = load_tables()
    as_of = t.files["torch_releases"].as_of
    late = int(time.mktime(time.strptime(as_of, "%Y-%m-%d"))) + 86400 * (t.refresh_after_days + 10)
    run = envcheck("check", "--no-deep", env=dict(cache, SOURCE_DATE_EPOCH=str(late)))
    assert "TBL002" in run.stdout and "envcheck tables update" in run.stdout, run.stdout
    assert f"torch releases as of {as_of}" in run.stdout
    assert "TBL002" not in envcheck("check", "--no-deep", env=cache).stdout
