"""Facts as a terminal report a person reads at a glance.

It reports, it does not judge: whether a CPU-only torch on this machine is a
problem is for the checks to say. Failures of the probe itself (NVML errors, a
torch import that crashed) are shown in red because they are facts the reader
must not miss.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .. import builds
from ..compat import TorchLabel, torch_label
from ..facts import (
    Facts,
    GpuFacts,
    GpuStatus,
    NvidiaFacts,
    RuntimeStatus,
    SystemFacts,
    TorchFacts,
    TorchRuntimeFacts,
)
from .style import Style, size
from .wrap import heading, terminal_width, wrap

if TYPE_CHECKING:
    from ..tables.model import LinkTable, Tables

_NVML_ERRORS = {
    "library_not_found": "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver here",
    "driver_not_loaded": "the NVIDIA kernel module is not loaded",
    "lib_rm_version_mismatch": "Driver/library version mismatch (driver upgraded without reboot?)",
    "no_permission": "no permission to talk to the driver",
    "gpu_is_lost": "a GPU has fallen off the bus",
    "unknown": "NVML reported an unknown error",
    "timeout": "NVML did not answer (hung driver or GPU)",
    "crashed": "the NVIDIA driver library crashed",
    "no_answer": "NVML ended without answering",
    "bindings_missing": "nvidia-ml-py is not importable",
}
_LABEL_WIDTH = 12

Row = Tuple[str, str]


def render_facts(
    facts: Facts,
    color: bool = False,
    width: Optional[int] = None,
    link_table: Optional[LinkTable] = None,
    tables: Optional[Tables] = None,
) -> str:
    """The probe's facts, every line fitted to ``width`` (default: the terminal's).
    ``link_table`` names PCIe generations ("Gen4"); without it a link shows its GT/s.
    ``tables``: what torch's labelled files beside its plain metadata mean (compat.torch_label,
    the decision INS002 makes); without them that is said to be not known."""
    s = Style(color)
    width = terminal_width() if width is None else width
    title = f"envcheck {facts.envcheck_version} probe"
    when = facts.collected_at.replace("T", " ").replace("+00:00", " UTC")
    top = heading(title, [when], width)
    lines = [top[0].replace(title, s(title, "bold"), 1), *top[1:]]
    if facts.overrides:
        overridden = "overridden from the environment: " + ", ".join(facts.overrides)
        lines += [s(line, "yellow") for line in wrap(overridden, width, rest="  ")]
    torch_files = torch_label(facts, tables)
    for section, rows in fact_sections(facts, s, link_table, torch_files):
        lines.append("")
        lines.append(s(section, "bold"))
        for label, value in rows:
            lead = "  " + label.ljust(_LABEL_WIDTH)
            row = wrap(value, width, first=lead, rest=" " * len(lead))
            row[0] = "  " + s(label.ljust(_LABEL_WIDTH), "cyan") + row[0][len(lead) :]
            lines += row
    return "\n".join(lines) + "\n"


def fact_sections(
    facts: Facts,
    s: Style,
    link_table: Optional[LinkTable] = None,
    label: Optional[TorchLabel] = None,
) -> List[Tuple[str, List[Row]]]:
    """The facts as (section, [(label, value)]): the probe's text and the HTML report show
    the same rows. ``label``: compat.torch_label's answer for these facts (the report's)."""
    sections = [
        ("System", _system(facts.system)),
        ("Python", _python(facts)),
        ("NVIDIA", _nvidia(facts.nvidia, s, link_table)),
        *([("AMD", _amd(facts))] if facts.amd.gpus else []),
        ("PyTorch", _torch(facts.torch, facts.torch_runtime, s, label)),
        ("CUDA toolkit", _toolkit(facts)),
        ("Environment", _environment(facts)),
    ]
    if facts.probe_errors:
        sections.append(
            ("Probe errors", [(e.step, s(e.message, "red")) for e in facts.probe_errors])
        )
    return sections


def _join(*parts: Optional[str]) -> str:
    return ", ".join(p for p in parts if p)


def _system(sysf: SystemFacts) -> List[Row]:
    osname = sysf.distro_name or _join(sysf.os, sysf.os_version)
    rows: List[Row] = [
        (
            "OS",
            _join(
                osname,
                f"kernel {sysf.kernel}" if sysf.kernel and sysf.os == "Linux" else None,
                f"glibc {sysf.glibc}" if sysf.glibc else None,
                sysf.machine,
                f"WSL {sysf.wsl}" if sysf.wsl else None,
            ),
        )
    ]
    if sysf.hostname:
        rows.append(("Host", sysf.hostname))
    if sysf.os == "Linux":
        cg = sysf.cgroup
        limits = _join(
            f"cgroup v{cg.version}" if cg.version else None,
            f"CPU quota {cg.cpu_quota:g}" if cg.cpu_quota else "no CPU quota",
            f"memory limit {size(cg.memory_limit)}" if cg.memory_limit else "no memory limit",
        )
        rows.append(("Container", f"{sysf.container or 'none detected'} ({limits})"))
    if sysf.hosted:
        rows.append(("Hosted notebook", f"{sysf.hosted} (its runtime brings the driver)"))
    cpus = _join(
        f"{sysf.cpus_logical} logical" if sysf.cpus_logical else None,
        f"{sysf.cpus_physical} physical" if sysf.cpus_physical else None,
        f"{sysf.cpus_affinity} usable" if sysf.cpus_affinity else None,
    )
    rows.append(("CPU", f"{sysf.cpu_model}: {cpus}" if sysf.cpu_model else cpus or "?"))
    rows.append(
        ("Memory", f"{size(sysf.memory_total)} total, {size(sysf.memory_available)} available")
    )
    if sysf.shm_total is not None:
        rows.append(("/dev/shm", f"{size(sysf.shm_total)}, {size(sysf.shm_free)} free"))
    for disk in sysf.disks:
        rows.append(("Disk", f"{disk.path}: {size(disk.free)} free of {size(disk.total)}"))
    return rows


def _python(facts: Facts) -> List[Row]:
    py = facts.python
    bits = f", {py.bits}-bit" if py.bits else ""
    env = py.env_kind if py.env_kind != "none" else "no virtual environment"
    if py.env_name:
        env += f" {py.env_name!r}"
    if py.env_tool and py.env_tool != "conda":
        env += f" ({py.env_tool})"
    details = [env, f"pip {py.pip_version}" if py.pip_version else "no pip"]
    if py.externally_managed:
        details.append("externally managed (PEP 668)")
    rows: List[Row] = [
        ("Interpreter", f"{py.version} ({py.implementation}{bits}) {py.executable}"),
        ("Environment", ", ".join(details)),
    ]
    if py.chosen_because:
        rows.append(("Chosen as", py.chosen_because))
    if py.python_h is not None:
        rows.append(("Python.h", f"{'found' if py.python_h else 'MISSING'} in {py.include_dir}"))
    active = facts.environment.get("VIRTUAL_ENV")
    if active and py.prefix and active.rstrip("/\\") != py.prefix.rstrip("/\\"):
        exe = "Scripts\\python.exe" if facts.system.os == "Windows" else "bin/python"
        rows.append(
            (
                "Note",
                f"the active venv is {active}, not this one: to check it, run\n"
                f"envcheck probe --python {active.rstrip('/')}/{exe}",
            )
        )
    return rows


def _nvidia(nv: NvidiaFacts, s: Style, link_table: Optional[LinkTable]) -> List[Row]:
    rows: List[Row] = []
    if nv.driver_version:
        driver = nv.driver_version + s(f" (from {nv.driver_version_source})", "dim")
        if nv.cuda_driver_version:
            driver += f", supports CUDA {nv.cuda_driver_version}"
        if nv.kernel_module:
            driver += f", {nv.kernel_module} kernel module"
        rows.append(("Driver", driver))
    else:
        nodes = "no /dev/nvidia* devices" if not nv.device_nodes else ", ".join(nv.device_nodes)
        rows.append(("Driver", f"not found ({nodes})"))
    if nv.nvml.ok:
        rows.append(("NVML", f"ok, version {nv.nvml.version}" if nv.nvml.version else "ok"))
    else:
        meaning = _NVML_ERRORS.get(nv.nvml.error or "", nv.nvml.error or "failed")
        color = "dim" if nv.nvml.error == "library_not_found" and not nv.device_nodes else "red"
        rows.append(("NVML", s(f"{meaning} [{nv.nvml.message}]", color)))
    if not nv.gpus:
        rows.append(("GPUs", "none seen"))
    for gpu in nv.gpus:
        rows.append((f"GPU {gpu.index}", _gpu(gpu, s, link_table)))
    if any(p.path or p.p2p_read for p in nv.pairs):
        rows.append(("Topology", topology_matrix(nv)))
    return rows


def pcie_link(
    speed: Optional[float], width: Optional[int], link_table: Optional[LinkTable] = None
) -> Optional[str]:
    """16.0 GT/s, 16 lanes -> "Gen4 x16": the generation as links.json gives it (the one
    place that maps transfer rates to generations); "16 GT/s x16" for a rate it lacks."""
    if speed is None and width is None:
        return None
    lane = link_table.pcie_lane(speed) if link_table is not None and speed else None
    gen = f"Gen{lane[0]}" if lane else f"{speed:g} GT/s" if speed else "?"
    return f"{gen} x{width}" if width else gen


def topology_cells(nv: NvidiaFacts) -> Dict[Tuple[int, int], str]:
    """(a, b) -> the word of ``nvidia-smi topo -m`` for the pair, both ways round: NV<links>,
    PIX, PXB, PHB, NODE, SYS, "?" when NVML did not say; "!" appended when the pair has no
    P2P (NVML's read or write status not ok) and talks over PCIe."""
    cell: Dict[Tuple[int, int], str] = {}
    for p in nv.pairs:
        word = f"NV{p.nvlinks}" if p.path == "NV" and p.nvlinks else (p.path or "?")
        if any(x not in (None, "ok") for x in (p.p2p_read, p.p2p_write)) and p.path != "NV":
            word += "!"
        cell[(p.a, p.b)] = cell[(p.b, p.a)] = word
    return cell


def topology_matrix(nv: NvidiaFacts) -> str:
    """The GPU x GPU matrix of ``nvidia-smi topo -m``: NV<links>, PIX, PXB, PHB, NODE, SYS; a
    pair without P2P is marked with "!" (NVML's P2P read or write not ok)."""
    cell = topology_cells(nv)
    ids = [g.index for g in nv.gpus]
    lines = ["      " + "".join(f"{'GPU' + str(i):>7}" for i in ids)]
    for i in ids:
        row = "".join(f"{('X' if i == j else cell.get((i, j), '?')):>7}" for j in ids)
        lines.append(f"{'GPU' + str(i):6}{row}")
    if any(c.endswith("!") for c in cell.values()):
        lines.append("! = no peer-to-peer between the two (LNK004)")
    return "\n".join(lines)


def _amd(facts: Facts) -> List[Row]:
    rows: List[Row] = []
    if facts.amd.driver_version:
        rows.append(("Driver", f"amdgpu {facts.amd.driver_version}"))
    for gpu in facts.amd.gpus:
        rows.append(
            (
                f"GPU {gpu.index}",
                _join(gpu.gfx, f"device {gpu.device_id}" if gpu.device_id else None),
            )
        )
    return rows


def _gpu(gpu: GpuFacts, s: Style, link_table: Optional[LinkTable]) -> str:
    if gpu.status == GpuStatus.LOST:
        return s(f"{gpu.name or 'unknown GPU'}: LOST ({'; '.join(gpu.errors.values())})", "red")
    cc = gpu.compute_capability.sm if gpu.compute_capability else None
    memory = None
    if gpu.memory_total is not None:
        memory = size(gpu.memory_total)
        if gpu.memory_used is not None:
            memory += f" ({size(gpu.memory_used)} used)"
    head = _join(
        gpu.name,
        cc,
        memory,
        f"{gpu.temperature_c} C" if gpu.temperature_c is not None else None,
        f"MIG on, {gpu.mig_devices} instances" if gpu.mig_mode else None,
        "ECC on" if gpu.ecc_mode else ("ECC off" if gpu.ecc_mode is False else None),
        "persistence on" if gpu.persistence_mode else None,
    )
    links = []
    if gpu.pcie is not None:
        now = pcie_link(gpu.pcie.speed_current, gpu.pcie.width_current, link_table)
        top = pcie_link(gpu.pcie.speed_max, gpu.pcie.width_max, link_table)
        links.append(f"PCIe {now}" + (f" (max {top})" if top and top != now else ""))
        if gpu.pcie.numa_node is not None:
            links.append(f"NUMA node {gpu.pcie.numa_node}")
    if gpu.nvlinks:
        active = [link for link in gpu.nvlinks if link.active]
        versions = sorted({link.version for link in active if link.version})
        gen = f" NVLink {'/'.join(map(str, versions))}" if versions else " NVLinks"
        links.append(f"{len(active)} of {len(gpu.nvlinks)}{gen} links up")
    if gpu.cpu_affinity:
        links.append(f"CPUs {gpu.cpu_affinity}")
    if links:
        head += "\n" + ", ".join(links)
    notes = []
    if gpu.ecc_uncorrected_volatile:
        notes.append(f"{gpu.ecc_uncorrected_volatile} uncorrectable ECC errors")
    if gpu.row_remap_failure:
        notes.append("row remapping failed")
    if gpu.row_remap_pending or gpu.retired_pages_pending:
        notes.append("memory repair pending a GPU reset")
    notes.extend(f"{query}: {err}" for query, err in gpu.errors.items())
    return "\n".join([head, *[s(n, "red") for n in notes]])


def _torch(
    t: TorchFacts, rt: TorchRuntimeFacts, s: Style, label: Optional[TorchLabel] = None
) -> List[Row]:
    if not t.installed:
        rows: List[Row] = [("torch", "not installed")]
    else:
        build = builds.describe(t.version, t.cuda, t.hip, t.xpu)
        installer = f", installed by {t.installer}" if t.installer else ""
        rows = [("torch", f"{t.version} ({build}{installer})\n{s(t.location or '', 'dim')}")]
        if label is not None:
            said = f"metadata says {t.dist_version}: " + (
                "mixed files? " if label.agree is False else ""
            )
            colour = {True: "dim", False: "red", None: "yellow"}[label.agree]
            rows.append(("", s(said + label.why, colour)))
    if len(t.installs) > 1:
        found = "; ".join(f"{d.version} in {d.location}" for d in t.installs)
        rows.append(("Installs", s(f"{len(t.installs)} copies: {found}", "yellow")))
    if t.companions:
        rows.append(("Companions", "\n".join(f"{p.name} {p.version}" for p in t.companions)))
    elif t.installed:
        rows.append(("Companions", "none installed"))
    if t.conda_packages:
        rows.append(
            (
                "Conda",
                "\n".join(f"{p.name} {p.version} ({p.build})" for p in t.conda_packages),
            )
        )
    rows.extend(_runtime(rt, s))
    return rows


def _runtime(rt: TorchRuntimeFacts, s: Style) -> List[Row]:
    if rt.status == RuntimeStatus.SKIPPED:
        return [("Import", s("not tried (--no-deep)", "dim"))]
    if rt.status == RuntimeStatus.NOT_INSTALLED:
        return []
    if rt.status != RuntimeStatus.OK:
        took = f" after {rt.duration_s:.2f} s" if rt.duration_s is not None else ""
        return [("Import", s(f"{rt.status.replace('_', ' ')}{took}: {rt.error}", "red"))]
    if rt.cuda_available:
        cuda = f"CUDA available, {rt.device_count} device(s)"
    elif rt.cuda or rt.hip:
        why = f": {rt.cuda_warnings[0]}" if rt.cuda_warnings else ""
        cuda = s(f"CUDA not available{why}", "yellow")
    else:
        cuda = "no CUDA in this build"
    rows: List[Row] = [
        (
            "Import",
            _join(
                f"ok in {rt.duration_s:.2f} s" if rt.duration_s is not None else "ok",
                cuda,
                f"CPU {rt.cpu_capability}" if rt.cpu_capability else None,
                f"{rt.num_threads} threads" if rt.num_threads else None,
            ),
        )
    ]
    for dev in rt.devices:
        rows.append(
            (
                f"cuda:{dev.index}",
                _join(dev.name, f"capability {dev.capability}", size(dev.memory_total)),
            )
        )
    if rt.arch_list:
        rows.append(("Arch list", " ".join(str(a) for a in rt.arch_list)))
    libs = _join(
        f"cuDNN {rt.cudnn_version}" if rt.cudnn_version else None,
        f"NCCL {rt.nccl_version}" if rt.nccl_version else None,
        "bf16" if rt.bf16_supported else None,
        "MPS available" if rt.mps_available else None,
        "XPU available" if rt.xpu_available else None,
    )
    if libs:
        rows.append(("Features", libs))
    rows.append(("Distributed", ", ".join(rt.distributed_backends) or "no backend"))
    if rt.loaded_libraries:
        rows.append(("Loaded", "\n".join(rt.loaded_libraries)))
    for query, err in rt.step_errors.items():
        rows.append((query, s(err, "red")))
    return rows


def _toolkit(facts: Facts) -> List[Row]:
    tk = facts.toolkit
    if not tk.nvcc_path:
        home = f" (CUDA_HOME {tk.cuda_home})" if tk.cuda_home else ""
        rows: List[Row] = [("nvcc", f"not found{home}")]
    else:
        home = f", CUDA_HOME {tk.cuda_home} (from {tk.cuda_home_source})" if tk.cuda_home else ""
        rows = [("nvcc", f"{tk.nvcc_version or 'unknown version'} at {tk.nvcc_path}{home}")]
    if tk.cuda_home_nvcc:
        rows.append(
            ("CUDA_HOME's", f"nvcc {tk.cuda_home_nvcc_version or '?'} at {tk.cuda_home_nvcc}")
        )
    if tk.nvcc_host_max:
        limits = ", ".join(
            f"{k} <= {v}" if k != "msvc" else f"MSVC {v}" for k, v in tk.nvcc_host_max.items()
        )
        rows.append(("Host limit", f"{limits} ({tk.host_config})"))
    if not tk.toolchain_probed:
        return rows
    seen = []
    for c in tk.compilers:
        seen.append(
            f"{c.name} {c.version or '?'}"
            + (f" ({c.kind})" if c.kind and c.kind not in c.name else "")
        )
    rows.append(("Compilers", ", ".join(seen) + f"; builds use {tk.cxx}" if seen else "none found"))
    rows.append(
        ("ninja", f"{tk.ninja_version or '?'} at {tk.ninja_path}" if tk.ninja_path else "not found")
    )
    if tk.libcuda is not None:
        rows.append(
            ("libcuda.so", tk.libcuda or "missing (only libcuda.so.1): Triton's -lcuda fails")
        )
    for cache in tk.caches:
        state = {True: "writable", False: "NOT writable", None: "not known"}[cache.writable]
        rows.append((cache.name.capitalize(), f"cache {cache.path} ({cache.source}, {state})"))
    return rows


def _environment(facts: Facts) -> List[Row]:
    if not facts.environment:
        return [("", "none of the variables that matter is set")]
    return [("", "\n".join(f"{k}={_short(v)}" for k, v in facts.environment.items()))]


LONG_VALUE = 200  # characters of a variable's value the text shows (JSON keeps it whole)


def _short(value: str) -> str:
    """A value cut to LONG_VALUE characters, saying how long it was: a CUDA image's
    NVIDIA_REQUIRE_CUDA (every driver branch x every brand) filled 30 lines of the probe."""
    if len(value) <= LONG_VALUE:
        return value
    return f"{value[:LONG_VALUE]}... ({len(value)} characters; --json has all)"
