"""jetpack.json: NVIDIA Jetson's JetPack releases by L4T release, the CUDA and Python each
ships, and where NVIDIA's torch wheels for it are (an index, or one wheel to name).

Why a table of its own: a Jetson on JetPack 4-6 runs JetPack's CUDA, for which PyTorch's
aarch64 wheels (SBSA builds) are not made, so its answers come from NVIDIA's wheels, not
from torch_releases.json; from JetPack 7 (``sbsa``) PyTorch's own wheels are judged as on
any other machine. The versions an index holds are those seen there, with when and where,
because envcheck cannot list the live index."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .jetpack_records import JetPack, JetPackTorch, JetPackWheel
from .reader import Reader, variant


def _torch(r: Reader, raw: Any, where: str) -> JetPackTorch:
    sources = r.get(raw, "sources", where, list)
    known = [s for s in sources if isinstance(s, str) and r.sources.get(s, "").split()]
    if not sources or len(known) != len(sources):
        raise r.fail(f"{where}.sources", "each version needs a source key of this table")
    r.version(r.get(raw, "torch", where, str), f"{where}.torch")
    vision = r.get(raw, "torchvision", where, str, optional=True)
    r.opt_version(vision, f"{where}.torchvision")
    seen = r.get(raw, "seen", where, str)
    # where it was seen, as a reader can follow it: the reference's first word (its URL)
    return JetPackTorch(raw["torch"], vision, seen, tuple(r.sources[s].split()[0] for s in sources))


def _wheel(r: Reader, raw: Any, where: str) -> Optional[JetPackWheel]:
    if raw is None:
        return None
    torch = r.get(raw, "torch", where, str, optional=True)
    r.opt_version(torch, f"{where}.torch")
    return JetPackWheel(torch, r.get(raw, "python", where, str), r.get(raw, "where", where, str))


def _release(r: Reader, raw: Any, where: str) -> JetPack:
    l4t = r.get(raw, "l4t", where, dict)
    low, below = (
        r.version(r.get(l4t, k, f"{where}.l4t", str), f"{where}.l4t.{k}") for k in ("min", "below")
    )
    if not low < below:
        raise r.fail(f"{where}.l4t", "min must be below 'below'")
    index = r.get(raw, "index", where, str, optional=True)
    text = r.get(raw, "variant", where, str, optional=True)
    if (index is None) != (text is None):
        raise r.fail(where, "an index needs the variant it serves, and a variant an index")
    if index is not None and not index.startswith("https://"):
        raise r.fail(f"{where}.index", f"{index!r} is not an https URL")
    torch = tuple(
        _torch(r, t, f"{where}.torch[{i}]") for i, t in enumerate(r.get(raw, "torch", where, list))
    )
    if torch and index is None:
        raise r.fail(f"{where}.torch", "versions of an index, but no index")
    return JetPack(
        jetpack=r.get(raw, "jetpack", where, str),
        gpus=r.capabilities(r.get(raw, "gpus", where, list), f"{where}.gpus"),
        l4t_min=low,
        l4t_below=below,
        cuda=str(r.version(r.get(raw, "cuda", where, str), f"{where}.cuda")),
        python=str(r.version(r.get(raw, "python", where, str), f"{where}.python")),
        sbsa=r.get(raw, "sbsa", where, bool),
        index=index,
        variant=None if text is None else variant(r, text, f"{where}.variant"),
        torch=torch,
        wheel=_wheel(r, raw.get("wheel"), f"{where}.wheel"),
        provenance=r.provenance(raw, where, list(raw)),
    )


def read_jetpack(data: Dict[str, Any], file: str) -> Tuple[JetPack, ...]:
    sources = Reader(file, {}).strings(data.get("sources"), "sources")
    r = Reader(file, sources)
    releases = tuple(
        _release(r, raw, f"releases[{i}]")
        for i, raw in enumerate(r.get(data, "releases", "document", list))
    )
    for a, b in zip(releases, releases[1:]):
        if a.l4t_below > b.l4t_min:
            raise r.fail("releases", f"JetPack {a.jetpack} and {b.jetpack} overlap in L4T")
    return releases
