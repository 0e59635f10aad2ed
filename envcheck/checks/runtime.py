"""What the deep probe saw: import failures, CUDA unavailable, shadowed libraries; and nvcc."""

from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

from packaging.version import Version

from ..compat import sm_name, toolkit_misses
from ..facts import Facts, RuntimeStatus, TorchRuntimeFacts
from ..findings import Finding
from ..probes import DEFAULT_TIMEOUT
from ..rules import RULES
from ..tables import Tables
from ..tables.model import parse_version
from ._util import (
    Planned,
    gpu_list,
    has_nvidia_gpu,
    replaces_torch,
    report_plan,
    torch_for_toolkit,
)

# (pattern in the import error, cause, fix)
_IMPORT_CAUSES: List[Tuple[re.Pattern[str], str, str]] = [
    (
        re.compile(
            r"(lib(?:cudnn|nvrtc|cudart|cublas|cublasLt|cusparse|cufft|curand|cusolver|nccl|nvJitLink|cupti)[\w.-]*): cannot open shared object file"
        ),
        "a CUDA library torch links against is missing: {lib}",
        "torch's CUDA wheels load these from the nvidia-* wheels pip installs with them. Reinstall "
        "torch with pip (not `--no-deps`), and check that LD_LIBRARY_PATH does not point at an "
        "incomplete CUDA install.",
    ),
    (
        re.compile(r"undefined symbol"),
        "a library of another version was loaded in place of torch's own",
        "Usually LD_LIBRARY_PATH or LD_PRELOAD puts a system cuDNN/NCCL/CUDA before torch's, or "
        "two torch installs are mixed. Unset LD_LIBRARY_PATH for a test, and run `envcheck probe` "
        "to see duplicate installs.",
    ),
    (
        re.compile(r"GLIBC_[\d.]+' not found|GLIBCXX_[\d.]+' not found"),
        "the system's C/C++ library is older than torch's wheels need",
        "Use a newer OS or container image (manylinux_2_28 wheels need glibc 2.28+), or an older torch.",
    ),
    (
        re.compile(r"No module named 'torch\._C'"),
        "Python found a torch source folder instead of the installed torch",
        "You are probably inside a PyTorch source checkout: run from another folder.",
    ),
]
_SHADOWABLE = re.compile(r"/lib(cudnn|nccl|cublas|cublasLt|cudart|nvrtc|nvJitLink)[\w.-]*\.so")


def check(facts: Facts, tables: Tables, planned: Optional[Planned] = None) -> List[Finding]:
    """``planned``: the report's install plan; TK001 judges nvcc against the torch it leaves."""
    findings = _import(facts) + _cuda_unavailable(facts) + _shadowed(facts) + _other_torch(facts)
    findings += _nvcc(facts, tables, report_plan(facts, tables, planned))
    return findings


def _import(facts: Facts) -> List[Finding]:
    rt = facts.torch_runtime
    if rt.status == RuntimeStatus.IMPORT_FAILED:
        cause, fix = _classify(rt.error or "")
        if facts.environment.get("LD_LIBRARY_PATH"):
            fix += f" LD_LIBRARY_PATH is set: {facts.environment['LD_LIBRARY_PATH']}"
        return [RULES["RUN001"](f"import torch failed: {cause}", [rt.error or ""], fix)]
    if (
        rt.status == RuntimeStatus.TIMED_OUT
        and rt.timeout_s is not None
        and rt.timeout_s < DEFAULT_TIMEOUT
    ):
        return [_short_timeout(rt)]
    if rt.status in (RuntimeStatus.CRASHED, RuntimeStatus.TIMED_OUT):
        what = "hung" if rt.status == RuntimeStatus.TIMED_OUT else "crashed"
        return [
            RULES["RUN002"](
                f"import torch {what} ({rt.error.splitlines()[0] if rt.error else rt.status})",
                [rt.error or "", f"last stage reached: {rt.stage}"],
                "A crash during import is usually a library conflict (LD_LIBRARY_PATH, LD_PRELOAD, "
                "a mixed install); a hang in torch.cuda.is_available() a wedged driver or GPU "
                "(check `nvidia-smi` and `dmesg`).",
            )
        ]
    return []


