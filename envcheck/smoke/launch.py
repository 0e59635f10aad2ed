"""Who am I in a multi-node job? Rank, world size, node and rendezvous from torchrun or Slurm.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, GROUP_RANK, MASTER_ADDR and MASTER_PORT. ``srun``
sets none of them; it sets SLURM_PROCID (the rank), SLURM_NTASKS (the world size),
SLURM_LOCALID (the rank on its node), SLURM_NODEID and the job's node list in Slurm's hostlist
syntax (``gpu[01-04,07],login1``), whose first host is where rank 0 runs with the default block
distribution. So ``srun envcheck smoke --distributed`` needs no wrapper script: the rendezvous is
the node list's first host, on a port every rank derives from the job id as PyTorch Lightning's
SLURMEnvironment does (15000 + the job id's last four digits) unless MASTER_PORT is set.
torchrun's variables win when both are present (torchrun started under srun).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Dict, Iterator, List, Mapping, Optional

from .._record import record

MAX_HOSTS = 100_000  # a node list longer than this is not a real job


class LaunchError(ValueError):
    """The launcher's variables are missing, malformed or contradict each other."""


@record(frozen=True)
class Launch:
    launcher: str  # "torchrun" or "slurm"
    rank: int
    world_size: int
    local_rank: int
    node: int
    nodes: Optional[int]  # the number of nodes the job should have, where the launcher says
    master_addr: str
    master_port: int

    def environ(self) -> Dict[str, str]:
        """The variables torch.distributed's env:// rendezvous reads."""
        return {
            "RANK": str(self.rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_RANK": str(self.local_rank),
            "GROUP_RANK": str(self.node),
            "MASTER_ADDR": self.master_addr,
            "MASTER_PORT": str(self.master_port),
        }


TORCHRUN = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
SLURM = ("SLURM_PROCID", "SLURM_NTASKS")


def detect(env: Mapping[str, str]) -> Optional[Launch]:
    """The launch this process is part of; None under neither launcher (LaunchError when a
    launcher's variables are there but wrong)."""
    if all(k in env for k in TORCHRUN):
        return _torchrun(env)
    if all(k in env for k in SLURM):
        return _slurm(env)
    return None


def _int(env: Mapping[str, str], name: str, default: Optional[int] = None) -> int:
    value = env.get(name)
    if value is None or value.strip() == "":
        if default is None:
            raise LaunchError(f"{name} is not set")
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise LaunchError(f"{name}={value[:40]!r} is not a whole number") from None
    if number < 0:
        raise LaunchError(f"{name}={number} is negative")
    return number


def _port(env: Mapping[str, str], name: str, value: int) -> int:
    if not 1 <= value <= 65535:
        raise LaunchError(f"{name}={value} is not a TCP port")
    return value


def _check(rank: int, world: int, rank_name: str, world_name: str) -> None:
    if world < 1:
        raise LaunchError(f"{world_name}={world}: a job has one rank at least")
    if rank >= world:
        raise LaunchError(f"{rank_name}={rank} is not below {world_name}={world}")


def _torchrun(env: Mapping[str, str]) -> Launch:
    rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE")
    _check(rank, world, "RANK", "WORLD_SIZE")
    addr = env["MASTER_ADDR"].strip()
    if not addr:
        raise LaunchError("MASTER_ADDR is empty")
    groups = env.get("GROUP_WORLD_SIZE")
    return Launch(
        "torchrun",
        rank,
        world,
        _int(env, "LOCAL_RANK", 0),
        _int(env, "GROUP_RANK", 0),
        _int(env, "GROUP_WORLD_SIZE") if groups else None,
        addr,
        _port(env, "MASTER_PORT", _int(env, "MASTER_PORT")),
    )


def _slurm(env: Mapping[str, str]) -> Launch:
    rank, world = _int(env, "SLURM_PROCID"), _int(env, "SLURM_NTASKS")
    _check(rank, world, "SLURM_PROCID", "SLURM_NTASKS")
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if env.get("MASTER_ADDR", "").strip():
        addr = env["MASTER_ADDR"].strip()
    elif nodelist:
        addr = first_host(nodelist)
    else:
        raise LaunchError("SLURM_JOB_NODELIST (or SLURM_NODELIST, or MASTER_ADDR) is not set")
    if env.get("MASTER_PORT", "").strip():
        port = _int(env, "MASTER_PORT")
    elif env.get("SLURM_JOB_ID", "").strip():
        port = 15000 + _int(env, "SLURM_JOB_ID") % 10000
    else:
        raise LaunchError("neither MASTER_PORT nor SLURM_JOB_ID is set")
    nodes = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")
    return Launch(
        "slurm",
        rank,
        world,
        _int(env, "SLURM_LOCALID", 0),
        _int(env, "SLURM_NODEID", 0),
        _int({"n": nodes}, "n") if nodes else None,
        addr,
        _port(env, "MASTER_PORT", port),
    )


def first_host(nodelist: str) -> str:
    host = next(iter(expand_hostlist(nodelist)), None)
    if host is None:
        raise LaunchError(f"the node list {nodelist[:80]!r} names no host")
    return host


def hosts(nodelist: str, limit: int = MAX_HOSTS) -> List[str]:
    """Every host of a Slurm node list (at most ``limit``)."""
    return list(islice(expand_hostlist(nodelist), limit))


def expand_hostlist(nodelist: str) -> Iterator[str]:
    """Slurm's hostlist syntax, lazily: ``gpu[01-03,07],login1`` -> gpu01 gpu02 gpu03 gpu07
    login1; ``rack[1-2]-n[1-2]`` -> rack1-n1 rack1-n2 rack2-n1 rack2-n2. Zero padding is kept.
    Malformed text (unbalanced brackets, a reversed or non-numeric range) is a LaunchError."""
    text = nodelist.strip()
    if len(text) > 65536:
        raise LaunchError("the node list is longer than 64 KiB")
    for part in _top_level(text, nodelist):
        if part:
            yield from _expand(part, nodelist)


def _top_level(text: str, whole: str) -> List[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise LaunchError(f"nested brackets in the node list {whole[:80]!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise LaunchError(f"unbalanced ']' in the node list {whole[:80]!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise LaunchError(f"unbalanced '[' in the node list {whole[:80]!r}")
    parts.append(text[start:].strip())
    return parts


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _expand(pattern: str, whole: str) -> Iterator[str]:
    if "[" not in pattern:
        if "]" in pattern or not pattern:
            raise LaunchError(f"unbalanced ']' in the node list {whole[:80]!r}")
        yield pattern
        return
    open_at = pattern.index("[")
    close_at = pattern.index("]", open_at)
    prefix, body, rest = pattern[:open_at], pattern[open_at + 1 : close_at], pattern[close_at + 1 :]
    for item in body.split(","):
        match = _RANGE.match(item.strip())
        if not match:
            raise LaunchError(
                f"{item.strip()[:20]!r} in the node list {whole[:80]!r} is not a range"
            )
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise LaunchError(f"the range {item.strip()!r} in {whole[:80]!r} runs backwards")
        width = len(low) if low.startswith("0") else 0
        for number in range(int(low), int(high) + 1):
            for tail in _expand(rest, whole) if "[" in rest or "]" in rest else [rest]:
                yield f"{prefix}{number:0{width}d}{tail}"
