"""``envcheck.require(...)``: the first line of a training script, beside :func:`check`.

It reads its keywords as a [tool.envcheck] table (envcheck.requirements parses both), runs
the core once on this machine, and raises RequirementError listing every unmet requirement.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..facts import Facts
from ..findings import Finding
from ..requirements import RequirementError, Requirements, parse_requirements
from .pipeline import check


def require(
    *,
    torch: Optional[str] = None,
    python: Optional[str] = None,
    cuda: Optional[str] = None,
    gpus: Optional[int] = None,
    gpu_memory: Union[str, int, float, None] = None,
    compute_capability: Optional[str] = None,
    dtypes: Sequence[str] = (),
    bf16: bool = False,
    fp16: bool = False,
    tf32: bool = False,
    backend: Optional[str] = None,
    smoke: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> Facts:
    """Check this machine against requirements; raise RequirementError listing every unmet one.

        import envcheck
        envcheck.require(torch=">=2.4", gpus=2, bf16=True)

    The keywords are the keys of [tool.envcheck]: ``torch``/``python`` version specifiers,
    ``cuda`` the least CUDA of torch's build, ``gpus`` a count, ``gpu_memory`` per GPU
    ("40GiB", or a number of GiB), ``compute_capability`` the least ("8.0"), ``dtypes``
    (or ``bf16``/``fp16``/``tf32=True``), ``backend`` (nccl, gloo, ...), ``smoke`` tests to
    run, ``ignore`` finding codes. Returns the Facts when everything is met.

    When the calling process has already imported torch (a training script, on every rank
    under torchrun), the facts that need torch are read from that import, in this process:
    no child, no second import. envcheck never imports torch itself.
    """
    req = requirements_of(dict(locals()), "envcheck.require()")
    from ..probes import probe

    facts = probe(deep=req.needs_deep, imported_torch=sys.modules.get("torch"))
    unmet = judge(req, facts)
    if unmet:
        raise RequirementError(list(unmet))
    return facts


def requirements_of(keywords: Mapping[str, Any], where: str) -> Requirements:
    """The keywords of :func:`require` (or of ``@pytest.mark.envcheck``) as a parsed
    [tool.envcheck] table: a keyword left at its default is not a requirement. Raises
    ConfigError naming ``where`` for an unknown keyword or a bad value."""
    raw: Dict[str, Any] = {}
    for key, value in keywords.items():
        if value is None or value is False:
            continue  # not given
        if isinstance(value, (tuple, list)):
            if not value:
                continue
            value = list(value)  # as TOML gives a list
        raw[key] = value
    return parse_requirements(raw, where)


def judge(req: Requirements, facts: Facts) -> Tuple[Finding, ...]:
    """The requirements ``facts`` does not meet (REQ*), each root cause first: empty when
    every one is met. The one judgement behind require() and the pytest marker."""
    report = check(facts=facts, requirements=req)
    unmet = [f for f in report.findings if f.code.startswith("REQ")]
    causes = {f.caused_by for f in unmet if f.caused_by}
    return tuple([f for f in report.findings if f.code in causes] + unmet)


__all__ = ["RequirementError", "judge", "require", "requirements_of"]