def _short_timeout(rt: TorchRuntimeFacts) -> Finding:
    """The import outlived a limit the user made shorter than the default (``--timeout
    0.5``): that says the import is slower than the limit, not that the driver is wedged (a
    first import after an install takes seconds to tens of seconds). Whether torch works is
    still unknown, so it stays RUN002; the fix is a longer --timeout, and the wedged-driver
    advice comes back if the default limit is also reached."""
    return RULES["RUN002"](
        f"import torch took longer than the given timeout ({rt.timeout_s:g} s) and was "
        "stopped: what torch loads is not known",
        [rt.error or "", f"last stage reached: {rt.stage}"],
        f"Give it longer: --timeout {DEFAULT_TIMEOUT:g} (the default) or more. If it is still "
        "stopped then, torch hangs: check `nvidia-smi` and `dmesg` for a wedged driver or GPU.",
    )


def _classify(error: str) -> Tuple[str, str]:
    for pattern, cause, fix in _IMPORT_CAUSES:
        match = pattern.search(error)
        if match:
            lib = match.group(1) if match.groups() else ""
            return cause.format(lib=lib), fix
    return (
        "see the error",
        "Reinstall torch in a fresh virtual environment to rule out a broken install.",
    )


def _cuda_unavailable(facts: Facts) -> List[Finding]:
    rt = facts.torch_runtime
    if (
        rt.status != RuntimeStatus.OK
        or not rt.cuda
        or rt.cuda_available is not False
        or not has_nvidia_gpu(facts)
    ):
        return []
    evidence = [f"torch {rt.version} (CUDA {rt.cuda})", gpu_list(facts), *rt.cuda_warnings]
    cause, fix = _why_unavailable(facts)
    return [RULES["RUN003"](f"torch cannot use the GPU: {cause}", evidence, fix)]


def _why_unavailable(facts: Facts) -> Tuple[str, str]:
    env, nv, sysf = facts.environment, facts.nvidia, facts.system
    visible = env.get("CUDA_VISIBLE_DEVICES")
    warnings = " ".join(facts.torch_runtime.cuda_warnings)
    if visible is not None and visible.strip() in ("", "-1", "none", "NoDevFiles"):
        return (
            f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU",
            "Unset CUDA_VISIBLE_DEVICES or list the GPUs to use (e.g. 0,1).",
        )
    if sysf.wsl == 1:
        return (
            "WSL 1 has no GPU support",
            "Convert the distribution to WSL 2: `wsl --set-version <distro> 2`.",
        )
    if "too old" in warnings:
        return (
            "the driver is too old for this build",
            "See DRV001: upgrade the driver or install an older CUDA build.",
        )
    if sysf.container and "/dev/nvidia0" not in nv.device_nodes:
        return (
            "the container was started without GPUs",
            "Start it with `docker run --gpus all` (or the nvidia runtime / a Kubernetes GPU request).",
        )
    if not nv.kernel_module and not nv.nvml.ok:
        return (
            "the NVIDIA kernel module is not loaded",
            "Load it (`sudo modprobe nvidia`) or reinstall the driver.",
        )
    return "CUDA failed to initialise", "See the warning torch gave above, and `nvidia-smi`."


def _shadowed(facts: Facts) -> List[Finding]:
    rt, t = facts.torch_runtime, facts.torch
    if rt.status != RuntimeStatus.OK or not rt.loaded_libraries or not t.location:
        return []
    site = os.path.dirname(t.location)
    outside = [p for p in rt.loaded_libraries if _SHADOWABLE.search(p) and not p.startswith(site)]
    if not outside or not t.cuda:
        return []
    return [
        RULES["RUN004"](
            "torch loaded CUDA libraries from outside its own install",
            [
                *outside,
                f"torch lives in {site}",
                f"LD_LIBRARY_PATH={facts.environment.get('LD_LIBRARY_PATH', '(unset)')}",
            ],
            "A system cuDNN/NCCL shadows the one torch was built with, a classic source of "
            '"undefined symbol" errors, wrong results or NCCL hangs. Remove those folders from '
            "LD_LIBRARY_PATH for torch jobs.",
        )
    ]


