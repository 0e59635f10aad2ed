"""The deep probe: import torch in a child process, with a timeout.

Only a real import tells whether torch's libraries load, whether CUDA
initialises and which cuDNN and NCCL the process really picked up. A broken
install can crash (a bad ``LD_LIBRARY_PATH`` cuDNN), abort or hang (a wedged
driver) during that import, so it happens in a child (``_child/torch_deep.py``)
that envcheck can time out and kill with everything it started.

``DeepProbe`` starts the child at once and is collected later: the probe
overlaps the second-long torch import with its own static work.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List, Optional

from .. import _proc
from .._child import torch_deep as child_script
from ..facts import (
    CudaDeviceFacts,
    FactsError,
    RuntimeStatus,
    TorchRuntimeFacts,
    convert,
    field_type,
)
from ..values import GpuArch, parse_gpu_arch
from .timeouts import DEFAULT_TIMEOUT

_STAGE_TEXT = {
    "start": "before Python started",
    "import": "during `import torch`",
    "cuda": "during torch.cuda.is_available()",
    "devices": "while querying CUDA devices",
    "libraries": "while reading loaded libraries",
    "done": "after the probe finished",
}
_SIMPLE = (
    "version",
    "file",
    "cuda",
    "hip",
    "cuda_available",
    "cuda_warnings",
    "device_count",
    "cudnn_version",
    "nccl_version",
    "bf16_supported",
    "mps_built",
    "mps_available",
    "xpu_available",
    "cpu_capability",
    "num_threads",
    "distributed_backends",
    "loaded_libraries",
    "step_errors",
)


class DeepProbe:
    """A running deep probe. ``result()`` waits for it (bounded by the timeout)."""

    def __init__(
        self,
        python: str,
        timeout: float = DEFAULT_TIMEOUT,
        env: Optional[Dict[str, str]] = None,
    ) -> None:
        self.timeout = timeout
        self._error: Optional[str] = None
        self._child: Optional[_proc.Child] = None
        try:
            # Marker lines are kept however much a broken torch prints around them.
            self._child = _proc.Child(
                [python, child_script.__file__], timeout=timeout, env=env, marker=child_script.MARK
            )
        except OSError as exc:
            self._error = f"could not start {python}: {exc.strerror or exc}"

    def result(self) -> TorchRuntimeFacts:
        if self._child is None:
            return TorchRuntimeFacts(
                status=RuntimeStatus.ERROR, error=self._error, timeout_s=self.timeout
            )
        return interpret(self._child.wait(), self.timeout)


def probe_torch_deep(
    python: str, timeout: float = DEFAULT_TIMEOUT, env: Optional[Dict[str, str]] = None
) -> TorchRuntimeFacts:
    return DeepProbe(python, timeout, env).result()


def describe_imported(torch: Any) -> TorchRuntimeFacts:
    """The deep probe's facts from a torch this process has already imported: the child's
    own queries (``describe``), run here. Only for a caller that imported torch itself;
    envcheck never imports torch in its own process."""
    records: Dict[str, Any] = {"stage": "start"}
    start = time.monotonic()
    try:
        # the child script is typed loosely (it runs in interpreters as old as 3.6)
        describe: Callable[[Any, Callable[..., None]], None] = child_script.describe
        describe(torch, lambda **record: records.update(record))
    except Exception as exc:  # a torch too odd for the queries: say so, as the child would
        facts = TorchRuntimeFacts(stage=str(records.get("stage")), status=RuntimeStatus.ERROR)
        facts.error = f"{type(exc).__name__}: {exc}"
        return facts
    facts = TorchRuntimeFacts(
        stage=str(records.get("stage")), duration_s=round(time.monotonic() - start, 3)
    )
    _fill(facts, records)
    facts.status = RuntimeStatus.OK
    return facts


def parse_records(stdout: str) -> Dict[str, Any]:
    """Merge the child's marker lines; anything else torch printed is ignored."""
    merged: Dict[str, Any] = {"stage": "start"}
    for line in stdout.splitlines():
        if not line.startswith(child_script.MARK):
            continue
        try:
            record = json.loads(line[len(child_script.MARK) :])
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            merged.update(record)
    return merged


def _tail(text: str, lines: int = 15) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])


def interpret(result: _proc.ChildResult, timeout: float) -> TorchRuntimeFacts:
    data = parse_records(result.stdout)
    stage = str(data.get("stage") or "start")
    facts = TorchRuntimeFacts(
        stage=stage,
        returncode=result.returncode,
        duration_s=round(result.duration_s, 3),
        timeout_s=timeout,
        signal=result.signal,
    )
    _fill(facts, data)
    where = _STAGE_TEXT.get(stage, f"at stage {stage}")

    if result.timed_out:
        facts.status = RuntimeStatus.TIMED_OUT
        facts.error = f"timed out after {timeout:g} s {where}; the child was killed"
    elif data.get("status") == "import_failed":
        error = str(data.get("error") or "import failed")
        not_installed = error.startswith("ModuleNotFoundError") and "'torch'" in error
        facts.status = RuntimeStatus.NOT_INSTALLED if not_installed else RuntimeStatus.IMPORT_FAILED
        facts.error = error
    elif result.signal:
        facts.status = RuntimeStatus.CRASHED
        detail = _tail(result.stderr)
        facts.error = f"killed by {result.signal} {where}" + (f"\n{detail}" if detail else "")
    elif stage != "done" or result.returncode != 0:
        facts.status = RuntimeStatus.CRASHED
        detail = _tail(result.stderr)
        facts.error = f"exited with code {result.returncode} {where}" + (
            f"\n{detail}" if detail else ""
        )
    else:
        facts.status = RuntimeStatus.OK
    return facts


def _fill(facts: TorchRuntimeFacts, data: Dict[str, Any]) -> None:
    """Copy what the child reported; values of the wrong type are dropped, not trusted."""
    for name in _SIMPLE:
        if name in data and hasattr(facts, name):
            try:
                setattr(facts, name, convert(field_type(TorchRuntimeFacts, name), data[name], name))
            except FactsError:
                continue
    facts.arch_list = _arch_list(data.get("arch_list"))
    devices = data.get("devices")
    if isinstance(devices, list):
        for raw in devices:
            try:
                facts.devices.append(convert(CudaDeviceFacts, raw, "devices"))
            except FactsError:
                continue


def _arch_list(raw: Any) -> List[GpuArch]:
    """The entries of get_arch_list() that parse as an arch or gfx target; others dropped."""
    arches: List[GpuArch] = []
    for text in raw if isinstance(raw, list) else []:
        try:
            arches.append(parse_gpu_arch(text))
        except (TypeError, ValueError):
            continue
    return arches
