"""`--format html`: one self-contained page (findings, facts, smoke charts, GPU topology, the
compatibility grid), checked for what it contains and, where Chromium is installed, by
rendering it in a real headless browser and reading the screenshot's pixels.

CI installs Chromium (Debian's package) and sets ENVCHECK_REQUIRE_CHROMIUM=1, so there the
browser tests fail rather than skip when it cannot run.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

from envcheck.facts import Facts, GpuFacts
from envcheck.install import Wish, resolve
from envcheck.install.grid import CPU_ONLY, FITS, compat_grid
from envcheck.install.reasons import DRIVER, KERNELS, NO_WHEEL, UNKNOWN
from envcheck.probes.nvidia import probe_nvidia
from envcheck.report import html
from envcheck.report.formats import render
from envcheck.smoke.runner import SmokeResult
from envcheck.values import ComputeCapability
from tests.fake_nvml import MACHINES, make_nvml
from tests.fixtures import TABLES, profile, report_of

ROOT = Path(__file__).resolve().parent.parent
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "wbr", "source"}


# --------------------------------------------------------------------------- pages to test


def gpu_machine(name: str = "4xA100-link-down") -> Facts:
    """A Linux GPU server: the h100-server profile's system and Python, the GPUs, driver and
    topology from a fake NVML (the true boundary)."""
    facts = profile("h100-server")
    facts.nvidia = probe_nvidia(Path("/nonexistent"), make_nvml(MACHINES[name]))
    return facts


def smoke_results(world: int) -> List[SmokeResult]:
    sizes = [
        {"bytes": 4 * 4**i * 1024, "iters": 20, "time_us": 10.0, "algbw_gbps": b, "busbw_gbps": b}
        for i, b in enumerate([0.5, 2.0, 8.0, 30.0, 70.0, 90.0, 95.0])
    ]
    matmul = [
        SmokeResult(
            "matmul",
            f"cuda:{i}",
            "passed",
            1.2,
            {
                "bfloat16_tflops": 250.0 - 40 * i,
                "bfloat16_tflops_min": 240.0 - 40 * i,
                "bfloat16_tflops_max": 255.0 - 40 * i,
                "bfloat16_repeats": 9,
            },
        )
        for i in range(world)
    ]
    reduce = SmokeResult(
        "all_reduce",
        f"nccl x{world}",
        "passed",
        3.0,
        {"world_size": world, "backend": "nccl", "sizes": sizes},
    )
    return [*matmul, reduce]


def envcheck(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real CLI in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "envcheck", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def page(facts: Facts, **kwargs) -> str:
    report = report_of(facts, grid=True, **kwargs)
    return render(report, "html")


class Tree(HTMLParser):
    """Every element with its attributes, and whether the tags balance."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: List[str] = []
        self.errors: List[str] = []
        self.elements: List[Tuple[str, Dict[str, Optional[str]]]] = []
        self.text: List[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data) -> None:
        self.text.append(data)


def parse(text: str) -> Tree:
    tree = Tree()
    tree.feed(text)
    tree.close()
    assert not tree.errors, tree.errors[:5]
    assert not tree.stack, f"unclosed: {tree.stack}"
    return tree


def ids(tree: Tree) -> Set[str]:
    return {a["id"] or "" for _, a in tree.elements if "id" in a}


# --------------------------------------------------------------------------- structure


def test_page_has_every_part_and_balanced_tags() -> None:
    text = page(gpu_machine("8xH100-NVSwitch"), smoke=smoke_results(8))
    tree = parse(text)
    assert text.startswith("<!DOCTYPE html>")
    assert {"verdict", "findings", "smoke", "topology", "grid", "facts"} <= ids(tree)
    words = " ".join(tree.text)
    # the matmul bars, one per device, and the busbw curve with the expected line
    svgs = [a for t, a in tree.elements if t == "svg"]
    assert [s["aria-label"] for s in svgs] == [
        "matmul TFLOP/s per device and dtype",
        "all_reduce busbw by message size",
    ]
    assert sum(1 for t, a in tree.elements if t == "rect") == 8
    assert sum(1 for t, a in tree.elements if t == "circle") == 7
    assert "expected: " in words and "NVLink" in words  # the topology gave a figure
    assert "SMK004 below" in words


def test_a_link_down_is_shown_and_no_expected_line_is_guessed() -> None:
    words = " ".join(parse(page(gpu_machine(), smoke=smoke_results(4))).text)
    assert "LNK006" in words and "NVLink links are down" in words
    assert "expected busbw: not known (a mix of NVLink and PCIe paths" in words
    assert "SMK004 below" not in words


