"""The all_reduce bus bandwidth this machine's topology should allow, from Facts alone.

A measured busbw means little without the figure the links allow: 20 GB/s is good for two
GPUs on PCIe Gen4 and a sign of trouble between two H100s on NVLink. The ring all_reduce's
busbw is bounded by the slowest link of the ring (nccl-tests, doc/PERFORMANCE.md: busbw is
comparable with the hardware's peak link bandwidth whatever the number of ranks), so the
expected figure is that link's bandwidth per direction, from the link table
(compat_tables/links.json: NVLink per link per generation, PCIe per lane per transfer rate).

What the facts or the table do not say is said, never guessed: the answer is then
``Expected(None, reason)``. gloo on the CPU within one host has no topology figure (its
ranks copy through host memory and loopback TCP; there is no link to read).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from .._record import record
from ..facts import Facts, GpuFacts, GpuPairFacts
from ..tables.load import load_tables, load_tables_of_env
from ..tables.model import LinkTable

TABLE = "links"
# nvidia-smi topo's PCIe path words, nearest first, as a basis names them
_PCIE_PATHS = {
    "PIX": "one PCIe switch",
    "PXB": "several PCIe switches",
    "PHB": "the host bridge",
    "NODE": "the host bridges of one NUMA node",
}


# busbw = algbw x 2(n-1)/n is 0 for one rank: its all_reduce verifies, it measures no link
ONE_RANK = "one rank: nothing crosses a link"


def measures_links(world_size: Optional[int]) -> bool:
    """Whether an all_reduce over ``world_size`` ranks has a bus bandwidth to show."""
    return (world_size or 0) >= 2


@record(frozen=True)
class Expected:
    """The expected peak busbw with its basis, or ``busbw_gbps`` None and why in ``basis``."""

    busbw_gbps: Optional[float]
    basis: str

    @property
    def known(self) -> bool:
        return self.busbw_gbps is not None


def load_link_table(directory: Optional[str] = None) -> LinkTable:
    """links.json as the one table loader reads it (``directory`` or ENVCHECK_TABLES replace
    the built-in file; a table that does not validate raises TableError)."""
    tables = load_tables(Path(directory)) if directory else load_tables_of_env()
    assert tables.links is not None  # load_tables always reads links.json
    return tables.links


def expected_busbw(
    facts: Facts, backend: str, world_size: int, table: Optional[LinkTable] = None
) -> Expected:
    """The busbw a ring all_reduce over ``world_size`` ranks on this machine should reach.

    The smoke runs one rank per visible GPU (cuda:0..n-1), so the ring is every GPU of the
    facts; with fewer ranks than GPUs, which GPUs took part is not known, and neither is the
    figure. NVLink: active links x the generation's rate per link per direction (through
    NVSwitch: all of a GPU's links; direct: its links to the other GPUs). PCIe: the GPUs'
    maximum link (generation x width), the smallest one. A path across CPUs (SYS) or a mix
    of NVLink and PCIe has no single-link figure.
    """
    if not measures_links(world_size):
        return Expected(None, ONE_RANK)
    if backend == "gloo":
        return Expected(
            None,
            "gloo on the CPU within one host: no topology figure (host memory and loopback TCP)",
        )
    if backend != "nccl":
        return Expected(None, f"backend {backend}: no topology figure")
    gpus = facts.nvidia.gpus
    if len(gpus) != world_size:
        return Expected(
            None,
            f"{world_size} ranks on a machine with {len(gpus)} GPUs in the facts: "
            "which GPUs the ranks ran on is not known",
        )
    table = table or load_link_table()
    pairs = {(p.a, p.b): p for p in facts.nvidia.pairs}
    ring: List[GpuPairFacts] = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            pair = pairs.get((min(a.index, b.index), max(a.index, b.index)))
            if pair is None or not pair.path:
                return Expected(None, f"the path between GPU {a.index} and {b.index} is not known")
            ring.append(pair)
    paths = {p.path for p in ring}
    if all(str(p).startswith("NV") for p in paths):
        return _nvlink(gpus, ring, table)
    if any(str(p).startswith("NV") for p in paths):
        return Expected(
            None,
            f"a mix of NVLink and PCIe paths ({', '.join(sorted(map(str, paths)))}): "
            "which of them NCCL's ring crosses is not known",
        )
    if "SYS" in paths:
        sys_pair = next(p for p in ring if p.path == "SYS")
        return Expected(
            None,
            f"GPU {sys_pair.a} and {sys_pair.b} reach each other across CPUs (SYS): "
            "the inter-CPU link's bandwidth is not in the link table",
        )
    unknown = sorted(set(map(str, paths)) - set(_PCIE_PATHS))
    if unknown:
        return Expected(None, f"PCIe path {unknown[0]!r} is not one envcheck knows")
    return _pcie(gpus, ring, table)


def _nvlink(gpus: Sequence[GpuFacts], ring: Sequence[GpuPairFacts], table: LinkTable) -> Expected:
    bus_ids = {_bus(g.pci_bus_id) for g in gpus if g.pci_bus_id}
    versions = set()
    per_gpu: List[Tuple[int, str]] = []  # (links the ring can use, through what)
    for g in gpus:
        active = [link for link in g.nvlinks or [] if link.active]
        if not active:
            return Expected(None, f"GPU {g.index}'s active NVLinks are not known")
        versions |= {link.version for link in active}
        remotes = [_bus(link.remote_bus_id) if link.remote_bus_id else None for link in active]
        if None in remotes:
            if len(gpus) == 2 and ring[0].nvlinks:  # two GPUs: NVML's count for the pair
                per_gpu.append((ring[0].nvlinks, "between the two GPUs"))
                continue
            return Expected(None, f"where GPU {g.index}'s NVLinks lead is not known")
        to_gpus = sum(1 for r in remotes if r in bus_ids)
        if to_gpus == 0:
            per_gpu.append((len(active), "through NVSwitch"))
        elif to_gpus == len(active):
            per_gpu.append((to_gpus, "direct between GPUs"))
        else:
            return Expected(
                None, f"GPU {g.index}'s NVLinks lead both to GPUs and elsewhere: not one figure"
            )
    if None in versions or len(versions) != 1:
        return Expected(None, f"NVLink versions {sorted(map(str, versions))}: not one generation")
    version = int(next(iter(versions)))  # type: ignore[arg-type]
    rate = table.nvlink.get(version)
    if rate is None:
        return Expected(None, f"NVLink {version} is not in the link table")
    links, how = min(per_gpu)
    return Expected(
        round(links * rate, 3),
        f"NVLink {version} {how}, {links} links x {rate:g} GB/s per direction",
    )


def _pcie(gpus: Sequence[GpuFacts], ring: Sequence[GpuPairFacts], table: LinkTable) -> Expected:
    slowest: Optional[Tuple[float, int, int, float]] = None  # (GB/s, generation, width, GT/s)
    for g in gpus:
        pcie = g.pcie
        if pcie is None or not pcie.speed_max or not pcie.width_max:
            return Expected(None, f"GPU {g.index}'s PCIe link (speed, width) is not known")
        lane = table.pcie_lane(pcie.speed_max)
        if lane is None:
            return Expected(None, f"PCIe at {pcie.speed_max:g} GT/s is not in the link table")
        generation, per_lane = lane
        bw = per_lane * pcie.width_max
        if slowest is None or bw < slowest[0]:
            slowest = (bw, generation, pcie.width_max, pcie.speed_max)
    assert slowest is not None  # two GPUs at least
    bw, generation, width, _ = slowest
    order = list(_PCIE_PATHS)
    farthest = max((str(p.path) for p in ring), key=order.index)
    return Expected(round(bw, 3), f"PCIe Gen{generation} x{width} through {_PCIE_PATHS[farthest]}")


def _bus(bus_id: str) -> str:
    """NVML writes 00000000:17:00.0, sysfs 0000:17:00.0: compare the last three parts."""
    return ":".join(bus_id.lower().split(":")[-2:])


def p2p_problems(facts: Facts) -> List[str]:
    """GPU pairs whose P2P NVML reports as not ok: the first suspect of a low busbw."""
    out = []
    for p in facts.nvidia.pairs:
        for kind, status in (("read", p.p2p_read), ("write", p.p2p_write)):
            if status and status != "ok":
                out.append(f"GPU {p.a} <-> {p.b}: P2P {kind} {status}")
    return out
