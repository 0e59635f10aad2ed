"""The shipped installers table against the real uv: every --torch-backend value the
table says uv accepts, uv accepts (a command envcheck prints must run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.tables import load_tables

UV = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
SHIPPED = load_tables()


def _accepts(backend: str) -> subprocess.CompletedProcess:
    """uv parses --torch-backend before it resolves: with nothing to resolve and no
    index, this never touches the network."""
    assert UV is not None
    return subprocess.run(
        [UV, "pip", "compile", "--no-index", "--quiet", f"--torch-backend={backend}", "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_every_backend_in_the_table_is_accepted_by_uv() -> None:
    refused = {b: _accepts(b).stderr.strip() for b in SHIPPED.uv_torch_backends}
    refused = {b: why for b, why in refused.items() if why}
    assert refused == {}


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_uv_refuses_a_value_outside_the_table() -> None:
    """The probe above can fail: uv does refuse what it does not know."""
    out = _accepts("cu999")
    assert out.returncode != 0 and "invalid value 'cu999'" in out.stderr


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_the_refresh_tool_reads_uv_s_list() -> None:
    """tools/uv_torch_backends.py is how the table is refreshed: it reads uv's own list
    (a newer uv may list more than the table; that is a refresh, not a failure)."""
    tool = Path(__file__).resolve().parents[1] / "tools" / "uv_torch_backends.py"
    out = subprocess.run(
        [sys.executable, str(tool), UV or "uv"], capture_output=True, text=True, check=True
    )
    read = json.loads(out.stdout)["values"]
    assert {"auto", "cpu", "cu126"} <= set(read)
    assert set(SHIPPED.uv_torch_backends) <= set(read)
