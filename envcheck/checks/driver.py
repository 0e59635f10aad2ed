"""Can the NVIDIA driver run torch's CUDA build, and does NVML work at all?"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from ..compat import driver_drops, driver_predates, platform_name, sm_name
from ..driver_support import (
    DriverLevel,
    DriverVerdict,
    forward_compat_way_out,
    machine_driver_verdict,
)
from ..facts import Facts
from ..findings import Finding
from ..rules import RULES
from ..tables import Tables
from ..tables.model import parse_version
from ..tegra import board as jetson_board
from ._util import driver_text, has_nvidia_gpu, what_fits

if TYPE_CHECKING:
    from ._util import Planned


def check(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> List[Finding]:
    """``planned``: the report's install plan, which DRV001's fix explains (what_fits)."""
    findings = _nvml(facts)
    findings += _driver_vs_build(facts, tables, planned)
    findings += _dropped_gpus(facts, tables)
    findings += _predates_gpus(facts, tables)
    return findings


def _predates_gpus(facts: Facts, tables: Tables) -> List[Finding]:
    """A driver older than the GPU: it does not support it at all (on Linux the GPU is
    missing from nvidia-smi, or "RmInitAdapter failed" is in the kernel log)."""
    gaps = driver_predates(facts, tables)
    if not gaps:
        return []
    need = max((n for _, _, n in gaps), key=lambda n: (n[0].isdigit(), n))
    gpus = ", ".join(f"{name} ({sm_name(cc)})" for name, cc, _ in gaps)
    fix = (
        f"Upgrade the NVIDIA driver to {need} or newer (no torch build helps before that; "
        "on Linux, Blackwell GPUs need the open kernel modules)."
    )
    if facts.system.hosted:  # no upgrade there, and no build helps: another runtime does
        fix = (
            f"{_hosted_driver(facts)}, and no torch build runs on a GPU its driver predates: "
            "pick another runtime (GPU type)."
        )
    return [
        RULES["DRV005"](
            f"Driver {facts.nvidia.driver_version} is older than {gpus}: it does not support it",
            [driver_text(facts), *(f"{name}: needs {n} or newer" for name, _, n in gaps)],
            fix,
        )
    ]


def _driver_vs_build(facts: Facts, tables: Tables, planned: Optional[Planned]) -> List[Finding]:
    cuda = parse_version(facts.torch.cuda) if facts.torch.installed else None
    nv = facts.nvidia
    if cuda is None or not (nv.driver_version or nv.cuda_driver_version):
        return []
    verdict = machine_driver_verdict(
        facts,
        tables,
        cuda,
        torch=parse_version(facts.torch.version),
        platform=platform_name(facts),
    )
    evidence = [f"torch {facts.torch.version} built with CUDA {cuda}", driver_text(facts)]
    evidence.append(f"full support: {_full_text(verdict)}")
    if verdict.minimum:
        evidence.append(
            f"minor-version compatibility covers CUDA {cuda.major}.x from {verdict.minimum}"
        )
    if verdict.level is DriverLevel.TOO_OLD:
        return [_too_old(facts, tables, planned, verdict, evidence)]
    if verdict.level is DriverLevel.FULL and verdict.unverified_below is not None:
        return [_unverified_update(facts, verdict, evidence)]
    if verdict.level is DriverLevel.MINOR:
        return [_minor_compat(facts, tables, verdict, evidence)]
    return []


HOSTED_NAMES = {"colab": "Colab", "kaggle": "Kaggle"}


def _hosted_driver(facts: Facts) -> str:
    """The words both hosted fixes start with: there, the runtime brings the driver."""
    name = HOSTED_NAMES.get(facts.system.hosted or "", facts.system.hosted or "")
    return f"A {name} runtime brings its own NVIDIA driver, which cannot be upgraded"


def _hosted_fix(facts: Facts, cuda: object = None) -> str:
    """On Colab or Kaggle the runtime brings the driver: no one upgrades it, so the way out
    is a torch build for the driver there, or another runtime."""
    need = f" (torch's CUDA {cuda} build needs a newer one)" if cuda is not None else ""
    return (
        f"{_hosted_driver(facts)}{need}: "
        "install a torch build this driver runs (in a notebook cell: %pip install ...), or switch "
        "to another runtime. "
    )


def _too_old(
    facts: Facts,
    tables: Tables,
    planned: Optional[Planned],
    verdict: DriverVerdict,
    evidence: List[str],
) -> Finding:
    """DRV001: the way out is a newer driver (a newer JetPack on a Jetson), forward
    compatibility where it applies, or a build for an older CUDA."""
    cuda, nv = verdict.cuda, facts.nvidia
    need = verdict.minimum or verdict.full_from
    title = f"The driver is too old for torch's CUDA {cuda} build ({verdict.basis})"
    if jetson_board(facts, tables):
        # A Jetson's driver is part of JetPack (L4T): no desktop driver branch installs
        # on it, so the way to a newer driver is a newer JetPack.
        fix = (
            f"On a Jetson the driver comes with JetPack (L4T): upgrade JetPack to a "
            f"release whose driver runs CUDA {cuda}, or install a torch "
            f"build for the CUDA this JetPack ships"
            + (f" ({nv.cuda_driver_version} or older)" if nv.cuda_driver_version else "")
            + "."
        )
        return RULES["DRV001"](title, evidence, fix + " " + what_fits(facts, tables, planned))
    if facts.system.hosted:
        return RULES["DRV001"](
            title, evidence, _hosted_fix(facts, cuda) + what_fits(facts, tables, planned)
        )
    fix = f"Upgrade the NVIDIA driver to {need} or newer"
    if verdict.full_from and verdict.full_from != need:
        fix += f" ({verdict.full_from} or newer for full CUDA {cuda} support)"
    fix += ", or install a torch build for an older CUDA."
    package, why = forward_compat_way_out(facts, tables, cuda)
    if package is not None:
        fix += f" Or keep the driver and {why}."
    else:
        evidence.append(why)
    fix += " Without a driver upgrade: " + what_fits(facts, tables, planned)
    return RULES["DRV001"](title, evidence, fix)


def _unverified_update(facts: Facts, verdict: DriverVerdict, evidence: List[str]) -> Finding:
    """DRV006: full support on the GA floor, while the bundled update may need more."""
    cuda = verdict.cuda
    return RULES["DRV006"](
        f"Not verified: whether driver {verdict.driver} covers the CUDA {cuda} update "
        f"torch {facts.torch.version} bundles",
        [*evidence, f"a later CUDA {cuda} update needs driver {verdict.unverified_below}"],
        f"The tables do not know which CUDA {cuda} update this build bundles; the GA "
        f"needs {verdict.full_from} (met), a later update {verdict.unverified_below}. "
        f"Driver {verdict.unverified_below} or newer is sure to give full support; until "
        "then, what needs the newer driver may fail (DRV002 explains).",
    )


def _minor_compat(
    facts: Facts, tables: Tables, verdict: DriverVerdict, evidence: List[str]
) -> Finding:
    """DRV002: the build runs through minor-version compatibility."""
    cuda = verdict.cuda
    if jetson_board(facts, tables):
        upgrade = (
            "For full support, upgrade JetPack (L4T), which brings the driver, to a release "
            f"for CUDA {cuda.major}.{cuda.minor} or newer."
        )
    elif verdict.full_from is not None:
        upgrade = f"For full support, upgrade the driver to {verdict.full_from} or newer."
    elif verdict.full_branch is not None:
        upgrade = f"For full support, upgrade to an R{verdict.full_branch} driver or newer."
    else:
        upgrade = "The driver that gives full support is not known (see above)."
    # NVIDIA's caveats (tables.caveats, quoted with sources) are the why; the fix says
    # what they mean for torch in two sentences and points to the page.
    return RULES["DRV002"](
        f"CUDA {cuda} runs on this driver only through minor-version compatibility",
        evidence,
        "Most of torch works; what does not: PTX that the driver must JIT-compile "
        "(torch.compile/Triton kernels, a GPU this build has no native kernels for) and "
        f"features that need the newer driver. {upgrade} Details: {MINOR_COMPAT_DOC}",
    )


MINOR_COMPAT_DOC = (
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
)


def _full_text(verdict: DriverVerdict) -> str:
    """Which driver gives full support for the build, and what that rests on."""
    if verdict.full_from is not None:
        return f"driver {verdict.full_from} or newer ({verdict.full_basis})"
    if verdict.full_branch is not None:
        return (
            f"an R{verdict.full_branch} driver or newer ({verdict.full_basis}; "
            "NVIDIA publishes no minimum version)"
        )
    return f"not known ({verdict.full_basis})"


_NVML = {
    "lib_rm_version_mismatch": (
        "NVML: Driver/library version mismatch",
        "The NVIDIA kernel module and the user-space driver libraries are different versions, "
        "usually after a driver upgrade without a reboot. Reboot, or unload and reload the nvidia "
        "kernel modules. Inside a container, the host's driver changed under it: restart the container.",
    ),
    "driver_not_loaded": (
        "NVML: the NVIDIA driver is not loaded",
        "The kernel module is not loaded: check `lsmod | grep nvidia`, Secure Boot signing of the "
        "module, and `dmesg` for errors; reinstall the driver if needed.",
    ),
    "no_permission": (
        "NVML: no permission to talk to the driver",
        "This user cannot open /dev/nvidia*: check the device permissions or the container's device rules.",
    ),
    "timeout": (
        "NVML did not answer: the driver or a GPU is hung",
        "A wedged GPU or driver: check `dmesg` for Xid errors; a GPU reset or reboot is usually needed.",
    ),
    "crashed": (
        "NVML crashed: the NVIDIA driver library ended the process that called it",
        "libnvidia-ml (the user-space driver) died inside the call named above, so nothing is "
        "known about the GPUs: check that the library matches the kernel module (`nvidia-smi`; "
        "in a container, that the host's driver libraries are mounted, not a copy in the image) "
        "and `dmesg` for Xid errors; reinstall the driver if it persists.",
    ),
    "no_answer": (
        "NVML ended without answering",
        "The process that called the NVIDIA driver library exited inside the call named above, "
        "so nothing is known about the GPUs: check that libnvidia-ml.so.1 is the driver's own "
        "(`ldconfig -p | grep nvidia-ml`, LD_LIBRARY_PATH, LD_PRELOAD) and that it matches the "
        "kernel module.",
    ),
    "unknown": (
        "NVML: Unknown Error",
        "In a container this often means it lost access to its GPUs (e.g. after a systemd daemon-reload "
        "on the host with cgroup v1): restart the container.",
    ),
}


def _nvml(facts: Facts) -> List[Finding]:
    nv = facts.nvidia
    if nv.nvml.ok or nv.nvml.error is None:
        return []
    simulated = any(o.startswith("nvidia.") and o != "nvidia.nvml" for o in facts.overrides)
    if simulated:  # NVML describes the real machine; the NVIDIA facts being judged are simulated
        return []
    evidence = [f"NVML error {nv.nvml.error}: {nv.nvml.message}", driver_text(facts)]
    if nv.device_nodes:
        evidence.append("devices: " + ", ".join(nv.device_nodes))
    error = nv.nvml.error
    if error == "library_not_found":
        if not has_nvidia_gpu(facts) and not nv.kernel_module:
            return []  # no NVIDIA driver here at all: nothing to complain about
        return [
            RULES["DRV004"](
                "The NVIDIA kernel driver is here, but its library libnvidia-ml.so.1 is not",
                evidence,
                "The user-space driver is missing. In a container, start it with the NVIDIA "
                "Container Toolkit (`docker run --gpus all`, or the nvidia runtime) so the driver "
                "libraries are mounted; on a host, reinstall the driver.",
            )
        ]
    if error == "bindings_missing":
        return [
            RULES["DRV004"](
                "NVML bindings (nvidia-ml-py) cannot be imported",
                evidence,
                "Reinstall envcheck: `pip install --force-reinstall torch-envcheck`.",
                severity="warning",
            )
        ]
    title, fix = _NVML.get(error, (f"NVML failed: {nv.nvml.message}", "See the NVML message."))
    severity = "warning" if error == "no_permission" else None
    return [RULES["DRV004"](title, evidence, fix, severity=severity)]


def _dropped_gpus(facts: Facts, tables: Tables) -> List[Finding]:
    findings = []
    for index, name, cc, family, branch in driver_drops(facts, tables):
        found = tables.family(cc)
        findings.append(
            RULES["DRV003"](
                f"Driver {facts.nvidia.driver_version} no longer supports {name} ({family})",
                [
                    f"GPU {index}: {name}, compute capability {cc}",
                    f"{family} GPUs are supported up to the R{branch} drivers",
                    driver_text(facts),
                ],
                _dropped_fix(tables, family, branch, found.last_cuda_major if found else None),
            )
        )
    return findings


def _dropped_fix(tables: Tables, family: str, branch: int, last_major: Optional[int]) -> str:
    """DRV003's way out. The last branch for a GPU may itself report a CUDA the GPU's
    toolkits no longer target (R580 reports CUDA 13.0; CUDA 13 toolkits dropped Maxwell,
    Pascal and Volta), so the advice names the build as well as the driver."""
    reports = tables.driver_branches.get(branch)
    text = f"Use an R{branch} driver, the last branch that supports {family} GPUs"
    if reports:
        text += f" (it reports CUDA {reports})"
    if last_major is None:
        return text + "."
    text += (
        f", with a torch build for CUDA {last_major}.x or older: CUDA {last_major + 1} "
        f"toolkits no longer target {family} GPUs, so builds for CUDA {last_major + 1} "
        "carry no kernels for them"
    )
    return text + "."