def _other_torch(facts: Facts) -> List[Finding]:
    rt, t = facts.torch_runtime, facts.torch
    if rt.status != RuntimeStatus.OK or not rt.file or not t.location:
        return []
    if os.path.dirname(rt.file) == t.location:
        return []
    return [
        RULES["RUN005"](
            "The torch that imports is not the installed one",
            [f"imported: {rt.file} ({rt.version})", f"installed: {t.location} ({t.version})"],
            "A torch folder earlier on sys.path (the current folder, PYTHONPATH) shadows the "
            "installed package.",
        )
    ]


def _nvcc(facts: Facts, tables: Tables, planned: Planned) -> List[Finding]:
    """TK001: nvcc against the torch this report leaves here. When the report's plan installs
    another torch (the installed one does not fit), extensions must match that one, so the
    toolkit advice names its CUDA, never the CUDA of a build the report replaces; a toolkit
    that cannot compile for a GPU here (12.6 for an sm_120) is never advised."""
    nvcc = parse_version(facts.toolkit.nvcc_version)
    installed = parse_version(facts.torch.cuda) if facts.torch.installed else None
    if nvcc is None or installed is None:
        return []
    plan = planned.plan
    replaced = replaces_torch(facts, planned)
    if replaced:
        assert plan.variant is not None
        cuda = plan.variant.cuda
        if cuda is None:  # the plan installs a CPU (or ROCm) build: no CUDA to match
            return []
        whose = f"; the torch this report installs ({plan.torch}+{plan.variant}) is built with"
    else:
        cuda = installed
        whose = ", torch was built with"
    if (nvcc.major, nvcc.minor) == (cuda.major, cuda.minor):
        return []
    major = nvcc.major != cuda.major
    evidence = [
        f"nvcc {nvcc}" + (f" at {facts.toolkit.nvcc_path}" if facts.toolkit.nvcc_path else ""),
        f"torch {facts.torch.version}",
    ]
    if replaced:
        evidence.append(f"the report's install plan: torch {plan.torch}+{plan.variant}")
    cannot = toolkit_misses(facts, tables, nvcc)  # the nvcc here itself
    toolkit = _toolkit_advice(facts, tables, planned, cuda, nvcc)
    return [
        RULES["TK001"](
            f"nvcc is CUDA {nvcc.major}.{nvcc.minor}{whose} CUDA {cuda}",
            evidence,
            (
                f"nvcc {nvcc} cannot compile for "
                + ", ".join(f"{n} ({sm_name(c)}), which needs {need}" for n, c, need in cannot)
                + ". "
                if cannot
                else "torch.utils.cpp_extension refuses to build with a different CUDA major "
                '("The detected CUDA version mismatches the version that was used to compile PyTorch"). '
                if major
                else "Building extensions works, with a warning. "
            )
            + toolkit,
            severity=None if major or cannot else "info",
        )
    ]


def _toolkit_advice(
    facts: Facts, tables: Tables, planned: Planned, cuda: Version, nvcc: Version
) -> str:
    """TK001's way out: the CUDA ``cuda`` toolkit (unless it cannot compile for a GPU here),
    or another torch build to match this nvcc when the report installs none."""
    misses = toolkit_misses(facts, tables, cuda)
    if misses:
        gpus = ", ".join(f"{n} ({sm_name(c)}) needs {need}" for n, c, need in misses)
        return (
            f"No CUDA {cuda} toolkit compiles for the GPUs here ({gpus}), so that is not the "
            "fix: a torch build that runs here comes first"
            + (
                "; the report's other findings say what stands in its way."
                if not planned.plan.ok
                else "."
            )
        )
    toolkit = f"Install the CUDA {cuda} toolkit and point CUDA_HOME at it"
    # Another build to match this nvcc, only when the report installs none: beside its
    # command, a second torch to install would be a second plan.
    other = None if planned.installs else torch_for_toolkit(facts, tables, nvcc, planned)
    return toolkit + (
        f", or install {other}, which "
        + ("this machine runs" if facts.source == "probe" else "fits what the report says")
        + f" (`envcheck install --variant {other.rsplit('+', 1)[1]}`)."
        if other
        else "."
        if planned.installs  # the report installs a torch: the toolkit for it is the fix
        else f". No torch build for CUDA {nvcc.major}.x is known to run on this machine, so "
        "the toolkit is the one to change."
    )
