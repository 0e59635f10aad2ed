"""envcheck in notebooks: a hosted runtime (Colab, Kaggle) is detected into Facts and its fixes
never ask for a driver upgrade; ``envcheck.check()`` as a cell's last line shows a card. The
card is checked in a real Jupyter kernel (ipykernel run by nbclient, as Jupyter runs it) and
its screenshot in headless Chromium on a dark page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from envcheck.probes.system import detect_hosted
from envcheck.report import html
from envcheck.report.notebook import notebook_command
from tests.fixtures import profile, report_of
from tests.test_html_report import near, screenshot

# A Colab T4 runtime whose driver runs CUDA 12.x, with a cu130 torch installed over it.
COLAB_T4 = {
    "COLAB_RELEASE_TAG": "release-colab-20261201-060000-RC00",
    "ENVCHECK_FACT_PYTHON_VERSION": "3.12.12",  # Colab's, whichever Python runs the test
    "ENVCHECK_GPUS": "Tesla T4:7.5:15GiB",
    "ENVCHECK_DRIVER_VERSION": "535.104.05",
    "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
    "ENVCHECK_FACT_TORCH_INSTALLED": "true",
    "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cu130",
    "ENVCHECK_FACT_TORCH_CUDA": "13.0",
}


@pytest.mark.parametrize(
    "environ, folder, host",
    [
        ({"COLAB_RELEASE_TAG": "release-colab-x"}, None, "colab"),
        ({"COLAB_GPU": "1"}, None, "colab"),
        ({"KAGGLE_KERNEL_RUN_TYPE": "Interactive"}, None, "kaggle"),
        ({}, "kaggle/working", "kaggle"),
        ({"HOME": "/root"}, "content", None),  # a /content folder alone is not Colab
    ],
)
def test_hosted_runtimes_are_detected(tmp_path, environ, folder, host):
    if folder:
        (tmp_path / folder).mkdir(parents=True)
    assert detect_hosted(tmp_path, environ) == host


def test_a_hosted_runtime_is_never_told_to_upgrade_its_driver():
    facts = profile("h100-server")
    facts.nvidia.driver_version, facts.nvidia.cuda_driver_version = "535.104.05", "12.2"
    facts.torch.version, facts.torch.cuda = "2.13.0+cu130", "13.0"
    desk = next(f for f in report_of(facts).findings if f.code == "DRV001")
    facts.system.hosted = "colab"
    hosted = next(f for f in report_of(facts).findings if f.code == "DRV001")
    assert "Upgrade the NVIDIA driver" in (desk.fix or "")
    assert "Upgrade the NVIDIA driver" not in (hosted.fix or "")
    assert "Colab runtime brings its own NVIDIA driver" in (hosted.fix or "")
    # the same build the plan installs, whichever machine it is
    assert hosted.command == desk.command and "+cu12" in (hosted.command or "")


KERNEL = "/opt/conda/bin/python3.11"


@pytest.mark.parametrize(
    "command, cell",
    [
        (  # the kernel's own interpreter: %pip installs into it
            f"{KERNEL} -m pip install torch==2.13.0+cu126 --index-url U",
            "%pip install torch==2.13.0+cu126 --index-url U",
        ),
        (  # another interpreter (envcheck.check(python=...)): %pip would install into the kernel
            "/srv/venv/bin/python3.12 -m pip install torch",
            "!/srv/venv/bin/python3.12 -m pip install torch",
        ),
        ("'/my dir/bin/python' -m pip install torch", "!'/my dir/bin/python' -m pip install torch"),
        ("ipython -m pip install torch", "!ipython -m pip install torch"),
        ("pip install torch; echo done", "!pip install torch; echo done"),
        ("python3 -m pip install torch", "%pip install torch"),
        ("pip install torch==2.13.0", "%pip install torch==2.13.0"),
        ("conda install -c pytorch pytorch", "%conda install -c pytorch pytorch"),
        (
            "uv pip install torch --torch-backend cu126",
            "!uv pip install torch --torch-backend cu126",
        ),
        (
            "python -m venv .venv && .venv/bin/python -m pip install torch",
            "!python -m venv .venv && .venv/bin/python -m pip install torch",
        ),
    ],
)
def test_commands_are_written_as_a_notebook_cell_runs_them(command, cell):
    assert notebook_command(command, kernel=KERNEL) == cell


def test_ipython_shows_a_report_facts_and_advice_as_cards():
    from IPython.core.interactiveshell import InteractiveShell

    from envcheck.notebook import register

    shell = InteractiveShell.instance()
    shell.display_formatter.active_types = list(shell.display_formatter.formatters)
    assert register(shell)
    facts = profile("h100-server")
    facts.torch.version, facts.torch.cuda = "2.13.0+cpu", None  # a CPU build on a GPU server
    facts.python.executable = sys.executable  # the kernel's interpreter is the one checked
    report = report_of(facts)
    data, _ = shell.display_formatter.format(report)
    assert {"text/html", "text/markdown", "text/plain"} <= set(data)
    assert "envcheck check: not ready" in data["text/html"] and "<script" not in data["text/html"]
    assert "TRC001" in data["text/html"] and "%pip install torch==" in data["text/html"]
    assert data["text/plain"].startswith("envcheck ") and "TRC001" in data["text/plain"]
    assert report.install is not None
    advice, _ = shell.display_formatter.format(report.install)
    assert "%pip install torch==" in advice["text/html"]
    shown, _ = shell.display_formatter.format(report.facts)
    assert "NVIDIA H100" in shown["text/html"] and "<table" in shown["text/html"]


def run_notebook(tmp_path: Path, source: str) -> dict:
    """Execute one cell in a real Jupyter kernel; its execute_result's data."""
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(
        book, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    results = [o for o in book.cells[0].outputs if o.output_type == "execute_result"]
    assert results, json.dumps(book.cells[0].outputs)[:2000]
    return dict(results[0]["data"])


@pytest.mark.slow  # a Jupyter kernel
def test_a_jupyter_kernel_shows_the_verdict_card(tmp_path, monkeypatch):
    for key, value in COLAB_T4.items():
        monkeypatch.setenv(key, value)
    data = run_notebook(tmp_path, "import envcheck\nenvcheck.check(deep=False)")
    card = data["text/html"]
    assert card.startswith('<div class="envcheck-card">') and "<script" not in card.lower()
    assert "envcheck check: not ready" in card and "DRV001" in card
    assert "Colab runtime brings its own NVIDIA driver" in card
    assert "%pip install torch==2.13.0+cu126" in card  # the kernel's pip, the driver's build
    assert "http://" not in card and "src=" not in card  # nothing to fetch
    # The card on a dark notebook page: its own light background, the red verdict band
    page = (
        '<!DOCTYPE html><html><body style="background:#111;color:#eee;margin:0;padding:40px">'
        f"{card}</body></html>"
    )
    rows = screenshot(page, tmp_path, width=900, height=700)
    assert near(rows[10][10], "#111111"), rows[10][10]  # the notebook's dark page
    assert near(rows[55][450], html.RED), rows[55][450]  # the verdict band
    body = [p for row in rows[200:400] for p in row[60:840]]
    light = sum(near(p, "#ffffff") for p in body) / len(body)
    assert light > 0.5, light  # the findings sit on the card's own light background
    dark_text = sum(max(p) < 100 for p in body) / len(body)
    assert dark_text > 0.005, dark_text  # and their text is dark on it: readable