def test_topology_matrix_marks_nvlink_pcie_and_no_p2p() -> None:
    text = page(gpu_machine("2xRTX3090-no-p2p"))
    parse(text)
    section = text.split('id="topology"')[1].split("</section>")[0]
    assert "!" in section and html.RED in section  # consumer GPUs without P2P, in red
    a100 = page(gpu_machine()).split('id="topology"')[1].split("</section>")[0]
    assert "NV4" in a100 and "PHB" in a100  # GPU1 <-> GPU2 lost their NVLinks


def test_no_external_reference_of_any_kind() -> None:
    """Viewable offline: no script, stylesheet, image, font, frame or link to fetch."""
    text = page(gpu_machine(), smoke=smoke_results(4))
    tree = parse(text)
    tags = {t for t, _ in tree.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "image", "use"}
    for tag, attrs in tree.elements:
        for name, value in attrs.items():
            if name in ("src", "href", "srcset", "action", "poster", "data"):
                pytest.fail(f"<{tag} {name}={value!r}>")
            if name == "xmlns":
                assert value == "http://www.w3.org/2000/svg"  # a namespace, never fetched
    assert "url(" not in text and "@import" not in text


def test_text_from_the_machine_is_escaped() -> None:
    facts = gpu_machine()
    facts.nvidia.gpus[0] = GpuFacts(
        index=0,
        name='<script>alert("x")</script> & <b>',
        compute_capability=ComputeCapability.parse("8.0"),
    )
    text = page(facts)
    assert "<script" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;" in text
    parse(text)


def test_diagnose_renders_a_pasted_report_as_html(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text(
        "PyTorch version: 2.7.0+cu128\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1080 Ti\n"
        "UserWarning: NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible "
        "with the current PyTorch installation. <img src=x onerror=alert(1)>\n"
    )
    run = envcheck(ROOT, "diagnose", "--format", "html", str(report))
    assert run.returncode == 1, run.stderr
    tree = parse(run.stdout)
    assert not any(t == "img" for t, _ in tree.elements)
    assert "sm_61" in run.stdout
    assert "grid" not in ids(tree)  # a grid for a guessed machine: never
    said = " ".join(tree.text)
    assert "Not in the text:" in said and "No install command" in said


def test_check_cli_writes_the_page(tmp_path: Path) -> None:
    run = envcheck(tmp_path, "check", "--no-deep", "--format", "html")
    assert run.returncode in (0, 1), run.stderr
    tree = parse(run.stdout)
    assert {"verdict", "grid", "facts"} <= ids(tree)


# --------------------------------------------------------------------------- the grid


def test_grid_cells_agree_with_the_resolver() -> None:
    """Every cell is what `envcheck install --torch X --variant V` plans (one decision)."""
    for name in ("gtx1080-cu128", "old-laptop-new-build", "h100-server", "windows-cpu-default"):
        facts = profile(name)
        grid = compat_grid(facts, TABLES)
        assert grid.torches and grid.variants
        for torch in grid.torches:
            for variant in grid.variants:
                cell = grid.cell(torch, variant)
                plan = resolve(facts, TABLES, Wish(torch=torch, variant=variant, companions=()))
                if not plan.ok:
                    assert cell.state == plan.blocker, (name, torch, variant, plan.conflicts)
                elif plan.unverified:
                    assert cell.state == UNKNOWN
                else:
                    assert cell.state in (FITS, CPU_ONLY)
                    assert cell.torch == plan.torch


def test_grid_states_on_known_machines() -> None:
    old_gpu = compat_grid(profile("gtx1080-cu128"), TABLES)  # sm_61: cu128 has no kernels
    assert old_gpu.cell("2.8", "cu128").state == KERNELS
    assert old_gpu.cell("2.8", "cu126").state == FITS
    assert old_gpu.cell("2.8", "cpu").state == CPU_ONLY
    old_driver = compat_grid(profile("old-laptop-new-build"), TABLES)
    assert old_driver.cell("2.8", "cu126").state == DRIVER
    assert "driver" in old_driver.cell("2.8", "cu126").why
    newest = old_driver.torches[0]
    assert any(old_driver.cell(newest, v).state == NO_WHEEL for v in old_driver.variants)
    windows = compat_grid(profile("windows-cpu-default"), TABLES)
    assert windows.cell("2.8", "cu128").state == UNKNOWN  # the tables lack its Windows builds
    mac = compat_grid(profile("intel-mac"), TABLES)
    assert mac.variants == ("cpu",)
    assert {mac.cell(t, "cpu").state for t in mac.torches} == {NO_WHEEL}
    cpu_box = Facts.from_json(profile("h100-server").to_json())
    cpu_box.nvidia.gpus = []
    cpu_box.nvidia.device_nodes = []
    cpu_box.nvidia.driver_version = None
    plain = compat_grid(cpu_box, TABLES)
    assert plain.variants == ("cpu",)
    assert any("no NVIDIA GPU" in n for n in plain.notes)


def test_a_driver_the_tables_cannot_judge_is_not_a_fit() -> None:
    facts = Facts.from_json(profile("h100-server").to_json())
    facts.nvidia.driver_version = None
    facts.nvidia.cuda_driver_version = None
    plan = resolve(facts, TABLES, Wish(torch="2.8", variant="cu126", companions=()))
    assert plan.ok and any("whether the driver runs CUDA 12.6" in u for u in plan.unverified)
    grid = compat_grid(facts, TABLES)
    assert grid.cell("2.8", "cu126").state == UNKNOWN


# --------------------------------------------------------------------------- in a real browser


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("ENVCHECK_REQUIRE_CHROMIUM") == "1":
            pytest.fail("Chromium is required here (ENVCHECK_REQUIRE_CHROMIUM=1) but not installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def screenshot(
    text: str, folder: Path, width: int = 1200, height: int = 2400
) -> List[List[Tuple[int, int, int]]]:
    """Render the page in headless Chromium (no network: the page must not need one) and
    return the screenshot as rows of RGB pixels."""
    source, shot = folder / "report.html", folder / "shot.png"
    source.write_text(text, encoding="utf-8")
    run = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={folder / 'profile'}",
            "--proxy-server=127.0.0.1:9",  # any fetch would fail: the page must not need one
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            source.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), run.stderr[-2000:]
    return decode_png(shot.read_bytes())


