"""PKG009: an installed package built for another CUDA major (or cuDNN) than torch brings,
with nothing else providing that major's libraries: CuPy, TensorRT, JAX's CUDA plugin,
onnxruntime-gpu load their own CUDA libraries and fail, or run on the CPU, without them.
What each package records is envcheck.cuda_needs' reading of package_builds.json."""

from __future__ import annotations

from typing import List, Set

from ..compat import torch_variant
from ..cuda_needs import CudaNeed, cudnn_unmet, runtime_majors, without_libraries
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables


def check(facts: Facts, tables: Tables) -> List[Finding]:
    if not facts.torch.installed:
        return []
    variant = torch_variant(facts)
    cuda = variant.cuda if variant is not None and variant.is_cuda else None
    if cuda is None:  # a torch that brings no CUDA to clash with: only the cuDNN requirements
        return _cudnn(facts)
    have = runtime_majors(facts, tables)
    needs = without_libraries(facts, tables, variant, have)
    return [_other_major(facts, need, cuda.major, have) for need in needs] + _cudnn(facts)


def _other_major(facts: Facts, need: CudaNeed, torch_major: int, have: Set[int]) -> Finding:
    pkg, major = need.package, need.major
    replacement = need.replacement(torch_major)
    ways = [f"its build for CUDA {torch_major} (pip install {replacement})"] if replacement else []
    ways.append(
        f"CUDA {major}'s libraries beside torch's (its runtime wheels, or a CUDA {major} "
        "toolkit on the loader path)"
    )
    present = ", ".join(f"CUDA {m}" for m in sorted(have)) or "none"
    fails = need.fails()
    return RULES["PKG009"](
        f"{pkg.name} {pkg.version} is built for CUDA {major}; torch {facts.torch.version} brings "
        f"CUDA {facts.torch.cuda or torch_major}'s libraries and no CUDA {major} runtime is "
        "installed",
        [
            need.evidence,
            f"torch {facts.torch.version}",
            f"CUDA runtime wheels installed: {present}",
        ],
        "Install " + ", or ".join(ways) + "." + (f" Until then {fails}." if fails else ""),
    )


def _cudnn(facts: Facts) -> List[Finding]:
    findings = []
    for n in cudnn_unmet(facts):
        pkg, wheel = n.package, n.installed
        wanted = f"{n.requirement.name}{n.requirement.specifier}"
        findings.append(
            RULES["PKG009"](
                f"{pkg.name} {pkg.version} requires {wanted}; {wheel.name} {wheel.version} is "
                "installed",
                [
                    f"{pkg.name} {pkg.version}: Requires-Dist: {n.requirement}",
                    f"{wheel.name} {wheel.version}",
                ],
                f"cuDNN majors are not interchangeable: install a release of {pkg.name} built "
                f"for cuDNN {wheel.version.split('.')[0]}, or a torch whose cuDNN wheel meets "
                f"{wanted}. Until then {pkg.name} cannot load the cuDNN it was built for.",
            )
        )
    return findings
