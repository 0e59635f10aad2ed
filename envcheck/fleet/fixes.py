"""What to do about a difference between machines: which machines to change, to what, and
(for torch itself) the resolver's command for them.

The majority is what the fix moves the odd machines to: it is what the job already runs on
most widely. Where there is no majority, the fix says a choice is needed and makes none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ..facts import Facts
from ..tables import Tables
from .hostlist import fold

if TYPE_CHECKING:
    from .compare import Difference
    from .inputs import Machine

Fix = Tuple[Optional[str], Optional[str]]  # (fix, command)

_FROM_THE_WHEEL = (
    "{what} comes with torch's wheel unless another library is loaded first (LD_LIBRARY_PATH, "
    "LD_PRELOAD, one in the image): make {odd} load the {what} {majority} the others load."
)
_TEXTS: Dict[str, str] = {
    "CMP002": _FROM_THE_WHEEL.replace("{what}", "NCCL"),
    "CMP003": "Install the majority's build ({majority}) on {odd}, the same torch as the others.",
    "CMP004": (
        "Run every rank with Python {majority}: give {odd} the environment (or image) the "
        "others use, then reinstall torch there."
    ),
    "CMP005": (
        "torch on {odd} lacks backends the others have ({majority}): install the torch build "
        "the others run."
    ),
    "CMP006": (
        "Run the job on machines with the same GPUs ({majority}): ask the scheduler for the "
        "model and count (Slurm: --gres=gpu:TYPE:N or a --constraint), or leave out {odd} "
        "(--exclude={odd})."
    ),
    "CMP007": (
        "Install the {majority} driver on {odd}: the CUDA a driver runs and its fixes differ by "
        "branch."
    ),
    "CMP008": _FROM_THE_WHEEL.replace("{what}", "cuDNN"),
    "CMP009": (
        "Install {label} {majority} on {odd}, from the index torch came from (the build made for "
        "that torch)."
    ),
    "CMP010": "Set {label}={majority} on {odd} too, in the job's environment, or on none.",
    "CMP011": (
        "Give {odd} a {majority} /dev/shm like the others (docker --shm-size, a Kubernetes "
        "emptyDir with medium Memory)."
    ),
    "CMP012": (
        "NCCL on {odd} sees other network devices than the others ({majority}): check the "
        "HCA driver (ibv_devices) and the devices the container is given."
    ),
    "CMP013": "Run every machine's ranks the same way ({majority}).",
    "CMP016": (
        "Give {odd} the locked-memory limit the others have ({majority}): `ulimit -l` in the "
        "job's shell, memlock in /etc/security/limits.conf, or the container runtime's "
        "--ulimit memlock=-1 (Slurm passes the submitting shell's limits with "
        "PropagateResourceLimits)."
    ),
    "CMP014": "Expected to be the same across a uniform fleet; worth knowing before a job.",
}


def fix_for(d: Difference, machines: Dict[str, Machine], tables: Tables) -> Fix:
    code, odd = d.aspect.code, d.odd()
    if d.majority is None:
        return (
            f"No value of {d.aspect.label} holds a majority: decide which the job runs with, "
            "then make every machine match it.",
            None,
        )
    if code == "CMP001":
        return _torch(d.majority, [machines[n] for n in odd], tables)
    majority = d.majority
    if code == "CMP010" and majority == "unset":
        return f"Unset {d.aspect.label} on {fold(odd)}, or set it on every machine.", None
    text = _TEXTS[code].format(majority=majority, odd=fold(odd), label=d.aspect.label)
    return text, None


def _torch(version: str, odd: List[Machine], tables: Tables) -> Fix:
    """Install the majority's torch on the odd machines: the resolver's command for each
    (they may differ, by Python or platform); machines nothing of it fits are named, with
    the resolver's reason."""
    if version == "not installed":
        return f"Uninstall torch on {fold(m.name for m in odd)}, as on the others.", None
    commands: Dict[str, List[str]] = {}
    blocked: Dict[str, List[str]] = {}
    for m in odd:
        command, why = _command(m.facts, version, tables)
        (commands if command else blocked).setdefault(command or why, []).append(m.name)
    names = fold(m.name for m in odd)
    text = f"Install torch {version} on {names}: every rank must run the same build."
    if len(commands) > 1:
        text += " " + " ".join(f"On {fold(n)}: {c}." for c, n in commands.items())
    for why, names_blocked in blocked.items():
        text += f" It does not fit {fold(names_blocked)} ({why}): run the job without them."
    return text, next(iter(commands)) if len(commands) == 1 else None


def _command(facts: Facts, version: str, tables: Tables) -> Tuple[Optional[str], str]:
    """The pip command that installs ``version`` (with its local label) on that machine, or
    None and the resolver's reason."""
    from ..install import Wish, render, resolve

    base, _, label = version.partition("+")
    plan = resolve(facts, tables, Wish(torch=f"=={base}", variant=label or "auto"))
    if plan.ok:
        return render(plan, "pip", tables.uv_torch_backends), ""
    return None, "; ".join(plan.conflicts) or "no build is known to fit"


__all__ = ["fix_for"]