def decode_png(data: bytes) -> List[List[Tuple[int, int, int]]]:
    """An 8-bit RGB or RGBA PNG (what Chromium writes) as rows of (r, g, b)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, color = header[:4]
    assert depth == 8 and color in (2, 6), header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: List[List[Tuple[int, int, int]]] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            corner = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * channels : x * channels + 3]) for x in range(width)])  # type: ignore[misc]
        prev = line
    return rows


def rgb(color: str) -> Tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def near(pixel: Tuple[int, int, int], color: str, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, rgb(color)))


def share(rows: List[List[Tuple[int, int, int]]], color: str) -> float:
    pixels = [p for row in rows[::2] for p in row[::2]]
    return sum(near(p, color) for p in pixels) / len(pixels)


@pytest.mark.slow
def test_chromium_renders_a_not_ready_gpu_server(tmp_path: Path) -> None:
    facts = gpu_machine()
    facts.torch.version = "2.8.0+cpu"  # a CPU wheel on a GPU server: an error
    rows = screenshot(page(facts, smoke=smoke_results(4)), tmp_path)
    top = rows[20][600]
    assert near(top, html.RED), top  # the verdict band: not ready
    assert share(rows, html.BLUE) > 0.002  # the matmul bars and the busbw curve were drawn
    assert share(rows, html.GRID["fits"]) > 0.002  # grid cells and NVLink cells that fit
    assert share(rows, html.GRID["driver"]) > 0.002  # cu13x builds: driver 535 too old
    assert share(rows, html.GRID["no_wheel"]) > 0.001
    # the page has content all the way down: not a blank or an error page
    assert len({p for p in rows[len(rows) // 2]}) > 3


def test_chromium_renders_a_ready_cpu_machine(tmp_path: Path) -> None:
    facts = Facts.from_json(profile("h100-server").to_json())
    facts.nvidia.gpus, facts.nvidia.device_nodes, facts.nvidia.driver_version = [], [], None
    facts.torch.version = "2.8.0+cpu"
    report = report_of(facts, grid=True)
    rows = screenshot(render(report, "html"), tmp_path, height=900)
    color = html.GREEN if report.ready else html.RED
    assert near(rows[20][600], color), rows[20][600]
    assert not near(rows[20][600], html.RED if report.ready else html.GREEN)


def test_an_output_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    """--junit (and smoke --html) are checked by envcheck._outfile: a symbolic link planted at
    the path is refused before the run (a usage error), and the file it points to is left
    as it was."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out.xml").symlink_to(victim)
    run = envcheck(tmp_path, "check", "--no-deep", "--junit", "out.xml")
    assert run.returncode == 2, run.stderr
    assert "symbolic link" in run.stderr and "Traceback" not in run.stderr
    assert victim.read_text() == "keep me"
    (tmp_path / "plain.xml").write_text("old")
    run = envcheck(tmp_path, "check", "--no-deep", "--junit", "plain.xml")
    assert run.returncode in (0, 1), run.stderr
    assert (tmp_path / "plain.xml").read_text().startswith("<?xml")
