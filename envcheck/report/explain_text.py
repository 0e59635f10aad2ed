"""`envcheck explain` as text: each recognised message with what it means and the fix, the
facts the message carries, or what to do with a message envcheck does not know."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from .wrap import wrap

if TYPE_CHECKING:
    from ..diagnose import Explanation


def not_recognised(width: int) -> str:
    """What to do next with a message the catalogue does not hold."""
    return "\n".join(
        wrap(
            "envcheck does not recognise this message (see `envcheck tables` for the "
            "catalogue's age).\nNext: give envcheck the whole log or report, `envcheck "
            "diagnose FILE` (or `-` for stdin): it reads collect_env, nvidia-smi and pip "
            "output around the message; on the machine that printed it, run `envcheck "
            "check`. A PyTorch or CUDA error envcheck should know is worth an issue in "
            "envcheck's tracker, with the message.",
            width,
            rest="  ",
        )
    )


def explained_blocks(result: Explanation, width: int) -> List[str]:
    """One block of lines per recognised message, then one for the facts it carries."""
    blocks = []
    for finding in result.findings:
        lines = wrap(f"{finding.name}: {finding.title}", width, rest="  ")
        lines += wrap(finding.evidence[0], width, first="  matched: ", rest="    ")
        lines += wrap(finding.fix or "", width, first="  ")
        blocks.append("\n".join(lines))
    carried = carried_facts(result)
    if carried:
        blocks.append(
            "\n".join(
                wrap("; ".join(carried), width, first="  facts in the message: ", rest="    ")
            )
        )
    return blocks


def carried_facts(result: Explanation) -> List[str]:
    """The facts a message states: the driver's CUDA, a compute capability, nvcc, torch's CUDA."""
    f = result.facts
    maybe = [
        f"the driver supports CUDA {f.nvidia.cuda_driver_version}"
        if f.nvidia.cuda_driver_version
        else None,
        f"GPU compute capability {f.nvidia.gpus[0].compute_capability}" if f.nvidia.gpus else None,
        f"nvcc is CUDA {f.toolkit.nvcc_version}" if f.toolkit.nvcc_version else None,
        f"torch was built with CUDA {f.torch.cuda}" if f.torch.cuda else None,
    ]
    return [c for c in maybe if c]
